"""The toolbar's Recent menu: folders read before and questions asked before."""

from __future__ import annotations

import os

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMenu
from ui.plain_text import plain

MAX_SHOWN = 10


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


class RecentMenu(QMenu):
    folder_chosen = Signal(str)
    question_chosen = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__("Recent", parent)
        self.setObjectName("recentMenu")
        self.set_items([], [])

    def set_items(self, folders: list[str], questions: list[str]) -> None:
        self.clear()
        self.addSection("Folders and files")
        shown = [f for f in folders if os.path.exists(f)][:MAX_SHOWN]
        if not shown:
            self.addAction("(none yet)").setEnabled(False)
        for path in shown:
            action = self.addAction(_short(path))
            action.setToolTip(plain(path))
            action.setData(("folder", path))
            action.triggered.connect(lambda _=False, p=path: self.folder_chosen.emit(p))
        self.addSection("Questions")
        if not questions:
            self.addAction("(none yet)").setEnabled(False)
        for question in questions[:MAX_SHOWN]:
            action = self.addAction(_short(question))
            action.setToolTip(plain(question))
            action.setData(("question", question))
            action.triggered.connect(lambda _=False, q=question: self.question_chosen.emit(q))

    def entries(self) -> list[tuple[str, str]]:
        """(kind, value) of every entry that can be chosen."""
        return [a.data() for a in self.actions() if a.data()]
