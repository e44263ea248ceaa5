"""The context layout on disk, written by the engine and read by the worker.

`context.txt` (UTF-8, no newline translation) holds every document, in order:

    === {path} ===\\n{text}\\n\\n

`context.index.json` is a list of {"path", "offset", "chars"}, where `offset` is
the character index of the document's text inside the decoded context string,
plus "format" and "spans" ([[start, end, address], ...] relative to the text)
when the document has them, so the REPL's `where(offset)` can name an address,
and "tables" (how many) for CSV/TSV/XLSX documents.

`context.tables.json` holds those tables, in document order: a list of
{"path", "sheet", "header", "rows"} (the REPL's `tables`; see core/ingest/model.Table).
A file, like the context, so big tables never go through the JSON protocol.
The worker decodes the file once (through mmap, so there is no extra bytes
copy) and slices each document's text out of it.
"""

from __future__ import annotations

import codecs
import collections
import json
import os
import sys

from core.repl.document_dict import DocumentDict, Messages

# No pathlib, dataclasses or typing here: the worker imports this module at its start, where
# they cost ~20 ms of CPU (tests/bench/bench_sandbox.py). write_context (the engine's) imports pathlib.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Iterable, Iterator

CONTEXT_NAME = "context.txt"
INDEX_NAME = "context.index.json"
TABLES_NAME = "context.tables.json"
# Read and decoded at a time by the worker. Its block and decoded piece are the worker's only
# transient memory beside the text: 256 KB, not 4 MB, took 12 MB off a 200 MB CSV's peak
# (226.8 -> 212.0 MB, the text being 200.3) and decodes faster (0.23 s of CPU against 0.37 s).
BLOCK_BYTES = 256 * 1024
JOIN_COST = 1.25                 # context_form: joined, unless that costs more than this
JOIN_SLACK_BYTES = 64 * 1024 * 1024   # ... and more than this on top (small corpora stay joined)
LAZY_TABLE_CHARS = 1 << 20       # a CSV/TSV this big without parsed tables: core/repl/table_rows.py
_WIDE_HEAD = sys.getsizeof("\xe9") - 2   # a non-ASCII str's header: its size less (1 + 1) x 1 byte


class ContextFileError(Exception):
    """The context files are missing or do not match their index."""


class ContextFiles(collections.namedtuple("ContextFiles", "path index_path chars documents form",
                                          defaults=("str",))):
    """Where the context and its index were written: path, index_path, chars, documents, form
    (context_form: how the worker holds `context`)."""
    __slots__ = ()


def header(path: str) -> str:
    return f"=== {path} ===\n"


def _address_data(doc: Any) -> dict[str, Any]:
    """"format" and "spans" of a document (ingest.Document, StoredDocument, dict), if any."""
    get = doc.get if isinstance(doc, dict) else (lambda name: getattr(doc, name, None))
    data: dict[str, Any] = {}
    if get("format"):
        data["format"] = str(get("format"))
    spans = get("spans") or ()
    if spans:
        data["spans"] = [[int(s[0]), int(s[1]), str(s[2])] if not hasattr(s, "address")
                         else [int(s.start), int(s.end), str(s.address)] for s in spans]
    return data


def _tables_of(doc: Any, path: str, text: str | None) -> list[dict[str, Any]]:
    """A document's tables as dicts: those ingestion parsed, else (a stored document)
    parsed again from its text (None: read it now)."""
    get = doc.get if isinstance(doc, dict) else (lambda name: getattr(doc, name, None))
    tables = get("tables")
    if tables is None:
        text = _path_and_text(doc)[1] if text is None else text
        from core.ingest.formats.tables import from_document_text
        tables = from_document_text(path, text, str(get("format") or ""), get("spans") or ())
    return [t.to_dict() if hasattr(t, "to_dict") else dict(t) for t in tables]


def _path_and_text(doc: Any) -> tuple[str, str]:
    if isinstance(doc, dict):
        path, text = doc["path"], doc["text"]
    else:
        path, text = doc.path, doc.text
    if not isinstance(text, str):
        raise TypeError(f"document text must be str, got {type(text).__name__} for {path!r}")
    return str(path), text


def text_width(text: str) -> int:
    """Bytes per character CPython stores `text` with (1, 2 or 4), read from its size in
    memory (sys.getsizeof), so no text is scanned beyond str.isascii."""
    if text.isascii():
        return 1
    return (sys.getsizeof(text) - _WIDE_HEAD) // (len(text) + 1)


def context_form(widths_and_chars: Iterable[tuple[int, int]]) -> str:
    """"str" (one joined string) or "list" (one string per document): "list" when joining
    would cost more than JOIN_COST times the documents held apart and more than
    JOIN_SLACK_BYTES on top of them, as when a few documents of a large corpus hold
    characters beyond U+FFFF and the joined string would take 4 bytes for every character.
    `widths_and_chars`: (text_width, characters) per document."""
    apart = widest = chars = 0
    for w, n in widths_and_chars:
        apart += w * n
        widest = max(widest, w)
        chars += n
    joined = widest * chars
    return "list" if joined > JOIN_COST * apart and joined - apart > JOIN_SLACK_BYTES else "str"


def _read_back(doc: Any) -> bool:
    """True for a document that holds no text and reads it back when asked
    (ingest.Document.without_text, core/ingest/text_back.py)."""
    return not isinstance(doc, dict) and getattr(doc, "held", True) is False


def width_and_chars(doc: Any) -> tuple[int, int]:
    """(text_width, characters) of a document (ingest.Document, StoredDocument, dict). A
    document that reads its text back on demand is not read for it: it kept both."""
    if _read_back(doc) and doc.width:
        return int(doc.width), int(doc.chars)
    text = _path_and_text(doc)[1]
    return text_width(text), len(text)


def chars_of(doc: Any) -> int:
    """The characters of a document's text, without reading a read-back document's text."""
    return int(doc.chars) if _read_back(doc) else len(_path_and_text(doc)[1])


def head_of(doc: Any, n: int) -> str:
    """The first `n` characters of a document's text; a document that reads its text back from
    a file reads only its head when the reader can (core/ingest/bigfile.py, text_back.py)."""
    if _read_back(doc):
        head = getattr(doc.__dict__.get("_text_from"), "head", None)
        if head is not None:
            return head(doc, n)
    return _path_and_text(doc)[1][:n]


def form_of(documents: Iterable[Any]) -> str:
    """context_form of documents as the engine holds them (ingest.Document, dicts): the form
    the worker will give `context` once they are loaded."""
    return context_form(map(width_and_chars, documents))


def write_context(documents: Iterable[Any], directory: str | Path) -> ContextFiles:
    """Write the context and its index into `directory` (read-only files). Each document is
    encoded and written on its own: the engine holds no joined copy."""
    from pathlib import Path
    directory = Path(directory)
    path = directory / CONTEXT_NAME
    index_path = directory / INDEX_NAME
    tables_path = directory / TABLES_NAME
    for old in (path, index_path, tables_path):
        if old.exists():
            old.chmod(0o600)
            old.unlink()
    index = []
    tables: list[dict[str, Any]] = []
    offset = 0
    sizes = []
    with open(path, "wb", buffering=0) as f:
        for doc in documents:
            head = header(str(doc["path"] if isinstance(doc, dict) else doc.path))
            head_data = head.encode("utf-8", "replace")
            source = _same_file(doc)
            if source is not None:           # its text's UTF-8 is a file: copied, not decoded
                n_bytes = os.fstat(source.fileno()).st_size
                with source:
                    _write(f, head_data)
                    _copy(source, f, n_bytes)
                    _write(f, b"\n\n")
                doc_path, text, chars, width = str(doc.path), None, int(doc.chars), int(doc.width)
            else:
                doc_path, text = _path_and_text(doc)
                # "replace" keeps one character per unencodable one (lone surrogates): offsets hold.
                data = text.encode("utf-8", "replace")
                _write(f, head_data)
                _write(f, data)
                _write(f, b"\n\n")
                chars, n_bytes, width = len(text), len(data), text_width(text)
                del data
            entry = {"path": doc_path, "offset": offset + len(head), "chars": chars,
                     "bytes": n_bytes, "head_bytes": len(head_data), "width": width,
                     **_address_data(doc)}
            sizes.append((width, chars))
            found = _tables_of(doc, doc_path, text)
            if found:
                entry["tables"] = len(found)
                tables.extend(found)
            index.append(entry)
            offset += len(head) + chars + 2
            del text
    index_path.write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")
    written = [path, index_path]
    if tables:
        # dumps, not dump: only the one-shot encoder is the fast C one (3x here).
        tables_path.write_text(json.dumps(tables, ensure_ascii=False, separators=(",", ":")),
                               encoding="utf-8")
        written.append(tables_path)
    for done in written:
        done.chmod(0o444)
    return ContextFiles(str(path), str(index_path), offset, len(index), context_form(sizes))


def _same_file(doc: Any) -> Any:
    """An open file whose bytes are a read-back document's text as UTF-8: the sidecar a big
    file's text was written to (core/ingest/bigfile.py), or the document's own file when
    the text's UTF-8 is the file's bytes (same sha256) and the file is as it was read (size,
    modification time); None otherwise (the text is read and encoded, and a changed file
    raises DocumentChanged there)."""
    if not _read_back(doc) or not getattr(doc, "width", 0):
        return None
    sidecar = getattr(doc.__dict__.get("_text_from"), "utf8_file", None)
    if sidecar is not None:
        return sidecar(doc)
    if not doc.sha256 or getattr(doc, "text_sha256", None) != doc.sha256 or not doc.mtime_ns:
        return None
    try:
        source = open(doc.source_path, "rb", buffering=0)
    except OSError:
        return None
    st = os.fstat(source.fileno())
    if st.st_size != doc.size or st.st_mtime_ns != doc.mtime_ns:
        source.close()
        return None
    return source


def _copy(source: Any, target: Any, size: int) -> None:
    """`size` bytes from file to file, in the kernel where it can (os.sendfile)."""
    left, at = size, 0
    try:
        while left:
            sent = os.sendfile(target.fileno(), source.fileno(), at, left)
            if not sent:
                raise ContextFileError(f"{source.name} ended early ({at} of {size} bytes)")
            at, left = at + sent, left - sent
    except (AttributeError, OSError):         # no sendfile here: copy through a buffer
        source.seek(at)
        while left:
            piece = source.read(min(left, BLOCK_BYTES))
            if not piece:
                raise ContextFileError(f"{source.name} ended early") from None
            _write(target, piece)
            left -= len(piece)


def _write(target: Any, data: bytes) -> None:
    """All of `data` (an unbuffered file may take less in one call)."""
    view = memoryview(data)
    while view:
        view = view[target.write(view):]


def _joined(pieces: Iterable[str]) -> str:
    """The pieces as one str, grown in place: CPython resizes a string nothing else refers
    to on `text += piece`, without copying it (realloc moves its pages), so the peak is the
    string plus a piece, not two strings. Only the specialised form of this line does so
    (CPython 3.11+ specialises it after a few runs; the generic path copies): _warm runs it
    first."""
    text = ""
    for piece in pieces:
        text += piece
    return text


def _warm() -> None:
    for _ in range(4):
        _joined(["x"] * 64)


def _blocks(f: Any) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    buf = bytearray(min(BLOCK_BYTES, os.fstat(f.fileno()).st_size))
    view = memoryview(buf)
    try:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            yield decoder.decode(view[:n])
        yield decoder.decode(b"", final=True)
    finally:
        view.release()


def _read_joined(f: Any) -> str:
    """The whole file as one str, read and decoded a block at a time (the old mmap decode
    held the mapped file beside the string)."""
    _warm()
    return _joined(_blocks(f))


def _read_text(f: Any, size: int, buf: bytearray) -> str:
    """`size` bytes of the file as a str, a block at a time (see _read_joined)."""
    if size <= len(buf):
        view = memoryview(buf)[:size]
        try:
            got = f.readinto(view)
            if got != size:
                raise ContextFileError(f"the context file ended early ({got} of {size} bytes)")
            return str(view, "utf-8", "replace")
        finally:
            view.release()
    decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def pieces() -> Iterator[str]:
        left = size
        while left:
            piece = f.read(min(left, len(buf)))
            if not piece:
                raise ContextFileError("the context file ended early")
            left -= len(piece)
            yield decoder.decode(piece)
        yield decoder.decode(b"", final=True)
    _warm()
    return _joined(pieces())


def _read_apart(f: Any, index: list[dict[str, Any]]) -> list[str]:
    """One str per document, read in file order; each document has its own width."""
    buf = bytearray(min(BLOCK_BYTES, max((int(e["bytes"]) for e in index), default=0)))
    texts = []
    for entry in index:
        f.seek(int(entry["head_bytes"]), os.SEEK_CUR)
        texts.append(_read_text(f, int(entry["bytes"]), buf))
        f.seek(2, os.SEEK_CUR)
    return texts


def read_context(path: str, index_path: str, form: str = "str") -> tuple[str | list[str], list[dict[str, Any]]]:
    """Return (context, documents) as the worker exposes them: for form "str", `context`
    one str with `documents` reading their text out of it (DocumentDict); for "list" (the
    engine's context_form when joining would widen the corpus), a list of the documents'
    texts, each document's "text" that same string."""
    if form not in ("str", "list"):
        raise ContextFileError(f"unknown context form {form!r}")
    try:
        with open(index_path, encoding="utf-8") as f:
            index = json.load(f)
        with open(path, "rb", buffering=0) as f:
            if form == "str":
                context: str | list[str] = _read_joined(f)
            else:
                context = _read_apart(f, index)
    except (OSError, ValueError, KeyError) as exc:
        raise ContextFileError(f"cannot read the context: {exc}") from exc
    tables: list[dict[str, Any]] = []
    if any(entry.get("tables") for entry in index):
        tables_path = os.path.join(os.path.dirname(index_path), TABLES_NAME)
        try:
            with open(tables_path, encoding="utf-8") as f:
                tables = json.load(f)
        except (OSError, ValueError) as exc:
            raise ContextFileError(f"cannot read the tables: {exc}") from exc
    documents: list[dict[str, Any]] = []
    for i, entry in enumerate(index):
        start, chars = int(entry["offset"]), int(entry["chars"])
        if isinstance(context, str):
            if start < 0 or start + chars > len(context):
                raise ContextFileError(f"index entry out of range: {entry}")
            doc: dict[str, Any] = DocumentDict(context, path=entry["path"], chars=chars, offset=start)
        else:
            if len(context[i]) != chars:
                raise ContextFileError(f"index entry does not match the file: {entry}")
            doc = {"path": entry["path"], "text": context[i], "chars": chars, "offset": None}
        if "format" in entry or "spans" in entry:   # taken out again by Namespace.set_context
            doc["format"] = entry.get("format") or "text"
            doc["spans"] = entry.get("spans") or []
        if entry.get("format") == "mbox" and entry.get("spans"):
            doc["messages"] = Messages(context if isinstance(context, str) else context[i],
                                       start if isinstance(context, str) else 0, entry["spans"])
        if entry.get("tables"):                     # taken out again by Namespace.set_context
            doc["tables"], tables = tables[:int(entry["tables"])], tables[int(entry["tables"]):]
        elif entry.get("format") in ("csv", "tsv") and chars >= LAZY_TABLE_CHARS:
            # too big to be parsed into rows up front: rows parsed from the text when read
            from core.repl.table_rows import lazy_table
            found = lazy_table(entry["path"], *((context, start) if isinstance(context, str)
                                                else (context[i], 0)), chars, entry["format"])
            doc["tables"] = [found] if found else []
        documents.append(doc)
    return context, documents
