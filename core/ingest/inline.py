"""Small plain-text files, read in the app's own process instead of a worker.

Parsers of binary formats (pdfium, the Office and archive readers) run in
worker processes (workers.py), because one of them can crash, hang or balloon
on a hostile file. Reading plain text is decoding bytes: pure Python with a
bounded cost. Starting the first worker costs about half a second (the fork
server imports every parser library), which is most of the time a question over
a few text files waits before its first model request. So a file that is text
by its name and first bytes (text, markdown, code, CSV, TSV) and at most
INLINE_MAX_BYTES is read here, in a thread of the ingestion; everything else,
and any file when a test supplies its own extractor, goes to the workers.
The result is the same Document (or Skip) the worker would have sent.
"""

from __future__ import annotations

from core.ingest.archives import looks_like_archive
from core.ingest.extract import TEXT_FORMATS, extract_data, read_bytes
from core.ingest.model import ExtractError, FileEntry, IngestOptions, Job
from core.ingest.sniff import HEAD_BYTES, classify
from core.ingest.workers import Outcome, guarded

INLINE_MAX_BYTES = 2 << 20


def plain_text(entry: FileEntry, options: IngestOptions) -> bool:
    """True when `entry` is read here rather than in a worker."""
    if entry.size > INLINE_MAX_BYTES or (options.archives and looks_like_archive(entry.path)):
        return False
    try:
        with open(entry.source_path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return False                 # the worker reports why it cannot be read
    try:
        return classify(entry.path, head) in TEXT_FORMATS
    except ExtractError:
        return False                 # unsupported, encrypted...: the worker says so, as before


def read_if_plain(entry: FileEntry, max_bytes: int, options: IngestOptions) -> Outcome | None:
    """("doc", Document) or ("skip", reason, detail), as a worker would answer; None when the
    file is not small plain text (a worker reads it). Blocking: call it in a thread."""
    if not plain_text(entry, options):
        return None
    return guarded(entry.source_path, lambda: extract_data(
        entry.path, entry.source_path, read_bytes(entry.source_path, max_bytes), entry.path,
        Job(options, entry.path)))
