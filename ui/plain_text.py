"""Model, cell and file-name text in places where Qt guesses the format.

A tooltip, a QLabel left in its default AutoText format, a message box: Qt takes a text
for rich text when `Qt.mightBeRichText` says so (a known tag, or "&lt;", on its first
line). A file named `<img src=...>`, an answer or a cell's output starting with
`<a href=...>` would then be drawn as an image or a link. `plain(text)` gives the text
Qt shows literally in any of those places (control characters escaped as well, as
core/control_chars.py does); `markdown_html(md)` renders Markdown with its raw HTML shown
as text, for labels that show model replies as Markdown.
"""

from __future__ import annotations

import html

from PySide6.QtGui import QTextDocument, Qt

from core.control_chars import escape_controls

_NO_HTML = QTextDocument.MarkdownFeature(QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value
                                         | QTextDocument.MarkdownFeature.MarkdownNoHTML.value)


def plain(text: str) -> str:
    """`text` as Qt shows it literally where it guesses the format. Text Qt would not take
    for rich text comes back unchanged (controls escaped); other text is escaped and
    wrapped in a paragraph that keeps its spaces and line breaks."""
    text = escape_controls(text or "")
    if not Qt.mightBeRichText(text):
        return text
    body = html.escape(text, quote=False).replace("\n", "<br>")
    return f"<p style='white-space:pre-wrap'>{body}</p>"


def markdown_html(md: str) -> str:
    """Markdown as rich text, any raw HTML in it kept as literal text (Qt's Markdown
    reader would otherwise pass `<img src=...>` and `<a href=...>` through)."""
    doc = QTextDocument()
    doc.setMarkdown(md, _NO_HTML)
    return doc.toHtml()
