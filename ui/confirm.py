"""One way to ask the user before something they would not want done silently
(replacing or clearing their sources). Tests set `ask` to answer for the user.

    choice = confirm.ask(parent, "Clear all sources?", "The 12 files ...",
                         [("clear", "Clear"), ("cancel", "Cancel")])
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QMessageBox, QWidget

Choices = list[tuple[str, str]]      # (answer id, button label); the last one is the safe one


def _ask_with_box(parent: QWidget | None, title: str, text: str, choices: Choices,
                  destructive: bool = False) -> str:
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    box.setText(f"<b>{title}</b>")
    box.setInformativeText(text)
    buttons = {}
    for i, (answer, label) in enumerate(choices):
        role = QMessageBox.ButtonRole.RejectRole if i == len(choices) - 1 else QMessageBox.ButtonRole.AcceptRole
        buttons[box.addButton(label, role)] = answer
    safe = next(b for b, a in buttons.items() if a == choices[-1][0])
    first = next(iter(buttons))
    box.setDefaultButton(safe if destructive else first)
    box.setEscapeButton(safe)
    box.exec()
    return buttons.get(box.clickedButton(), choices[-1][0])


ask: Callable[..., str] = _ask_with_box     # (parent, title, text, choices, destructive=False)
