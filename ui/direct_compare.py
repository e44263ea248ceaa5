"""DirectCompareView: the RLM's answer beside one plain call's answer to the same question.

    view = DirectCompareView(parent)
    view.set_sides(rlm={"title", "answer", "figures"}, direct={"title", "answer", "figures"}, note="...")

Filled by app/models_glue.py when "Also ask directly" is ticked in the question panel.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QDialog, QGridLayout, QLabel, QWidget

from ui.answer_text import AnswerText
from ui.window_fit import sized_to_screen


class DirectCompareView(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("directCompareView")
        self.setWindowTitle("RLM beside a plain call")
        self.setModal(False)
        sized_to_screen(self, 900, 520)
        grid = QGridLayout(self)
        self.note = QLabel()
        self.note.setWordWrap(True)
        grid.addWidget(self.note, 0, 0, 1, 2)
        self.titles, self.answers, self.figures = [], [], []
        for col, name in enumerate(("RLM", "Direct call")):
            title, answer, figures = QLabel(name), AnswerText(self), QLabel()
            title.setStyleSheet("QLabel { font-weight: bold; }")
            answer.setAccessibleName(f"Answer of the {name}")
            figures.setWordWrap(True)
            grid.addWidget(title, 1, col)
            grid.addWidget(answer, 2, col)
            grid.addWidget(figures, 3, col)
            self.titles.append(title)
            self.answers.append(answer)
            self.figures.append(figures)
        grid.setRowStretch(2, 1)

    def set_sides(self, rlm: dict[str, Any], direct: dict[str, Any], note: str = "") -> None:
        for i, side in enumerate((rlm, direct)):
            self.titles[i].setText(side.get("title", ""))
            self.answers[i].set_answer(side.get("answer") or "")
            self.figures[i].setText(side.get("figures", ""))
        self.note.setText(note)

    def texts(self) -> tuple[str, str]:
        """Both answers as given (Markdown)."""
        return self.answers[0].answer, self.answers[1].answer
