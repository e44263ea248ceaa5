"""A read-back document's text read by offsets, never whole: citations, the support check,
coverage and the source viewer read a 2 GB mailbox's or log's text this way.

    window = text_window(doc)        # None: the text is held, or its file cannot give it back
    len(window); window[a:b]; window[i]; window.find("x", a, b); window.count("\\n", a, b)

The text is the UTF-8 of a file: the document's sidecar (core/ingest/bigfile.py) or its own
file when the file's bytes are the text. Offsets are characters, as in `context`; the file is
read in bytes. When the file holds one byte per character (ASCII: its size is the text's
length) both are the same. Otherwise a sparse index gives, for every STEP bytes of the file,
how many characters start before them (chars(k) for byte k * STEP); a character offset is
found from the nearest mark by decoding at most STEP bytes, a byte offset is turned back into
characters by counting the bytes that start a character (UTF-8 continuation bytes are
0x80-0xBF). The index is built on first need with one pass over the file (about 2 s a GB:
bytes are counted, not decoded) and written beside the sidecar, `<text sha256>.idx` in the
sidecars' folder, so later runs and the CLI read it (32 KB for a 2 GB text). Built on first
need rather than while reading: most runs never cite or open their big file, and every origin
of such a text (a stream read, an extracted PDF, an earlier read taken from the extracts
table, a stored run) gets one the same way.
"""

from __future__ import annotations

import bisect
import logging
import os
from array import array
from typing import Any

from core.ingest.model import Document

log = logging.getLogger(__name__)

STEP = 64 * 1024                 # file bytes between two marks of the index
BLOCK = 1 << 20                  # bytes read per step of a search
CHUNK = 64 * 1024                # characters kept decoded for reads one character at a time
INDEX_SUFFIX = ".idx"
_MAGIC = 0x52_4C_4D_49_44_58_01  # "RLMIDX", version 1
_CONTINUATION = bytes(range(0x80, 0xC0))


def starts(data: bytes) -> int:
    """How many characters start in `data` (UTF-8): its bytes that are not continuation bytes."""
    return len(data.translate(None, _CONTINUATION))


class TextWindow:
    """A text of `chars` characters, the UTF-8 of the file at `path` (`size` bytes); `marks`
    is the sparse index (None: one byte per character)."""

    def __init__(self, path: str, chars: int, size: int, marks: Any = None) -> None:
        self.path, self.chars, self.size, self.marks = path, chars, size, marks
        self._chunk: tuple[int, str] = (0, "")

    def __len__(self) -> int:
        return self.chars

    # -- offsets -----------------------------------------------------------------
    def _pread(self, start: int, n: int) -> bytes:
        fd = os.open(self.path, os.O_RDONLY)
        try:
            return os.pread(fd, n, start)
        finally:
            os.close(fd)

    def byte_of(self, char: int) -> int:
        """Where character `char` starts in the file."""
        char = max(0, min(char, self.chars))
        if self.marks is None:
            return char
        if char == self.chars:
            return self.size
        k = bisect.bisect_right(self.marks, char) - 1
        base = k * STEP
        data = self._pread(base, STEP + 4)
        skip = 0
        while skip < len(data) and 0x80 <= data[skip] < 0xC0:     # the end of a character begun before
            skip += 1
        ahead = data[skip:].decode("utf-8", "ignore")[:char - self.marks[k]]
        return base + skip + len(ahead.encode("utf-8"))

    def char_of(self, byte: int) -> int:
        """The character that starts at `byte` (a character's first byte)."""
        if self.marks is None:
            return byte
        k = byte // STEP
        return self.marks[k] + starts(self._pread(k * STEP, byte - k * STEP))

    def _read(self, start: int, end: int) -> str:
        start, end = max(start, 0), min(end, self.chars)
        if end <= start:
            return ""
        a, b = self.byte_of(start), self.byte_of(end)
        return self._pread(a, b - a).decode("utf-8", "replace")

    # -- str-like reads ----------------------------------------------------------------
    def __getitem__(self, index: Any) -> str:
        if isinstance(index, int):
            if index < 0:
                index += self.chars
            if not 0 <= index < self.chars:
                raise IndexError("TextWindow index out of range")
            lo, text = self._chunk
            if not lo <= index < lo + len(text):
                lo = index - index % CHUNK
                self._chunk = (lo, self._read(lo, lo + CHUNK))
                text = self._chunk[1]
            return text[index - lo]
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise TypeError("a TextWindow is read by [start:end] slices or one index")
        start, end, _ = index.indices(self.chars)
        lo, text = self._chunk
        if lo <= start and end <= lo + len(text):
            return text[start - lo:end - lo]
        return self._read(start, end)

    def startswith(self, prefix: str, at: int = 0) -> bool:
        return self[at:at + len(prefix)] == prefix

    def _blocks(self, start: int, end: int, overlap: int) -> Any:
        """(byte offset, bytes) of [start, end) characters, BLOCK bytes at a time, each block
        running `overlap` bytes into the next (so a match across two blocks is seen)."""
        at, stop = self.byte_of(start), self.byte_of(end)
        fd = os.open(self.path, os.O_RDONLY)
        try:
            while at < stop:
                step = min(at + BLOCK, stop)
                yield at, os.pread(fd, min(step + overlap, stop) - at, at)
                at = step
        finally:
            os.close(fd)

    def find(self, sub: str, start: int = 0, end: int | None = None) -> int:
        end = self.chars if end is None else min(end, self.chars)
        start = max(start, 0)
        needle = sub.encode("utf-8")
        if not needle:
            return start if start <= end else -1
        for at, data in self._blocks(start, end, len(needle) - 1):
            found = data.find(needle)
            if found >= 0:
                return self.char_of(at + found)
        return -1

    def count(self, sub: str, start: int = 0, end: int | None = None) -> int:
        """Non-overlapping occurrences of `sub` in [start, end) (a newline: counted in bytes)."""
        end = self.chars if end is None else min(end, self.chars)
        needle = sub.encode("utf-8")
        if len(needle) == 1:
            return sum(data.count(needle) for _, data in self._blocks(max(start, 0), end, 0))
        n, at = 0, max(start, 0)
        while (found := self.find(sub, at, end)) >= 0:
            n, at = n + 1, found + len(sub)
        return n

    def after_newlines(self, start: int, end: int, n: int) -> int:
        """The offset just after the `n`-th newline at or after `start` (before `end`), or -1;
        `start` itself for n = 0. Newlines are counted a block at a time."""
        if n <= 0:
            return start
        for at, data in self._blocks(max(start, 0), min(end, self.chars), 0):
            here = data.count(b"\n")
            if here < n:
                n -= here
                continue
            position = -1
            for _ in range(n):
                position = data.find(b"\n", position + 1)
            return self.char_of(at + position + 1) if at + position + 1 < self.size else self.chars
        return -1


def index_path(text_path: str, text_sha: str) -> str:
    """Where the index of a text's file is kept: beside its sidecar, or (a document's own file)
    in the sidecars' folder under its text's sha256."""
    from core.ingest.bigfile import spool_dir
    base, ext = os.path.splitext(text_path)
    if ext == ".txt" and os.path.basename(base) == text_sha:
        return base + INDEX_SUFFIX
    return os.path.join(spool_dir(), text_sha + INDEX_SUFFIX)


def build_marks(path: str, size: int) -> array:
    """The sparse index of the file at `path`: characters starting before each STEP bytes."""
    marks = array("q")
    chars = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            data = f.read(64 * STEP)
            if not data:
                break
            for at in range(0, len(data), STEP):
                marks.append(chars)
                chars += starts(data[at:at + STEP])
    marks.append(chars)                      # the total, checked against the document's length
    return marks


def load_marks(path: str, text_path: str, size: int, chars: int) -> array | None:
    """The index kept at `path` when it is that of a `size`-byte text of `chars` characters,
    else one built now from `text_path` (and kept there when it can be written); None when
    the file does not hold that many characters."""
    try:
        with open(path, "rb") as f:
            kept = array("q")
            kept.frombytes(f.read())
        if kept[:4].tolist() == [_MAGIC, STEP, size, chars]:
            return kept[4:]
    except (OSError, ValueError):
        pass
    marks = build_marks(text_path, size)
    if marks[-1] != chars:
        log.warning("%s holds %s characters, not %s: read whole", text_path, marks[-1], chars)
        return None
    marks = marks[:-1]
    from core.ingest.bigfile import PARTIAL_PREFIX      # a crashed write is swept (core/store/sidecars.py)
    partial = os.path.join(os.path.dirname(path), f"{PARTIAL_PREFIX}idx-{os.getpid()}-{os.path.basename(path)}")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(partial, "wb") as f:
            f.write(array("q", [_MAGIC, STEP, size, chars]).tobytes() + marks.tobytes())
        os.replace(partial, path)
    except OSError as exc:
        log.info("the index of %s is not kept: %s", text_path, exc)
        if os.path.exists(partial):
            os.unlink(partial)
    return marks


def text_window(doc: Any) -> TextWindow | None:
    """A TextWindow on a read-back document whose text is the UTF-8 of a file (its sidecar, or
    its own file when the file's bytes are the text), unchanged since it was read; else None."""
    from core.ingest.text_back import FileText
    if not isinstance(doc, Document) or doc.held or not doc.chars:
        return None
    reader = doc.text_reader
    path = getattr(reader, "path", None)                 # a sidecar (core/ingest/bigfile.py)
    own = path is None and isinstance(reader, FileText) and bool(doc.sha256) and doc.text_sha256 == doc.sha256
    if own:
        path = doc.source_path
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if own and (st.st_size != doc.size or st.st_mtime_ns != doc.mtime_ns):
        return None
    if st.st_size == doc.chars:                          # one byte a character: ASCII
        return TextWindow(path, doc.chars, st.st_size)
    if st.st_size < doc.chars or not doc.text_sha256:
        return None
    marks = load_marks(index_path(path, doc.text_sha256), path, st.st_size, doc.chars)
    return None if marks is None else TextWindow(path, doc.chars, st.st_size, marks)
