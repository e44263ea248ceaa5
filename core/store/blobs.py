"""Document texts stored once: compressed, keyed by the sha256 of their content.

A 40 MB context costs its compressed size once, however many turns or runs use it.
Span tables (offset -> address, for citations) are stored the same way.
"""

from __future__ import annotations

import hashlib
import json
import time
import zlib
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import sqlite_utils
import zstandard

# Zstandard level 1. The sources of a run are compressed beside the run and, what is left,
# between its last event and the process's exit, on a 2-core machine. Measured on the 40 MB
# corpus of tests/bench/bench_reference.py (40 files of mixed log, CSV and prose lines):
# zstd level 1 0.15 s of CPU, ratio 0.52; zlib level 1 (the codec before) 0.79-0.91 s, ratio
# 0.55; zstd 2 0.22 s, 0.41. Decompressing: zstd 0.05 s, zlib 0.28 s. Blobs stored with zlib
# (or lzma, none) are read as they are: the codec is stored with each blob.
CODEC = "zstd"
ZSTD_LEVEL = 1
# Compressed bytes of source texts stored per transaction. Each batch is held until it is
# written: the 40 MB run's engine peaked at 96 MB with 16 MB batches, 80 MB with 4 MB (and
# 75 MB with 2 MB; the same exit time; load 8, speed-round-7.md).
SOURCE_BLOB_BATCH = 4 * 1024 * 1024
# A text read back from a file (the document's own, or the sidecar a big file's text was
# written to, core/ingest/bigfile.py) past this many characters is not copied into the store:
# compressing it would hold it whole in the engine beside the REPL's copy.
BLOB_MAX_CHARS = 32 * 1024 * 1024


def encode(data: bytes) -> tuple[str, bytes]:
    return CODEC, zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data)


def decode(codec: str, content: bytes) -> bytes:
    if codec == "zstd":
        # the size is in the frame's header (ZstdCompressor.compress writes it)
        return zstandard.ZstdDecompressor().decompress(content)
    if codec == "zlib":
        return zlib.decompress(content)
    if codec == "lzma":
        import lzma
        return lzma.decompress(content)
    if codec == "none":
        return bytes(content)
    raise ValueError(f"unknown blob codec {codec!r}")


def has_blob(db: sqlite_utils.Database, sha: str) -> bool:
    return db.execute("SELECT 1 FROM blobs WHERE sha256 = ?", [sha]).fetchone() is not None


def stored_blobs(db: sqlite_utils.Database, shas: Iterable[str | None]) -> set[str]:
    """Those of `shas` that are stored, asked 500 at a time."""
    return found_in(db, "SELECT sha256 FROM blobs WHERE sha256 IN ({})", shas)


def found_in(db: sqlite_utils.Database, sql: str, values: Iterable[str | None]) -> set[str]:
    """The first column of `sql` (its `{}` the placeholders of an IN list) for `values`,
    asked 500 at a time."""
    wanted = sorted({value for value in values if value})
    found: set[str] = set()
    for at in range(0, len(wanted), 500):
        chunk = wanted[at:at + 500]
        found.update(row[0] for row in db.execute(sql.format(", ".join("?" * len(chunk))), chunk))
    return found


@dataclass(frozen=True)
class Blob:
    sha256: str
    codec: str
    size: int          # uncompressed bytes
    content: bytes

    @classmethod
    def of(cls, data: bytes, sha: str | None = None) -> "Blob":
        codec, content = encode(data)
        return cls(sha or hashlib.sha256(data).hexdigest(), codec, len(data), content)


def put_blob(db: sqlite_utils.Database, blob: Blob) -> str:
    """Store `blob` unless one with its sha256 is already there; returns the sha256."""
    db.execute("INSERT OR IGNORE INTO blobs (sha256, codec, size, content, created_utc) VALUES (?, ?, ?, ?, ?)",
               [blob.sha256, blob.codec, blob.size, blob.content, time.time()])
    return blob.sha256


def get_blob(db: sqlite_utils.Database, sha: str) -> bytes | None:
    row = db.execute("SELECT codec, content FROM blobs WHERE sha256 = ?", [sha]).fetchone()
    return None if row is None else decode(row[0], row[1])


def spans_bytes(spans: Any) -> bytes | None:
    if not spans:
        return None
    rows = [[s.start, s.end, s.address] if hasattr(s, "address") else list(s) for s in spans]
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True)
class PreparedSource:
    """One sources row plus the blobs it needs, computed outside any transaction."""
    row: dict[str, Any]
    blobs: tuple[Blob, ...]            # compressed already; stored if missing


def iter_sources(documents: Iterable[Any], skipped: Iterable[Any],
                 known: Any = lambda sha: False) -> Iterator[PreparedSource]:
    """Hash and compress each source outside the write transaction (a 40 MB context does not
    hold the database's write lock while it is compressed), one source at a time, so a caller
    that stores each one's blobs as it comes holds one document's text and blob at a time,
    not a corpus of them. A document
    that knows its text_sha256 and whose blob is stored is not read at all (a read-back
    Document, core/ingest/text_back.py, would read its file)."""
    position = -1
    for position, doc in enumerate(documents):
        text_sha = getattr(doc, "text_sha256", None)
        blobs: list[Blob] = []
        chars = getattr(doc, "chars", None)
        kept_in_file = getattr(doc, "held", True) is False and bool(text_sha) and (chars or 0) > BLOB_MAX_CHARS
        if not kept_in_file and (not text_sha or not known(text_sha)):
            text = doc.text
            data = text.encode("utf-8")          # encoded once, for the hash and the blob
            text_sha = text_sha or hashlib.sha256(data).hexdigest()
            chars = chars or len(text)
            del text
            if not known(text_sha):
                blobs.append(Blob.of(data, text_sha))
            del data
        spans = spans_bytes(getattr(doc, "spans", None))
        spans_sha = None
        if spans is not None:
            spans_sha = hashlib.sha256(spans).hexdigest()
            if not known(spans_sha):
                blobs.append(Blob.of(spans, spans_sha))
        yield PreparedSource(row={
            "position": position, "status": "read", "path": str(doc.path),
            "source_path": _opt_str(getattr(doc, "source_path", None)),
            "format": getattr(doc, "format", None), "size": getattr(doc, "size", None),
            "chars": chars, "sha256": getattr(doc, "sha256", None),
            "text_sha256": text_sha, "spans_sha256": spans_sha, "reason": None, "detail": None,
        }, blobs=tuple(blobs))
    for position, skip in enumerate(skipped, start=position + 1):
        yield PreparedSource(row={
            "position": position, "status": "skipped", "path": str(skip.path),
            "source_path": _opt_str(getattr(skip, "source_path", None)),
            "format": None, "size": getattr(skip, "size", None) or None, "chars": None,
            "sha256": None, "text_sha256": None,
            "spans_sha256": None, "reason": getattr(skip, "reason", None),
            "detail": getattr(skip, "detail", None),
        }, blobs=())


def write_sources(db: sqlite_utils.Database, run_id: str, prepared: list[PreparedSource]) -> None:
    """Replace the sources rows of `run_id`; call inside a transaction."""
    for item in prepared:
        for blob in item.blobs:
            put_blob(db, blob)
    db.execute("DELETE FROM sources WHERE run_id = ?", [run_id])
    columns = ["run_id", *prepared[0].row] if prepared else []
    if prepared:
        db.conn.executemany(
            f"INSERT INTO sources ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            [[run_id, *item.row.values()] for item in prepared])


def collect_garbage(db: sqlite_utils.Database) -> int:
    """Delete blobs no sources row refers to; call inside a transaction."""
    cursor = db.execute("""
        DELETE FROM blobs WHERE sha256 NOT IN (
            SELECT text_sha256 FROM sources WHERE text_sha256 IS NOT NULL
            UNION SELECT spans_sha256 FROM sources WHERE spans_sha256 IS NOT NULL)""")
    return cursor.rowcount


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)
