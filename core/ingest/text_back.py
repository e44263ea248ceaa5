"""Plain-text documents that hold no text: it is read back from the file when asked.

    doc = release(doc, entry)      # the same Document, its text dropped when it can be read back
    doc.text                       # reads the file again: decoded as the first read did

A whole plain-text file (text, Markdown, code, CSV, TSV) is its own best copy of its text:
reading and decoding 1 MB from the page cache takes about a millisecond, and a corpus of
them then costs the engine no memory beside the copy the REPL worker holds. Each read
checks the file's size and modification time against those of the first read (the test
the extract cache uses for "unchanged"); a file that changed or went raises
DocumentChanged, which names it and says what to do, rather than giving a different text.
Documents of other formats (PDF, Office, mail, archive members) keep their text: their
extraction is costly and not always repeatable.
"""

from __future__ import annotations

import hashlib
import os
import sys
from typing import Any

from core.ingest.extract import TEXT_FORMATS
from core.ingest.formats.plain import decode_text
from core.ingest.model import Document, DocumentChanged, ExtractError

_WIDE_HEAD = sys.getsizeof("\xe9") - 2   # a non-ASCII str's header: its size less (1 + 1) x 1 byte


def width_of(text: str) -> int:
    """Bytes per character CPython stores `text` with (1, 2 or 4), read from its size in
    memory (sys.getsizeof), so no text is scanned beyond str.isascii."""
    if text.isascii():
        return 1
    return (sys.getsizeof(text) - _WIDE_HEAD) // (len(text) + 1)


class FileText:
    """Reads a released document's text back from its file (picklable: no state)."""

    def __call__(self, doc: Document) -> str:
        path = doc.source_path
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                if st.st_size != doc.size or st.st_mtime_ns != doc.mtime_ns:
                    raise DocumentChanged(_changed(doc, "its size or modification time differs"))
                data = f.read(doc.size + 1)
        except DocumentChanged:
            raise
        except OSError as exc:
            raise DocumentChanged(_changed(doc, exc.strerror or str(exc))) from None
        try:
            text = decode_text(data) if len(data) == doc.size else None
        except ExtractError:
            text = None
        if text is None or len(text) != doc.chars:
            raise DocumentChanged(_changed(doc, "it no longer reads as the same text"))
        return text

    def head(self, doc: Document, n: int) -> str:
        """The text's first `n` characters: read alone when the file is the text's UTF-8 (same
        sha256), else the whole text read back and cut."""
        if doc.sha256 and doc.text_sha256 == doc.sha256:
            try:
                with open(doc.source_path, "rb") as f:
                    return f.read(4 * n).decode("utf-8", "ignore")[:n]
            except OSError as exc:
                raise DocumentChanged(_changed(doc, exc.strerror or str(exc))) from None
        return self(doc)[:n]

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, FileText)

    def __hash__(self) -> int:
        return hash(FileText)


def _changed(doc: Document, why: str) -> str:
    return (f"{doc.path} changed on disk since it was read ({why}); "
            "add it to Sources again to read its new text")


READER = FileText()


def releasable(doc: Any, source_path: str, size: int, mtime_ns: int) -> bool:
    """True when `doc` is a whole plain-text file on disk whose text the file gives back."""
    return (isinstance(doc, Document) and doc.held and bool(mtime_ns) and doc.mtime_ns == mtime_ns
            and doc.source_path == source_path and doc.size == size and doc.format in TEXT_FORMATS
            and not doc.spans and not doc.ocr_pages)


def release(doc: Any, source_path: str, size: int, mtime_ns: int) -> Any:
    """`doc` without its text when the file can give it back (see the module docstring), with
    what the engine needs of the text kept beside it: width and estimated tokens."""
    if not releasable(doc, source_path, size, mtime_ns):
        return doc
    from core.token_count import text_tokens
    text = doc.text
    width = doc.width or width_of(text)
    return doc.but(width=width, text_sha256=doc.text_sha256 or text_sha256(text),
                   tokens=doc.tokens if doc.tokens is not None else text_tokens(text)
                   ).without_text(READER)


def text_sha256(text: str) -> str:
    """sha256 of the text's UTF-8 ("" for text UTF-8 cannot encode)."""
    try:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:
        return ""


def check_unchanged(documents: Any) -> None:
    """Raise DocumentChanged for the first document that reads its text back from a file
    that changed since (a stat each: the run is refused before it starts, in words)."""
    for doc in documents:
        if not isinstance(doc, Document) or doc.held:
            continue
        try:
            st = os.stat(doc.source_path)
        except OSError as exc:
            raise DocumentChanged(_changed(doc, exc.strerror or str(exc))) from None
        if st.st_size != doc.size or st.st_mtime_ns != doc.mtime_ns:
            raise DocumentChanged(_changed(doc, "its size or modification time differs"))
