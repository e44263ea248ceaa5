"""CostPreview: a line next to Run with what the run will likely cost, and,
while it runs, the projected cost to finish.

    preview.set_estimate("~52k tokens in · $0.02 to $0.09", tooltip)
    preview.set_projection("projected $0.05 to finish (spent $0.02)", level="warning")
    preview.clear()
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from ui.highlight import is_dark
from ui.theme import PALETTES


class CostPreview(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("costPreview")
        self.setAccessibleName("Cost preview")
        self.setWordWrap(True)
        self.estimate_text = ""
        self.projection_text = ""
        self.level = "normal"
        # Its room is kept while it is empty: the panel does not jump when the line comes.
        policy = self.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.setSizePolicy(policy)
        self.setMinimumHeight(self.fontMetrics().lineSpacing() * 2 + 2)
        self.hide()

    def set_estimate(self, text: str, tooltip: str = "") -> None:
        self.estimate_text = text
        self.projection_text = ""
        self._show(text, tooltip, "normal")

    def set_projection(self, text: str, tooltip: str = "", level: str = "normal") -> None:
        self.projection_text = text
        self._show(text, tooltip, level)

    def clear(self) -> None:
        self.estimate_text = self.projection_text = ""
        self.setText("")
        self.hide()

    def _show(self, text: str, tooltip: str, level: str) -> None:
        palette = PALETTES["dark" if is_dark() else "light"]
        self.level = level
        color = {"warning": palette["warning"], "error": palette["error"]}.get(level, palette["muted"])
        self.setStyleSheet(f"QLabel {{ color: {color}; }}")
        self.setText(text)
        self.setToolTip(tooltip)
        self.setVisible(bool(text))
