"""What reading a file produced, kept so that an unchanged file is not read again.

    cache = ExtractCache(store)
    result = await ingest(paths, options, cache=cache)     # result.unchanged: files not read again
    store.save_sources(run_id, documents)                  # remembers what was read (extracts table)

A file counts as unchanged when its size and modification time are those of the last
read; a file whose time changed but whose size did not is hashed, and the same bytes
count as unchanged too (a `touch`, a copy that kept the content). Only whole files
are kept, not archive members, and not documents with parsed tables (`tables` are not
stored). The text and spans are the blobs the sources already store, so this costs a
row per file; a row whose blob was collected (its runs deleted) is a miss. An unchanged
plain-text file is not read at all: its Document reads the text back from the file when
asked (core/ingest/text_back.py), with the width and tokens this row kept. Rows written
before those columns existed decode the file again (small files) or read the blob.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from typing import Any, Iterable

from core.ingest.extract import TEXT_FORMATS
from core.ingest.inline import INLINE_MAX_BYTES as PLAIN_AGAIN_MAX_BYTES
from core.ingest.model import Document, ExtractError, Span
from core.ingest.text_back import READER
from core.store.blobs import BLOB_MAX_CHARS

_HASH_CHUNK = 1 << 20
log = logging.getLogger(__name__)


class ExtractCache:
    def __init__(self, store: Any, spool_dir: str = "") -> None:
        self.store = store
        self.spool_dir = spool_dir            # where big files' texts are (core/ingest/bigfile.py)

    def lookup(self, entry: Any) -> Document | None:
        """The Document an earlier read of `entry` (a FileEntry) produced, or None. Runs in a
        thread of the ingestion: it may hash the file."""
        row = self.store.extract_row(entry.source_path)
        if row is None or row[0] != entry.size:
            return None
        size, mtime_ns, sha, fmt, chars, text_sha, spans_sha, ocr, width, tokens = row
        if mtime_ns != entry.mtime_ns:
            if _file_sha256(entry.source_path) != sha:
                return None
            self.store.touch_extract(entry.source_path, entry.mtime_ns)
        kept = _kept_in_file(self.spool_dir, fmt, sha, text_sha, width, int(chars))
        if kept is not None:
            return self._kept(entry, row, kept)
        if fmt in TEXT_FORMATS and not spans_sha and width and self.store.has_blob(text_sha):
            # Its text is read back from the file when asked (core/ingest/text_back.py): nothing
            # is read or decoded here.
            return Document(path=entry.path, source_path=entry.source_path, format=fmt, text="",
                            chars=int(chars), size=int(size), sha256=sha, mtime_ns=entry.mtime_ns,
                            unchanged=True, width=int(width), text_sha256=text_sha,
                            tokens=None if tokens is None else int(tokens)).without_text(READER)
        if fmt in TEXT_FORMATS and not spans_sha and size <= PLAIN_AGAIN_MAX_BYTES \
                and self.store.has_blob(text_sha):
            again = _plain_again(entry.source_path, size)
            if again is not None and len(again) == int(chars):
                return Document(path=entry.path, source_path=entry.source_path, format=fmt, text=again,
                                chars=int(chars), size=int(size), sha256=sha, mtime_ns=entry.mtime_ns,
                                unchanged=True, text_sha256=text_sha)
        text = self.store.blob(text_sha)
        spans = self._spans(spans_sha)
        if text is None or spans is None:
            return None
        return Document(path=entry.path, source_path=entry.source_path, format=fmt,
                        text=text.decode("utf-8"), chars=int(chars), size=int(size), sha256=sha,
                        spans=spans, ocr_pages=tuple(json.loads(ocr or "[]")), mtime_ns=entry.mtime_ns,
                        unchanged=True, text_sha256=text_sha)

    def _spans(self, spans_sha: str | None) -> tuple[Span, ...] | None:
        """The spans stored under `spans_sha` (() for none), or None when their blob is gone."""
        if not spans_sha:
            return ()
        raw = self.store.blob(spans_sha)
        if raw is None:
            return None
        return tuple(Span(int(a), int(b), str(c)) for a, b, c in json.loads(raw))

    def _kept(self, entry: Any, row: tuple, reader: Any) -> Document | None:
        """A document whose text is read back from its sidecar (core/ingest/bigfile.py), or from
        a big file itself: nothing is read here but its spans."""
        size, _mtime, sha, fmt, chars, text_sha, spans_sha, _ocr, width, tokens = row
        spans = self._spans(spans_sha)
        if spans is None:
            return None
        return Document(path=entry.path, source_path=entry.source_path, format=fmt, text="",
                        chars=int(chars), size=int(size), sha256=sha, spans=spans, mtime_ns=entry.mtime_ns,
                        unchanged=True, width=int(width), text_sha256=text_sha,
                        tokens=None if tokens is None else int(tokens)).without_text(reader)


def _kept_in_file(spool: str, fmt: str, sha: str, text_sha: str, width: int | None, chars: int) -> Any:
    """The reader of a text kept outside the engine: its sidecar when it is there (what was
    extracted from a PDF, Office file, mailbox...), or a big file itself when its bytes are the
    text (the store did not copy it); None otherwise (the paths below decide)."""
    from core.ingest.bigfile import STREAM_FORMATS, SidecarText, sidecar_of, spool_dir
    if not width or not text_sha:
        return None
    sidecar = sidecar_of(spool or spool_dir(), text_sha)
    if os.path.exists(sidecar):
        return SidecarText(sidecar)
    big = chars > BLOB_MAX_CHARS and fmt in STREAM_FORMATS and fmt != "mbox"
    return READER if big and text_sha == sha else None


def row(db: Any, source_path: str) -> tuple | None:
    return db.execute("SELECT size, mtime_ns, sha256, format, chars, text_sha256, spans_sha256, "
                      "ocr_pages_json, width, tokens FROM extracts WHERE source_path = ?", [source_path]).fetchone()


def touch(db: Any, source_path: str, mtime_ns: int) -> None:
    db.execute("UPDATE extracts SET mtime_ns = ?, updated_utc = ? WHERE source_path = ?",
               [mtime_ns, time.time(), source_path])


def remember(db: Any, documents: Iterable[Any], text_shas: dict[str, tuple[str, str | None]]) -> None:
    """Rows for the whole files among `documents` (inside the sources' write transaction);
    `text_shas`: source_path -> (text_sha256, spans_sha256) as the sources stored them."""
    now = time.time()
    for doc in documents:
        mtime = getattr(doc, "mtime_ns", 0)
        shas = text_shas.get(getattr(doc, "source_path", "") or "")
        if not mtime or shas is None or getattr(doc, "tables", ()) or not getattr(doc, "sha256", None):
            continue
        db.execute("INSERT OR REPLACE INTO extracts (source_path, size, mtime_ns, sha256, format, chars, "
                   "text_sha256, spans_sha256, ocr_pages_json, updated_utc, width, tokens) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [doc.source_path, doc.size, mtime, doc.sha256, doc.format, doc.chars, shas[0], shas[1],
                    json.dumps(list(getattr(doc, "ocr_pages", ()) or ())), now,
                    getattr(doc, "width", 0) or None, getattr(doc, "tokens", None)])


def _plain_again(path: str, size: int) -> str | None:
    """An unchanged plain-text file decoded again as its first read did (the same decoder):
    reading the file and decoding it is about 5x faster than the compressed blob (no hash,
    no database read of the text). None when it cannot be (the blob is used then)."""
    from core.ingest.formats.plain import decode_text
    try:
        with open(path, "rb") as f:
            data = f.read(size + 1)
        if len(data) != size:
            return None
        return decode_text(data)
    except (OSError, ExtractError):
        return None


def _file_sha256(path: str) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_HASH_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()
