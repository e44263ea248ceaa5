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

import json
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

CONTEXT_NAME = "context.txt"
INDEX_NAME = "context.index.json"
TABLES_NAME = "context.tables.json"


class ContextFileError(Exception):
    """The context files are missing or do not match their index."""


@dataclass(frozen=True)
class ContextFiles:
    path: str
    index_path: str
    chars: int
    documents: int


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


def _tables_of(doc: Any, path: str, text: str) -> list[dict[str, Any]]:
    """A document's tables as dicts: those ingestion parsed, else (a stored document)
    parsed again from its text."""
    get = doc.get if isinstance(doc, dict) else (lambda name: getattr(doc, name, None))
    tables = get("tables")
    if tables is None:
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


def write_context(documents: Iterable[Any], directory: str | Path) -> ContextFiles:
    """Write the context and its index into `directory` (read-only files)."""
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
    # "replace" keeps one character per unencodable one (lone surrogates): offsets hold.
    with open(path, "w", encoding="utf-8", errors="replace", newline="") as f:
        for doc in documents:
            doc_path, text = _path_and_text(doc)
            head = header(doc_path)
            f.write(head)
            f.write(text)
            f.write("\n\n")
            entry = {"path": doc_path, "offset": offset + len(head), "chars": len(text),
                     **_address_data(doc)}
            found = _tables_of(doc, doc_path, text)
            if found:
                entry["tables"] = len(found)
                tables.extend(found)
            index.append(entry)
            offset += len(head) + len(text) + 2
    index_path.write_text(json.dumps(index, ensure_ascii=False), encoding="utf-8")
    written = [path, index_path]
    if tables:
        # dumps, not dump: only the one-shot encoder is the fast C one (3x here).
        tables_path.write_text(json.dumps(tables, ensure_ascii=False, separators=(",", ":")),
                               encoding="utf-8")
        written.append(tables_path)
    for done in written:
        done.chmod(0o444)
    return ContextFiles(str(path), str(index_path), offset, len(index))


def read_context(path: str, index_path: str) -> tuple[str, list[dict[str, Any]]]:
    """Return (context, documents) as the worker exposes them."""
    try:
        with open(index_path, encoding="utf-8") as f:
            index = json.load(f)
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                context = ""
            else:
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                    view = memoryview(mm)
                    try:
                        context = str(view, "utf-8")
                    finally:
                        view.release()
    except (OSError, ValueError) as exc:
        raise ContextFileError(f"cannot read the context: {exc}") from exc
    tables: list[dict[str, Any]] = []
    if any(entry.get("tables") for entry in index):
        tables_path = os.path.join(os.path.dirname(index_path), TABLES_NAME)
        try:
            with open(tables_path, encoding="utf-8") as f:
                tables = json.load(f)
        except (OSError, ValueError) as exc:
            raise ContextFileError(f"cannot read the tables: {exc}") from exc
    documents = []
    for entry in index:
        start, chars = int(entry["offset"]), int(entry["chars"])
        if start < 0 or start + chars > len(context):
            raise ContextFileError(f"index entry out of range: {entry}")
        doc = {"path": entry["path"], "text": context[start:start + chars], "chars": chars,
               "offset": start}
        if "format" in entry or "spans" in entry:   # taken out again by Namespace.set_context
            doc["format"] = entry.get("format") or "text"
            doc["spans"] = entry.get("spans") or []
        if entry.get("tables"):                     # taken out again by Namespace.set_context
            doc["tables"], tables = tables[:int(entry["tables"])], tables[int(entry["tables"]):]
        documents.append(doc)
    return context, documents
