"""An answer shown as the answer card shows it: Markdown rendered (headings, emphasis,
lists, tables), read-only, selectable; used by the comparison views.

    box = AnswerText(parent); box.set_answer("## Outage\\n**09:42** to 12:52")
    box.toPlainText()          # 'Outage\\n09:42 to 12:52' (the rendered text)
    box.answer                 # the Markdown as given (what Copy copies)
    one_line("## Outage **09:42**")   # 'Outage 09:42' (for a table cell)

Model output is hostile: raw HTML in an answer is shown as text, never interpreted
(MarkdownNoHTML), as in the exports (core/exports/answer_render.py).
"""

from __future__ import annotations

from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QTextBrowser, QWidget

FEATURES = (QTextDocument.MarkdownFeature.MarkdownDialectGitHub
            | QTextDocument.MarkdownFeature.MarkdownNoHTML)


class AnswerText(QTextBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setOpenLinks(False)           # a citation or a link in an answer opens nothing here
        self.answer = ""

    def set_answer(self, text: str) -> None:
        self.answer = text or ""
        self.document().setMarkdown(self.answer, FEATURES)


def one_line(text: str | None, limit: int = 120) -> str:
    """The rendered answer on one line, cut at `limit` characters with "…"."""
    doc = QTextDocument()
    doc.setMarkdown(text or "", FEATURES)
    plain = " ".join(doc.toPlainText().split())
    return plain if len(plain) <= limit else plain[:limit].rstrip() + "…"
