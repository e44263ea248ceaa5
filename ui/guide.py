"""The in-app guide: caps and choosing models, in plain words.

The text is resources/guide.md with the default caps filled in
(`{depth}`, `{iterations}`, `{cap}`) and the user's own figures (`{your_numbers}`,
from core.fitness.guide_numbers)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

from ui.dollar_spin import dollar_text
from ui.window_fit import sized_to_screen


def guide_text(defaults: dict | None = None) -> str:
    from core.paths import resources_dir
    defaults = defaults or {}
    cost = defaults.get("max_cost_usd")
    values = {"depth": defaults.get("max_depth", 1), "iterations": defaults.get("max_iterations", 20),
              "cap": f"${dollar_text(cost)}" if cost else "no cap",
              "your_numbers": defaults.get("your_numbers") or "*Your numbers appear here after your first "
                              "evaluation with a direct call (or your first runs).*"}
    text = (resources_dir() / "guide.md").read_text(encoding="utf-8")
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return text


class GuideDialog(QDialog):
    def __init__(self, defaults: dict | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Guide: caps and models")
        self.setObjectName("guideDialog")
        sized_to_screen(self, 640, 680)
        layout = QVBoxLayout(self)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(False)
        self.browser.setMarkdown(guide_text(defaults))
        self.browser.setAccessibleName("Guide")
        layout.addWidget(self.browser)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def text(self) -> str:
        return self.browser.toPlainText()
