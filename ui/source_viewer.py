"""SourceViewer: a run's documents, read-only, scrolled to a cited passage
with the passage highlighted.

    viewer = SourceViewer(parent)
    viewer.set_documents(docs, window_of)   # objects with .path and .text
                                            # (.text is read when a document is opened)
    viewer.show_passage("notes.txt", 120, 180, label="notes.txt, line 4")
    viewer.show_missing("notes.txt:line 99", "the document has 12 lines")

`window_of(doc)`, when given, returns a big document's text to read by offsets (len and
[start:end]: core/ingest/text_window.TextWindow) or None: such a text is never read whole;
the viewer shows EXCERPT characters around the passage (from the start when there is none)
and says which. Offsets are Python characters; Qt counts UTF-16 units, so a text with
characters outside the BMP (emoji) is highlighted by converted positions.

A window of its own (not modal), so the user can keep it beside the answer.
"""

from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontDatabase, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import (QComboBox, QDialog, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton,
                               QTextEdit, QVBoxLayout, QWidget)

from ui.highlight import is_dark
from ui.theme import PALETTES
from ui.window_fit import sized_to_screen


EXCERPT = 200_000           # characters of a big document shown around its passage


def _qt_position(text: str, offset: int) -> int:
    """A Python offset into `text` as Qt's (UTF-16 units)."""
    head = text[:offset]
    return offset if head.isascii() else len(head.encode("utf-16-le")) // 2


class SourceViewer(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sourceViewer")
        self.setWindowTitle("Source")
        self.setModal(False)
        sized_to_screen(self, 760, 620)
        self._docs: dict[str, Any] = {}       # path -> document; its text is read when opened
        self._shown = ""                      # the text shown of the open document (current_path)
        self._window_of: Any = None           # doc -> its text read by offsets, or None
        self._window: Any = None              # the open document's, when it has one
        self.shown_from = 0                   # where _shown starts in the document's text
        self.excerpt = ""                     # which part of a big document is shown (the note says)
        self.current_path: str | None = None
        self.passage: tuple[int, int] | None = None
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.doc_combo = QComboBox(self)
        self.doc_combo.setAccessibleName("Document")
        self.doc_combo.currentTextChanged.connect(self._on_doc_chosen)
        self.next_button = QPushButton("Show passage", self)
        self.next_button.setToolTip("Scroll back to the cited passage")
        self.next_button.clicked.connect(self.scroll_to_passage)
        top.addWidget(QLabel("Document", self))
        top.addWidget(self.doc_combo, 1)
        top.addWidget(self.next_button)
        layout.addLayout(top)
        self.note = QLabel(self)
        self.note.setObjectName("sourceNote")
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.note)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("sourceText")
        self.text.setAccessibleName("Document text")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout.addWidget(self.text, 1)

    # ---- content -------------------------------------------------------
    def set_documents(self, documents: Sequence[Any], window_of: Any = None) -> None:
        self._docs = {d.path: d for d in documents}
        self._window_of = window_of
        self._window, self.shown_from, self.excerpt = None, 0, ""
        self.doc_combo.blockSignals(True)
        self.doc_combo.clear()
        self.doc_combo.addItems(list(self._docs))
        self.doc_combo.blockSignals(False)
        self.current_path = None
        self._shown = ""
        self.passage = None
        self.text.clear()

    def documents(self) -> list[str]:
        return list(self._docs)

    def show_passage(self, path: str, start: int, end: int, *, label: str = "") -> bool:
        """Open `path` and highlight text[start:end]; False if the document is unknown."""
        if path not in self._docs:
            self.show_missing(label or path, f"the document {path!r} is not among this run's documents")
            return False
        if not self._open(path, start, end):
            return False
        length = self.shown_from + len(self._shown)
        start, end = max(self.shown_from, min(start, length)), max(self.shown_from, min(end, length))
        self.passage = (start, max(start, end))
        self._set_note(f"Cited: {label or path}" + (f" {self.excerpt}" if self.excerpt else ""), "ok")
        self._highlight()
        self.scroll_to_passage()
        return True

    def show_missing(self, citation: str, reason: str, path: str | None = None) -> None:
        """A citation that points to nothing: say so (and show its document if known)."""
        self.passage = None
        if path and path in self._docs:
            self._open(path)
        self.text.setExtraSelections([])
        self._set_note(f"\u26a0 [doc:{citation}] points to nothing: {reason}", "error")

    def selected_text(self) -> str:
        """The highlighted passage's text ("" without one)."""
        if self.passage is None or self.current_path is None:
            return ""
        start, end = self.passage
        return self._shown[start - self.shown_from:end - self.shown_from]

    # ---- internals -----------------------------------------------------
    def _open(self, path: str, start: int = 0, end: int = 0) -> bool:
        """Show `path`'s text (read now: a document may read it back from its file), or of a
        big one the EXCERPT around [start, end); False, with the reason in the note, when it
        cannot be read."""
        doc = self._docs[path]
        if path != self.current_path:
            self._window = self._window_of(doc) if self._window_of is not None else None
        window = self._window if self._window is not None and len(self._window) > EXCERPT else None
        if window is not None:
            lo = max(0, min(start - max(EXCERPT - (end - start), 0) // 2, len(window) - EXCERPT))
            if path == self.current_path and lo == self.shown_from:
                return True
            try:
                text = window[lo:lo + EXCERPT]
            except OSError as exc:
                return self._unreadable(exc)
            self.shown_from = lo
        else:
            if path == self.current_path:
                return True
            try:
                text = doc.get("text", "") if isinstance(doc, dict) else doc.text
            except OSError as exc:           # core.ingest.model.DocumentChanged: the file changed
                return self._unreadable(exc)
            self.shown_from = 0
        self.current_path, self._shown = path, text
        self.doc_combo.blockSignals(True)
        self.doc_combo.setCurrentText(path)
        self.doc_combo.blockSignals(False)
        self.text.setPlainText(text)
        self.setWindowTitle(f"Source: {path}")
        self.excerpt = "" if window is None else (
            f"Showing characters {self.shown_from + 1:,}-{self.shown_from + len(text):,} of "
            f"{len(window):,} (a big document is shown around its passage).")
        return True

    def _unreadable(self, exc: OSError) -> bool:
        self.current_path, self._shown, self.passage, self.shown_from, self.excerpt = None, "", None, 0, ""
        self.text.clear()
        self._set_note(f"\u26a0 {exc}", "error")
        return False

    def _on_doc_chosen(self, path: str) -> None:
        if path and path in self._docs:
            self.passage = None
            if self._open(path):
                self.text.setExtraSelections([])
                self._set_note(self.excerpt, "ok")

    def _highlight(self) -> None:
        palette = PALETTES["dark" if is_dark() else "light"]
        selection = QTextEdit.ExtraSelection()
        fmt = QTextCharFormat()
        background = QColor(palette["warning"])
        background.setAlpha(95)                          # clearly marked, text still legible
        fmt.setBackground(background)
        fmt.setForeground(QColor(palette["fg"]))
        fmt.setProperty(QTextFormat.Property.FullWidthSelection, False)
        selection.format = fmt
        cursor = QTextCursor(self.text.document())
        start, end = self._qt_range()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        self.text.setExtraSelections([selection])

    def scroll_to_passage(self) -> None:
        if self.passage is None:
            return
        cursor = QTextCursor(self.text.document())
        cursor.setPosition(self._qt_range()[0])
        self.text.setTextCursor(cursor)
        self.text.centerCursor()

    def _qt_range(self) -> tuple[int, int]:
        """The passage as positions in the shown text, in Qt's units."""
        start, end = self.passage or (self.shown_from, self.shown_from)
        shown = self._shown
        return (_qt_position(shown, start - self.shown_from), _qt_position(shown, end - self.shown_from))

    def _set_note(self, text: str, level: str) -> None:
        palette = PALETTES["dark" if is_dark() else "light"]
        self.note.setText(text)
        self.note.setProperty("level", level)
        color = palette["error"] if level == "error" else palette["muted"]
        self.note.setStyleSheet(f"QLabel {{ color: {color}; }}")
        self.note.setVisible(bool(text))
