"""The run's mode beside Run: Auto, RLM or Plain (RunConfig.mode, core/engine/mode.py).

A tool button with a menu, not a combo box: the row of Run and Stop has no room for a
combo's frame at 1024 px with History open."""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

# label, RunConfig.mode, what it does
MODE_CHOICES = (("Auto", "auto", "A plain call for documents that take at most a quarter of the root "
                                 "model's window, else the RLM (the transcript says which)"),
                ("RLM", "rlm", "Always the RLM: the documents stay in the REPL"),
                ("Plain", "direct", "Always one plain call with every document in the prompt"))


class ModeButton(QToolButton):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runMode")
        self.setAccessibleName("Run as")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self)
        group = QActionGroup(self)
        self._actions: dict[str, QAction] = {}
        for label, mode, tip in MODE_CHOICES:
            action = QAction(label, self, checkable=True)
            action.setToolTip(tip)
            action.setData(mode)
            action.triggered.connect(lambda _=False, m=mode: self.set_mode(m))
            group.addAction(action)
            menu.addAction(action)
            self._actions[mode] = action
        menu.setToolTipsVisible(True)
        self.setMenu(menu)
        self._mode = "auto"
        self.set_mode("auto")

    def mode(self) -> str:
        return self._mode

    def set_mode(self, mode: str | None) -> None:
        mode = mode if mode in self._actions else "auto"
        self._mode = mode
        action = self._actions[mode]
        action.setChecked(True)
        self.setText(action.text())
        self.setToolTip(f"Run as: {action.text()}. {action.toolTip()}")
