"""CompareView: two runs side by side and their first point of difference.

    view = CompareView(parent)
    view.set_comparison(ComparisonShown(left_title="How many ERROR lines… · 1 Dec 14:03", right_title="…",
                        rows=[("Answer", "42", "41", False), ("Cost", "$0.01", "$0.02", False)],
                        first_difference="turn 2, cell 1: the output differs", answers=("42", "41")))

A window of its own; the glue (app/trust_glue.py) fills it from core.trust.compare.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QDialog, QHBoxLayout, QHeaderView, QLabel, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from ui.answer_text import AnswerText

from ui.highlight import is_dark
from ui.theme import PALETTES
from ui.plain_text import plain


@dataclass(frozen=True)
class ComparisonShown:
    left_title: str
    right_title: str
    rows: list[tuple[str, str, str, bool]] = field(default_factory=list)   # label, left, right, same
    first_difference: str = ""        # "" when the runs do not differ
    answers: tuple[str, str] = ("", "")


class CompareView(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareView")
        self.setWindowTitle("Compare runs")
        self.setModal(False)
        self.resize(900, 640)
        layout = QVBoxLayout(self)
        self.difference_label = QLabel(self)
        self.difference_label.setObjectName("firstDifference")
        self.difference_label.setWordWrap(True)
        self.difference_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.difference_label.setStyleSheet("QLabel { font-weight: bold; }")
        layout.addWidget(self.difference_label)
        self.table = QTableWidget(0, 3, self)
        self.table.setAccessibleName("Figures of both runs")
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        layout.addWidget(self.table, 1)
        answers = QHBoxLayout()
        self.left_answer = AnswerText(self)       # Markdown rendered, as on the answer card
        self.right_answer = AnswerText(self)
        for edit, name in ((self.left_answer, "Answer of the first run"),
                           (self.right_answer, "Answer of the second run")):
            edit.setReadOnly(True)
            edit.setAccessibleName(name)
            answers.addWidget(edit)
        layout.addLayout(answers, 1)
        self.comparison: ComparisonShown | None = None

    def set_comparison(self, comparison: ComparisonShown) -> None:
        self.comparison = comparison
        palette = PALETTES["dark" if is_dark() else "light"]
        self.setWindowTitle(f"Compare: {comparison.left_title} / {comparison.right_title}")
        self.table.setHorizontalHeaderLabels(["", comparison.left_title, comparison.right_title])
        self.table.setRowCount(len(comparison.rows))
        differ = QBrush(QColor(palette["warning_bg"]))
        for r, (label, left, right, same) in enumerate(comparison.rows):
            for c, text in enumerate((label, left, right)):
                item = QTableWidgetItem(text)
                item.setToolTip(plain(text))
                if not same:
                    item.setBackground(differ)
                self.table.setItem(r, c, item)
        if comparison.first_difference:
            self.difference_label.setText(f"First difference: {comparison.first_difference}")
        else:
            self.difference_label.setText("No difference: the runs did the same steps.")
        self.left_answer.set_answer(comparison.answers[0])
        self.right_answer.set_answer(comparison.answers[1])

    def row_texts(self) -> list[tuple[str, str, str]]:
        return [tuple(self.table.item(r, c).text() for c in range(3))  # type: ignore[misc]
                for r in range(self.table.rowCount())]
