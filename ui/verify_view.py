"""VerifyView: the outcome of re-executing a stored run with every sub-call
answered from the record: each cell same or different, the final answer, and
the first divergence.

    view.set_running("run a1b2")
    view.set_result(VerifyShown(matches=True, cells=[("turn 1 · cell 1", True, "")], ...))
    view.set_failed("the worker could not start")
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QDialog, QHeaderView, QLabel, QPlainTextEdit, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from ui.highlight import is_dark
from ui.theme import PALETTES
from ui.plain_text import plain
from ui.window_fit import sized_to_screen


@dataclass(frozen=True)
class VerifyShown:
    matches: bool
    cells: list[tuple[str, bool, str]] = field(default_factory=list)   # label, same, detail
    answer_same: bool | None = None
    first_divergence: str = ""       # where and what ("" when it matches)
    summary: str = ""                # one line, e.g. "7 cells, all the same; the answer is the same"


class VerifyView(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("verifyView")
        self.setWindowTitle("Verify by re-execution")
        self.setModal(False)
        sized_to_screen(self, 760, 520)
        layout = QVBoxLayout(self)
        self.verdict = QLabel("", self)
        self.verdict.setObjectName("verifyVerdict")
        self.verdict.setWordWrap(True)
        self.verdict.setStyleSheet("QLabel { font-weight: bold; font-size: 110%; }")
        layout.addWidget(self.verdict)
        self.summary = QLabel("", self)
        self.summary.setObjectName("hint")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.table = QTableWidget(0, 3, self)
        self.table.setHorizontalHeaderLabels(["Cell", "Result", "Detail"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.table, 1)
        self.divergence = QPlainTextEdit(self)
        self.divergence.setObjectName("firstDivergence")
        self.divergence.setReadOnly(True)
        self.divergence.setAccessibleName("First divergence")
        self.divergence.hide()
        layout.addWidget(self.divergence)
        self.result: VerifyShown | None = None

    def set_running(self, what: str) -> None:
        self.result = None
        self.setWindowTitle(f"Verify {what}")
        self.verdict.setText(f"Re-executing {what} with the recorded sub-call answers…")
        self.verdict.setStyleSheet("QLabel { font-weight: bold; font-size: 110%; }")
        self.summary.setText("No model is called and nothing is spent.")
        self.table.setRowCount(0)
        self.divergence.hide()

    def set_result(self, result: VerifyShown) -> None:
        self.result = result
        palette = PALETTES["dark" if is_dark() else "light"]
        color = palette["ok"] if result.matches else palette["error"]
        self.verdict.setStyleSheet(f"QLabel {{ font-weight: bold; font-size: 110%; color: {color}; }}")
        self.verdict.setText("Verified: the re-execution matches the record." if result.matches
                             else "Diverges: the re-execution does not match the record.")
        self.summary.setText(result.summary)
        self.table.setRowCount(len(result.cells))
        bad = QBrush(QColor(palette["error_bg"]))
        for r, (label, same, detail) in enumerate(result.cells):
            items = [QTableWidgetItem(label), QTableWidgetItem("same" if same else "different"),
                     QTableWidgetItem(detail)]
            for c, item in enumerate(items):
                if not same:
                    item.setBackground(bad)
                item.setToolTip(plain(detail) if c == 2 else "")
                self.table.setItem(r, c, item)
        self.divergence.setPlainText(f"First divergence: {result.first_divergence}"
                                     if result.first_divergence else "")
        self.divergence.setVisible(bool(result.first_divergence))

    def set_failed(self, message: str) -> None:
        palette = PALETTES["dark" if is_dark() else "light"]
        self.verdict.setStyleSheet(f"QLabel {{ font-weight: bold; color: {palette['error']}; }}")
        self.verdict.setText(f"Verification could not run: {message}")

    def cell_results(self) -> list[tuple[str, str]]:
        return [(self.table.item(r, 0).text(), self.table.item(r, 1).text())
                for r in range(self.table.rowCount())]
