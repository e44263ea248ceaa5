"""A section that folds: a header button with an arrow and a one-line summary,
and a body shown only when the section is open (the question panel's advanced
settings)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QSizePolicy, QToolButton, QVBoxLayout, QWidget


class Fold(QWidget):
    toggled = Signal(bool)

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._title = title
        self._summary = ""
        self.header = QToolButton()
        self.header.setObjectName("foldHeader")
        self.header.setCheckable(True)
        self.header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header.setAutoRaise(True)
        self.header.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.header.setMinimumWidth(60)        # a long summary is cut, it does not widen the column
        self.header.setAccessibleName(title)
        self.header.toggled.connect(self._on_toggled)
        self.body = QWidget()
        self.body.setObjectName("foldBody")
        self.body_layout = QVBoxLayout(self.body)
        self.body_layout.setContentsMargins(14, 0, 0, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.header)
        layout.addWidget(self.body)
        self.body.hide()
        self._update_header()

    def is_open(self) -> bool:
        return self.header.isChecked()

    def set_open(self, open_: bool) -> None:
        self.header.setChecked(bool(open_))

    def set_summary(self, text: str) -> None:
        """What the folded body holds, in a line ("depth 1 · no cap · 20 iterations")."""
        self._summary = text
        self._update_header()

    def summary(self) -> str:
        return self._summary

    def _on_toggled(self, open_: bool) -> None:
        self.body.setVisible(open_)
        self._update_header()
        self.toggled.emit(open_)

    def _update_header(self) -> None:
        open_ = self.header.isChecked()
        self.header.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        text = self._title if open_ or not self._summary else f"{self._title}: {self._summary}"
        self.header.setText(text)
        self.header.setToolTip(("Hide " if open_ else "Show ") + self._title.lower())
