"""CompareView: two runs as an analyst compares them.

    view = CompareView(parent)
    view.set_comparison(ComparisonShown(
        RunHeading("Run A", "How many ERROR lines?", "1 Dec 2025, 14:03:27", "lab/coder-7b"), RunHeading(...),
        rows=[("Cost", "$0.01", "$0.02", False)], first_difference="turn 2, cell 1: the output differs",
        answers=("42", "41"), diff="--- run A, turn 2, …", notes=()))

Each run is named by its question, start time and models above its answer (rendered
Markdown, as on the answer card); the figures are a table with every row in view; the
first difference is said in turn names, and the code diff waits folded under "Code".
A window of its own; the glue (app/compare_shown.py) fills it from core.trust.compare.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFontDatabase
from PySide6.QtWidgets import (QDialog, QGridLayout, QHeaderView, QLabel, QPlainTextEdit, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from ui.answer_text import AnswerText
from ui.fold import Fold
from ui.highlight import is_dark
from ui.plain_text import plain
from ui.theme import PALETTES
from ui.window_fit import sized_to_screen


@dataclass(frozen=True)
class RunHeading:
    name: str            # "Run A"
    question: str
    when: str = ""       # "5 Dec 2026, 03:11:42"
    models: str = ""     # "lab/coder-7b (root) · lab/small-3b (sub)"

    def title(self) -> str:
        """One line for a window title or a column: 'Run A · question…'."""
        question = self.question if len(self.question) <= 60 else self.question[:58].rstrip() + "…"
        return f"{self.name} · {question}"


@dataclass(frozen=True)
class ComparisonShown:
    left: RunHeading
    right: RunHeading
    rows: list[tuple[str, str, str, bool]] = field(default_factory=list)   # label, left, right, same
    first_difference: str = ""        # "" when the runs do not differ
    answers: tuple[str, str] = ("", "")
    diff: str = ""                    # the unified diff at the first difference ("" if none)
    notes: tuple[str, ...] = ()       # forks and follow-ups, by name


class CompareView(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareView")
        self.setWindowTitle("Compare runs")
        self.setModal(False)
        sized_to_screen(self, 980, 720)
        layout = QVBoxLayout(self)
        sides = QGridLayout()
        self.headings = (QLabel(self), QLabel(self))
        self.left_answer = AnswerText(self)       # Markdown rendered, as on the answer card
        self.right_answer = AnswerText(self)
        for column, (heading, edit, name) in enumerate(
                ((self.headings[0], self.left_answer, "Answer of run A"),
                 (self.headings[1], self.right_answer, "Answer of run B"))):
            heading.setObjectName("compareHeading")
            heading.setWordWrap(True)
            heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            heading.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
            edit.setReadOnly(True)
            edit.setAccessibleName(name)
            sides.addWidget(heading, 0, column)
            sides.addWidget(edit, 1, column)
            sides.setColumnStretch(column, 1)
        sides.setRowStretch(1, 1)
        layout.addLayout(sides, 3)

        self.difference_label = QLabel(self)
        self.difference_label.setObjectName("firstDifference")
        self.difference_label.setWordWrap(True)
        self.difference_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.difference_label)

        self.table = QTableWidget(0, 3, self)
        self.table.setAccessibleName("Figures of both runs")
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout.addWidget(self.table)

        self.code = Fold("Code")
        self.code.setObjectName("compareCode")
        self.diff_text = QPlainTextEdit(self)
        self.diff_text.setReadOnly(True)
        self.diff_text.setAccessibleName("The code where the runs first differ")
        self.diff_text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.diff_text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff_text.setMinimumHeight(160)
        self.code.body_layout.addWidget(self.diff_text)
        self.code.set_open(False)
        layout.addWidget(self.code)
        self.comparison: ComparisonShown | None = None

    def set_comparison(self, comparison: ComparisonShown) -> None:
        self.comparison = comparison
        palette = PALETTES["dark" if is_dark() else "light"]
        left, right = comparison.left, comparison.right
        self.setWindowTitle(f"Compare: {left.title()}  /  {right.title()}")
        for label, run in zip(self.headings, (left, right)):
            parts = [f"<b>{escape(run.name)}</b>" + (f" · {escape(run.when)}" if run.when else ""),
                     f"<b>{escape(run.question)}</b>", escape(run.models)]
            label.setText("<br>".join(p for p in parts if p))
            label.setToolTip(plain(f"{run.name}: {run.question}\n{run.when}\n{run.models}"))
        self.table.setHorizontalHeaderLabels(["", left.name, right.name])
        self.table.setRowCount(len(comparison.rows))
        differ = QBrush(QColor(palette["warning_bg"]))
        for r, (label, a, b, same) in enumerate(comparison.rows):
            for c, text in enumerate((label, a, b)):
                item = QTableWidgetItem(text)
                item.setToolTip(plain(text))
                if not same:
                    item.setBackground(differ)
                self.table.setItem(r, c, item)
        self.table.resizeRowsToContents()
        rows = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setFixedHeight(rows + self.table.horizontalHeader().sizeHint().height()
                                  + 2 * self.table.frameWidth() + 2)     # every row in view
        if comparison.first_difference:
            text = f"First difference: {comparison.first_difference}."
        else:
            text = "No difference: the runs did the same steps."
        if comparison.notes:
            text += " " + " ".join(comparison.notes)
        self.difference_label.setText(text)
        self.left_answer.set_answer(comparison.answers[0])
        self.right_answer.set_answer(comparison.answers[1])
        self.diff_text.setPlainText(comparison.diff)
        self.code.set_summary(comparison.first_difference if comparison.diff else "the same")
        self.code.setVisible(bool(comparison.diff))
        self.code.set_open(False)

    def row_texts(self) -> list[tuple[str, str, str]]:
        return [tuple(self.table.item(r, c).text() for c in range(3))  # type: ignore[misc]
                for r in range(self.table.rowCount())]
