"""The shapes ingestion hands out: documents, skips, progress, options, results.

Everything here is a frozen dataclass so it can cross process boundaries
(workers pickle Documents back to the parent) and be shared without copies.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Skip reasons. Each skip carries one of these plus a human-readable detail.
BINARY = "binary"              # content is not text and no extractor claims it
UNSUPPORTED = "unsupported"    # a known format we do not read (images, archives, .doc ...)
ENCRYPTED = "encrypted"        # password-protected PDF / Office file / DRM EPUB
CORRUPT = "corrupt"            # the parser refused it; detail has the parser's message
TOO_LARGE = "too_large"        # over a limit the user set, or an archive/zip that inflates too far
EMPTY = "empty"                # zero bytes, or only whitespace
NO_TEXT = "no_text"            # a valid document without extractable text (scanned PDF)
TIMEOUT = "timeout"            # the parser ran past per_file_timeout_s; its worker was killed
UNREADABLE = "unreadable"      # the OS refused (permissions, dangling symlink, vanished file)
IGNORED = "ignored"            # hidden/junk/.rlmignore; reported only with report_ignored=True
SYMLINK_LOOP = "symlink_loop"  # a directory reached again through a symlink
OUTSIDE_ROOT = "outside_root"  # a symlink that leads out of the dropped folder
CRASHED = "crashed"            # the parser killed its worker process (segfault, OOM)
DUPLICATE = "duplicate"        # same bytes (sha256) as a document read earlier; detail names it
UNSAFE_NAME = "unsafe_name"    # an archive member named "../x" or "/etc/x", or a link member

REASONS = (BINARY, UNSUPPORTED, ENCRYPTED, CORRUPT, TOO_LARGE, EMPTY, NO_TEXT, TIMEOUT,
           UNREADABLE, IGNORED, SYMLINK_LOOP, OUTSIDE_ROOT, CRASHED, DUPLICATE, UNSAFE_NAME)

FORMATS = ("text", "markdown", "code", "csv", "tsv", "json", "jsonl", "html", "xml", "pdf",
           "docx", "pptx", "xlsx", "eml", "mbox", "epub", "image")

DUPLICATE_PREFIX = "duplicate of "   # Skip(reason=DUPLICATE).detail = DUPLICATE_PREFIX + path


@dataclass(frozen=True, slots=True)     # slots: a mailbox has 200,000 of them
class Span:
    """Where a stretch of Document.text came from: [start, end) char offsets."""
    start: int
    end: int
    address: str        # "page 3", "sheet Sales", "slide 4", "message 7 (Subject)", "chapter 2"


@dataclass(frozen=True)
class Table:
    """A CSV/TSV file or one XLSX sheet as data: `rows[i]` is spreadsheet row i + 2
    (the header is row 1), each as long as `header`. Cells: None (empty), int,
    float, bool or str; dates and times as ISO strings."""
    path: str
    sheet: str | None   # None for CSV/TSV
    header: tuple
    rows: tuple

    def to_dict(self) -> dict:
        return {"path": self.path, "sheet": self.sheet, "header": list(self.header),
                "rows": [list(row) for row in self.rows]}


@dataclass(frozen=True)
class Document:
    path: str           # POSIX path relative to the dropped root; unique within one ingest.
                        # Inside an archive: "export.zip/inbox/2024-03.mbox"
    source_path: str    # absolute path on disk (archive members: the archive's path + "/" + member)
    format: str         # one of FORMATS
    text: str
    chars: int
    size: int           # bytes on disk (archive members: inflated bytes)
    sha256: str         # of the file's bytes (archive members and .gz files: the inflated bytes)
    spans: tuple[Span, ...] = ()   # empty for plain text (lines are computed from the text)
    ocr_pages: tuple[int, ...] = ()     # 1-based pages whose text was read by OCR
    tables: tuple[Table, ...] = ()      # CSV/TSV/XLSX as parsed tables (see Table)
    duplicates: tuple[str, ...] = ()    # paths of other files with the same bytes (not read again)
    mtime_ns: int = 0                   # the file's modification time when it was read (0: a member)
    unchanged: bool = False             # taken from an earlier read of the same file, not read again
    width: int = 0                      # bytes per character CPython holds `text` with (1, 2, 4; 0: unknown)
    text_sha256: str = ""               # of text.encode("utf-8"), when known ("": not computed)
    tokens: int | None = None           # core.token_count.text_tokens(text), when known

    # `text` is held, or read back when asked (core/ingest/text_back.py): a document whose
    # text can be had again from its file keeps none in memory, so the engine holds no
    # second copy of a corpus the REPL worker holds. Each read of `doc.text` of such a
    # document reads the file again (and raises DocumentChanged if the file changed since).

    def __getattr__(self, name: str) -> Any:     # only for attributes the instance lacks
        if name == "text":
            reader = self.__dict__.get("_text_from")
            if reader is not None:
                return reader(self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def held(self) -> bool:
        """True when the text is in memory, False when it is read back on demand."""
        return "text" in self.__dict__

    @property
    def text_reader(self) -> Callable[["Document"], str] | None:
        """What reads a read-back document's text (e.g. core/ingest/bigfile.py's SidecarText),
        or None when the text is held."""
        return self.__dict__.get("_text_from")

    def without_text(self, reader: Callable[["Document"], str]) -> "Document":
        """This document holding no text: `reader(doc)` gives it back when asked (a picklable
        object: Documents cross process boundaries)."""
        new = copy.copy(self)
        object.__delattr__(new, "text")
        object.__setattr__(new, "_text_from", reader)
        return new

    def let_go_of_text(self, reader: Callable[["Document"], str]) -> None:
        """In place: this document holds its text no more; `reader(doc)` gives it back when
        asked. Only for a copy its maker held the text in for a while (a grid cell's
        `but(text=...)`): whoever still refers to the copy (a finished run's objects, which
        may wait for the cyclic garbage collector) then holds no text."""
        self.__dict__.pop("text", None)
        object.__setattr__(self, "_text_from", reader)

    def but(self, **changes: Any) -> "Document":
        """dataclasses.replace that keeps a read-back document's text unread."""
        new = copy.copy(self)
        for name, value in changes.items():
            if name not in self.__dataclass_fields__:
                raise TypeError(f"Document has no field {name!r}")
            object.__setattr__(new, name, value)
        if "text" in changes:
            new.__dict__.pop("_text_from", None)
        return new


class DocumentChanged(OSError):
    """A document's text was to be read back from its file, and the file changed (or went)
    since it was read."""


@dataclass(frozen=True)
class Skip:
    path: str
    source_path: str
    reason: str         # one of REASONS
    detail: str = ""
    size: int = 0       # bytes on disk, when known (0 for what could not be stat'ed)


@dataclass(frozen=True)
class Progress:
    files_done: int
    files_total: int    # grows while the walk is still counting
    bytes_done: int
    bytes_total: int
    current: str | None  # path of the file that just finished (None while counting)
    step: str = ""       # what a worker is doing inside a file ("scan.pdf: OCR page 3 of 12")


@dataclass(frozen=True)
class IngestOptions:
    max_file_bytes: int = 0          # largest file on disk read (0: any size; ask/eval --max-file-mb)
    max_member_bytes: int = 200 * 1024 * 1024   # an archive member or a .gz/.bz2/.xz inflated
    per_file_timeout_s: float = 60.0  # without progress: a big file read steadily is never cut
    workers: int = 0                 # 0 = os.cpu_count()
    include_hidden: bool = False
    follow_symlinks: bool = True     # never loops, never outside the dropped root
    report_ignored: bool = False     # list hidden/junk/.rlmignore'd files as Skip("ignored")
    ocr: bool = False                # read scanned PDF pages and images with tesseract (slow)
    ocr_language: str = "eng"        # tesseract language(s), e.g. "eng+deu"
    ocr_dpi: int = 300               # OCR render resolution of pages whose scan dpi is unknown
    archives: bool = True            # read .zip/.tar/.gz/.bz2/.xz as folders
    max_archive_depth: int = 3       # archives inside archives, this many levels deep
    max_archive_bytes: int = 4 * 1024 ** 3   # all members of one dropped archive, inflated
    max_archive_ratio: int = 200     # inflated / compressed beyond this (past 16 MiB) = a bomb
    tables: bool = True              # CSV/TSV/XLSX also as parsed tables (Document.tables)
    max_table_cells: int = 5_000_000  # per document; bigger ones stay text only
    stream_min_bytes: int = 32 * 1024 * 1024   # text, CSV, logs, mbox this big: read a piece at a time
    spool_dir: str = ""              # where a big file's extracted text is kept ("": data folder's texts/)


def too_large_detail(size: int, limit: int) -> str:
    """A file on disk over the user's own limit, and how to lift it."""
    return (f"{size:,} bytes, over the {limit:,} byte limit set for files; raise it with "
            f"--max-file-mb (0: any size) or in Settings > Documents > Largest file")


@dataclass(frozen=True)
class IngestResult:
    documents: list[Document]
    skipped: list[Skip]
    total_chars: int
    total_bytes: int
    duration_ms: int
    unchanged: int = 0   # files taken from what an earlier read of them stored (core/store/extracts.py)


@dataclass(frozen=True)
class FileEntry:
    """A file the walk found: what a worker needs to read it."""
    path: str           # relative POSIX path (becomes Document.path)
    source_path: str    # absolute path on disk
    size: int
    mtime_ns: int = 0   # modification time (st_mtime_ns) when the walk found it


@dataclass(frozen=True)
class Extracted:
    """What a format extractor returns: the text and where it came from."""
    format: str
    text: str
    spans: tuple[Span, ...] = ()
    ocr_pages: tuple[int, ...] = ()
    tables: tuple[Table, ...] = ()


class Job:
    """What the extractors of one worker task know: the options, the path being
    read, and a way to report a step ("OCR page 3 of 12") to the parent."""

    def __init__(self, options: IngestOptions | None = None, path: str = "",
                 send: Callable[[tuple], None] | None = None) -> None:
        self.options = options or IngestOptions()
        self.path = path
        self._send = send

    def at(self, path: str) -> "Job":
        return Job(self.options, path, self._send)

    def step(self, text: str, read: int | None = None) -> None:
        """Tell the parent what is being done; `read`: bytes of the file read so far."""
        if self._send is not None:
            message = f"{self.path}: {text}" if self.path else text
            self._send(("step", message) if read is None else ("step", message, read))

    def progress(self, read: int, size: int) -> None:
        """Bytes read of a big file, as a step ("export.mbox: 512 of 2,048 MB read")."""
        self.step(f"{read / 1e6:,.0f} of {size / 1e6:,.0f} MB read", read)


class ExtractError(Exception):
    """A file cannot become a document; carries the skip reason and detail."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
