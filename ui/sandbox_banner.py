"""A persistent status-bar badge: the REPL sandbox of this session lacks a layer.

The engine says so in a run's events (a warning Notice whose text starts with
core.repl.sandbox_report.NOTICE_PREFIX); app/ glue hands that text here. The badge
stays for the rest of the session (the host will not grow the missing layer), and
its tooltip says what is missing and what it means.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel
from ui.plain_text import plain


class SandboxBadge(QLabel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("sandboxBadge")
        self.setAccessibleName("Sandbox warning")
        self.message = ""
        self.hide()

    def show_message(self, message: str) -> None:
        """`message`: the engine's notice, e.g. "The REPL sandbox is incomplete on linux
        (missing: namespaces). namespaces: model code shares the host's network ..."."""
        self.message = message
        missing = message.partition("(missing: ")[2].partition(")")[0]
        self.setText(plain(f"⚠ Sandbox incomplete{': ' + missing if missing else ''}"))
        self.setToolTip(plain(message + "\nSettings can require the full sandbox (require_full_sandbox)."))
        self.setAccessibleDescription(message)
        self.show()
