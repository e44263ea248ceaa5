"""Big files read a piece at a time: text, logs, CSV, JSON lines and mailboxes.

    streams(fmt, size, options) -> bool       # read here rather than whole
    read_big(entry, fmt, job) -> Document      # in a worker process; its text is not held

A file on disk of IngestOptions.stream_min_bytes or more in one of STREAM_FORMATS is never
held whole, in bytes or in text, by the process reading it: a text file is decoded a block
(4 MB) at a time, a mailbox is walked message by message. What each piece becomes is hashed,
measured (characters, width, estimated tokens) and, unless the file's bytes already are the
text's UTF-8, written to a sidecar file (`texts/<text sha256>.txt` in the data folder). The Document that
comes back holds no text: it reads it back from the file (core/ingest/text_back.FileText)
or from the sidecar (SidecarText), and the context file copies either with os.sendfile.

Each block read sends a step with the bytes read so far, so the parent shows progress and
the per-file timeout measures a stall, not the file's size. A sidecar is written under a
partial name (partial_path) and renamed when complete; the parent removes the partial file
of a read it stopped.
"""

from __future__ import annotations

import codecs
import hashlib
import logging
import os
import time
from collections.abc import Iterator
from typing import Any

from core.ingest.decode import bom_encoding, decode_bytes
from core.ingest.model import (BINARY, CORRUPT, EMPTY, NO_TEXT, UNREADABLE, Document,
                               DocumentChanged, ExtractError, FileEntry, IngestOptions, Job, Span)

log = logging.getLogger(__name__)

BLOCK = 4 * 1024 * 1024
TICK_S = 0.5                      # progress is told at least this often while pieces are handled
STREAM_FORMATS = ("text", "markdown", "code", "csv", "tsv", "jsonl", "mbox")
SPOOL_NAME = "texts"              # in the data folder (core/paths.py)
PARTIAL_PREFIX = ".partial-"


def streams(fmt: str, size: int, options: IngestOptions) -> bool:
    return fmt in STREAM_FORMATS and 0 < options.stream_min_bytes <= size


def spool_dir(options: IngestOptions | None = None) -> str:
    """Where big files' texts are kept: IngestOptions.spool_dir, else `texts` in the data folder."""
    if options is not None and options.spool_dir:
        return options.spool_dir
    from core.paths import data_dir
    return str(data_dir() / SPOOL_NAME)


def partial_path(options: IngestOptions, source_path: str) -> str:
    """Where a sidecar of `source_path` is written until it is complete (the parent and the
    worker both derive it, so the parent can remove it after stopping the worker)."""
    key = hashlib.sha256(source_path.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return os.path.join(spool_dir(options), PARTIAL_PREFIX + key)


def remove_partial(options: IngestOptions, source_path: str) -> None:
    try:
        os.unlink(partial_path(options, source_path))
    except FileNotFoundError:
        pass


class SidecarText:
    """Reads a document's text back from its sidecar file (picklable: only the path)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, doc: Document) -> str:
        try:
            with open(self.path, "rb") as f:
                text = f.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DocumentChanged(f"the text read from {doc.path} is gone from {self.path} "
                                  f"({exc}); add it to Sources again to read it anew") from None
        if len(text) != doc.chars:
            raise DocumentChanged(f"the text read from {doc.path} changed in {self.path}; "
                                  "add it to Sources again to read it anew")
        return text

    def head(self, doc: Document, n: int) -> str:
        """The text's first `n` characters, reading only them."""
        return _utf8_head(self.path, n)

    def utf8_file(self, doc: Document) -> Any:
        """The open sidecar (its bytes are the text's UTF-8), or None."""
        try:
            return open(self.path, "rb", buffering=0)
        except OSError:
            return None

    def keep(self) -> None:
        """Mark the sidecar as in use now: the store's sweep (core/store/sidecars.py) removes
        only unnamed sidecars untouched for a day, and a document held in Sources that long
        is still wanted by the run about to read it."""
        try:
            os.utime(self.path)
        except OSError:                 # gone already: the run's read says so in words
            pass

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SidecarText) and other.path == self.path

    def __hash__(self) -> int:
        return hash((SidecarText, self.path))

    def __repr__(self) -> str:
        return f"SidecarText({self.path!r})"


def keep_sidecars(documents: Any) -> None:
    """Mark the sidecars of read-back documents in use before a store is opened (its sweep)."""
    for doc in documents:
        keep = getattr(getattr(doc, "text_reader", None), "keep", None)
        if keep is not None:
            keep()


def _utf8_head(path: str, n: int) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(4 * n)
    except OSError:
        return ""
    return data.decode("utf-8", "ignore")[:n]


def sidecar_of(options_or_dir: Any, text_sha: str) -> str:
    spool = options_or_dir if isinstance(options_or_dir, str) else spool_dir(options_or_dir)
    return os.path.join(spool, text_sha + ".txt")


class _Out:
    """The text as it is produced: hashed, measured, and (once it differs from the file's
    bytes, or always for a mailbox) written to the partial sidecar."""

    def __init__(self, partial: str, source: Any, always: bool) -> None:
        self.partial, self.source = partial, source
        self.sha = hashlib.sha256()
        self.chars = self.bytes = self.tokens = 0
        self.width = 1
        self.visible = False
        self.file: Any = None
        if always:
            self._open()

    def _open(self) -> None:
        os.makedirs(os.path.dirname(self.partial), exist_ok=True)
        self.file = open(self.partial, "wb")

    def diverge(self) -> None:
        """From here on the text differs from the file: the sidecar gets the text so far
        (the file's first `bytes` bytes, which were that text) and all that follows."""
        if self.file is not None:
            return
        self._open()
        at, left = 0, self.bytes
        while left:
            piece = os.pread(self.source.fileno(), min(left, BLOCK), at)
            if not piece:
                raise ExtractError(UNREADABLE, "the file got shorter while it was read")
            self.file.write(piece)
            at, left = at + len(piece), left - len(piece)

    def add(self, text: str) -> None:
        if not text:
            return
        from core.token_count import text_tokens
        from core.ingest.text_back import width_of
        data = text.encode("utf-8", "replace")
        self.sha.update(data)
        if self.file is not None:
            self.file.write(data)
        self.chars += len(text)
        self.bytes += len(data)
        self.width = max(self.width, width_of(text))
        self.tokens += text_tokens(text)
        self.visible = self.visible or not text.isspace()

    def reset(self) -> None:
        if self.file is not None:
            self.file.seek(0)
            self.file.truncate()
        self.sha = hashlib.sha256()
        self.chars = self.bytes = self.tokens = 0
        self.width = 1
        self.visible = False

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def read_big(entry: FileEntry, fmt: str, job: Job) -> Document:
    """The document of a big file on disk, its text not held (see the module docstring).
    Raises ExtractError as the whole-file readers do."""
    partial = partial_path(job.options, entry.source_path)
    try:
        source = open(entry.source_path, "rb", buffering=0)
    except OSError as exc:
        raise ExtractError(UNREADABLE, exc.strerror or str(exc)) from None
    out = _Out(partial, source, always=fmt == "mbox")
    try:
        meter = _Meter(entry, job)
        spans: tuple[Span, ...] = ()
        if fmt == "mbox":
            spans = _mbox(source, meter, out)
        else:
            _plain(source, meter, out)
        if not out.visible:
            raise ExtractError(EMPTY if fmt != "mbox" else NO_TEXT,
                               "only whitespace" if fmt != "mbox" else "mbox without text")
        sha = meter.digest.hexdigest()
        text_sha = out.sha.hexdigest()
        out.close()
        doc = Document(path=entry.path, source_path=entry.source_path, format=fmt, text="",
                       chars=out.chars, size=meter.read, sha256=sha, spans=spans,
                       mtime_ns=entry.mtime_ns, width=out.width, text_sha256=text_sha,
                       tokens=out.tokens)
        if out.file is None:                 # the file is its text's UTF-8: read back from it
            from core.ingest.text_back import READER
            return doc.without_text(READER)
        final = sidecar_of(job.options, text_sha)
        os.chmod(partial, 0o444)
        os.replace(partial, final)
        return doc.without_text(SidecarText(final))
    finally:
        source.close()
        out.close()
        if os.path.exists(partial):
            os.unlink(partial)


class _Meter:
    """Bytes read from the file: hashed, and told to the parent once per block."""

    def __init__(self, entry: FileEntry, job: Job) -> None:
        self.entry, self.job = entry, job
        self.digest = hashlib.sha256()
        self.read = self._told = 0
        self._when = time.monotonic()

    def took(self, data: bytes) -> None:
        self.digest.update(data)
        self.read += len(data)
        if self.read - self._told >= BLOCK:
            self._tell()

    def tick(self) -> None:
        """A piece was handled (a message): tell the parent at least every TICK_S."""
        if time.monotonic() - self._when >= TICK_S:
            self._tell()

    def _tell(self) -> None:
        self._told, self._when = self.read, time.monotonic()
        self.job.progress(self.read, self.entry.size)

    def restart(self) -> None:
        """Reading starts again from the first byte."""
        self.digest = hashlib.sha256()
        self.read = self._told = 0


def _plain(source: Any, meter: _Meter, out: _Out) -> None:
    """Text decoded a block at a time: UTF-8 (or the BOM's encoding) first; a file that is not
    UTF-8 is read again in the encoding its first blocks suggest (decode.decode_bytes)."""
    head = os.pread(source.fileno(), 4096, 0)
    found = bom_encoding(head)
    if found is not None:
        out.diverge()                        # the BOM is not part of the text
        _decode(source, meter, out, found[0], found[1], "replace")
        return
    try:
        _decode(source, meter, out, "utf-8", 0, "strict")
        return
    except UnicodeDecodeError:
        pass
    sample = os.pread(source.fileno(), 1 << 20, 0)
    encoding = decode_bytes(sample)[1].split(" ")[0]
    meter.restart()
    out.reset()
    out.diverge()
    _decode(source, meter, out, encoding, 0, "replace")


def _decode(source: Any, meter: _Meter, out: _Out, encoding: str, skip: int, errors: str) -> None:
    decoder = codecs.getincrementaldecoder(encoding)(errors)
    source.seek(0)
    carry = ""
    first = True
    checked = False
    while True:
        data = source.read(BLOCK)
        if not data:
            break
        meter.took(data)
        text = carry + decoder.decode(data[skip:] if first else data)
        first = False
        carry = ""
        if text.endswith("\r"):
            carry, text = "\r", text[:-1]
        if "\r" in text:
            out.diverge()
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if not checked and text:
            _refuse_binary(text, encoding)
            checked = True
        out.add(text)
    tail = carry + decoder.decode(b"", final=True)
    if tail:
        if "\r" in tail:
            out.diverge()
        out.add(tail.replace("\r\n", "\n").replace("\r", "\n"))


def _refuse_binary(text: str, encoding: str) -> None:
    from core.ingest.formats.plain import _CONTROL
    sample = text[:65536]
    bad = len(_CONTROL.findall(sample))
    if bad > 0.05 * len(sample):
        raise ExtractError(BINARY, f"decoded as {encoding} but {bad} of {len(sample)} "
                                   "characters are control or replacement characters")


def _mbox(source: Any, meter: _Meter, out: _Out) -> tuple[Span, ...]:
    """The mailbox message by message, each as the whole-file reader makes it (mail.py)."""
    from core.ingest.formats.mail import mbox_message
    spans: list[Span] = []
    number = 0
    for raw in _messages(source, meter):
        number += 1
        address, body = mbox_message(number, raw)
        if number > 1:
            out.add("\n\n")
        start = out.chars
        out.add(f"--- message {number} ---\n")
        out.add(body.rstrip("\n"))
        spans.append(Span(start, out.chars, address))
    return tuple(spans)


def _messages(source: Any, meter: _Meter) -> Iterator[bytes]:
    """Each message's bytes after its "From " line, found a block at a time."""
    buf = b""
    started = False
    while True:
        data = source.read(BLOCK)
        if data:
            meter.took(data)
        buf += data
        if not started:
            if not buf.strip():
                if not data:
                    break
                buf = b""
                continue
            buf = buf.lstrip()
            if not buf.startswith(b"From "):
                raise ExtractError(CORRUPT, "not an mbox: no 'From ' separator line at the start")
            started = True
        at = 0
        while (after := buf.find(b"\nFrom ", at + 1)) >= 0:
            yield _after_from_line(buf, at, after + 1)
            at = after + 1
            meter.tick()
        buf = buf[at:]
        if not data:
            break
    if not started:
        raise ExtractError(CORRUPT, "not an mbox: no 'From ' separator line at the start")
    if buf:
        yield _after_from_line(buf, 0, len(buf))


def _after_from_line(buf: bytes, start: int, end: int) -> bytes:
    newline = buf.find(b"\n", start, end)
    return buf[newline + 1:end] if newline >= 0 else b""


def kept_aside(doc: Document, entry: FileEntry, options: IngestOptions) -> Document:
    """A document extracted from a file on disk (PDF, Office, mail, HTML...) with its text in a
    sidecar instead of in memory, so the engine holds no copy of it (plain text is read back
    from its own file instead: core/ingest/text_back.py). `doc` as it is when the sidecar
    cannot be written."""
    from core.ingest.extract import TEXT_FORMATS
    if not doc.held or doc.format in TEXT_FORMATS or not doc.text:
        return doc
    from core.ingest.text_back import text_sha256, width_of
    from core.token_count import text_tokens
    text = doc.text
    sha = doc.text_sha256 or text_sha256(text)
    if not sha:
        return doc                            # text UTF-8 cannot encode: kept in memory
    final = sidecar_of(options, sha)
    partial = partial_path(options, entry.source_path)
    try:
        if not os.path.exists(final):
            os.makedirs(os.path.dirname(final), exist_ok=True)
            with open(partial, "wb") as f:
                f.write(text.encode("utf-8"))
            os.chmod(partial, 0o444)
            os.replace(partial, final)
    except OSError as exc:
        log.warning("%s: its text stays in memory, the sidecar could not be written: %s", doc.path, exc)
        if os.path.exists(partial):
            os.unlink(partial)
        return doc
    return doc.but(mtime_ns=entry.mtime_ns, width=doc.width or width_of(text), text_sha256=sha,
                   tokens=doc.tokens if doc.tokens is not None else text_tokens(text)
                   ).without_text(SidecarText(final))


def big_format(entry: FileEntry, options: IngestOptions) -> str | None:
    """The format of `entry` when it is read here (a big file of STREAM_FORMATS), else None."""
    if not 0 < options.stream_min_bytes <= entry.size:
        return None
    from core.ingest.sniff import HEAD_BYTES, classify
    try:
        with open(entry.source_path, "rb") as f:
            head = f.read(HEAD_BYTES)
        fmt = classify(entry.path, head)
    except (OSError, ExtractError):
        return None                       # the whole-file path says why
    return fmt if streams(fmt, entry.size, options) else None
