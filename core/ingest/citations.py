"""Citations in an answer: `[doc:PATH:ADDRESS]`, resolved against the run's documents.

    cites = resolve_citations(answer, documents)    # documents: ingest or stored, with spans
    [c for c in cites if not c.ok]                  # flagged: they point to nothing

Each citation knows where it sits in the answer (to turn it into a link) and the
[start, end) character range it names in its document and in `context` (for a
source viewer to highlight). One bracket may hold several, separated by ";" or
",": `[doc:a.txt:line 3; doc:b.pdf:page 2]`. ADDRESS is what the REPL's `where()`
prints ("page 3, line 12", "sheet Sales row 4", "line 120") and also "lines 10-14".
"""

from __future__ import annotations

import logging

import re
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from core.ingest.address import locate_in

log = logging.getLogger(__name__)

_BRACKET = re.compile(r"\[(doc:[^\[\]\n]+)\]")
_SPLIT = re.compile(r"\s*[;,]\s*(?=doc:)")
_RANGE = re.compile(r"^(?P<head>.*?)(?P<word>lines?|rows?) (?P<a>\d+)\s*(?:-|–|to)\s*(?P<b>\d+)$")


@dataclass(frozen=True)
class Citation:
    text: str                    # "doc:report.pdf:page 2" as written
    answer_start: int            # where the whole bracket sits in the answer
    answer_end: int
    path: str
    address: str
    ok: bool
    problem: str = ""            # why it was flagged: "no document ...", "no such address ..."
    document: int | None = None  # index into the run's documents
    start: int | None = None     # [start, end) in the document's text
    end: int | None = None
    context_start: int | None = None   # the same range in `context` (the REPL's string)
    context_end: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _field(doc: Any, name: str, default: Any = None) -> Any:
    return doc.get(name, default) if isinstance(doc, dict) else getattr(doc, name, default)


def context_offsets(documents: Sequence[Any]) -> list[int]:
    """Where each document's text starts inside `context` (see core/repl/context_file.py)."""
    offsets, position = [], 0
    for d in documents:
        head = len(f"=== {_field(d, 'path')} ===\n")
        offsets.append(position + head)
        position += head + _chars(d) + 2
    return offsets


def _chars(doc: Any) -> int:
    """Characters of the text, not read back for a document that reads it on demand
    (core/ingest/text_back.py)."""
    if not isinstance(doc, dict) and getattr(doc, "held", True) is False:
        return int(doc.chars)
    return len(_field(doc, "text", ""))


def split_reference(inner: str, paths: Sequence[str]) -> tuple[str, str]:
    """"doc:PATH:ADDRESS" -> (PATH, ADDRESS); known paths win, so a path may contain ":"."""
    body = inner[4:] if inner.startswith("doc:") else inner
    for path in sorted(paths, key=len, reverse=True):
        if body.startswith(path + ":"):
            return path, body[len(path) + 1:].strip()
        if body == path:
            return path, ""
    path, _, address = body.partition(":")
    return path.strip(), address.strip()


def locate_address(text: str, spans: Sequence[Any], address: str) -> tuple[int, int] | None:
    """locate_in, plus ranges ("lines 10-14", "page 2, lines 3-5", "sheet S rows 2-9")."""
    found = locate_in(text, spans, address)
    if found is not None or not address:
        return (0, len(text)) if not address else found
    m = _RANGE.match(address)
    if not m:
        return None
    word = "line" if m["word"].startswith("line") else "row"
    first = locate_in(text, spans, f"{m['head']}{word} {m['a']}")
    last = locate_in(text, spans, f"{m['head']}{word} {m['b']}")
    if first is None or last is None or last[1] < first[0]:
        return None
    return first[0], last[1]


def parse_citations(answer: str) -> list[tuple[str, int, int]]:
    """(reference, bracket start, bracket end) for every `doc:` reference in the answer."""
    found = []
    for m in _BRACKET.finditer(answer or ""):
        for part in _SPLIT.split(m.group(1)):
            if part.startswith("doc:"):
                found.append((part.strip(), m.start(), m.end()))
    return found


def resolve_citations(answer: str, documents: Sequence[Any]) -> list[Citation]:
    """A path that was read once for several identical files (a document's
    `duplicates`) resolves to the document that was read."""
    by_path = {str(_field(d, "path")): i for i, d in enumerate(documents)}
    for i, d in enumerate(documents):
        for alias in _field(d, "duplicates", ()) or ():
            by_path.setdefault(str(alias), i)
    paths = list(by_path)
    found = parse_citations(answer)
    offsets = context_offsets(documents) if found else []
    result = []
    for reference, a, b in found:
        path, address = split_reference(reference, paths)
        index = by_path.get(path)
        if index is None:
            result.append(Citation(reference, a, b, path, address, False,
                                   f"no document {path!r} in this run"))
            continue
        doc = documents[index]
        span = locate_address(_text_or_window(doc), _field(doc, "spans", ()) or (), address)
        if span is None:
            result.append(Citation(reference, a, b, path, address, False,
                                   f"{path} has no {address!r}", document=index))
            continue
        start, end = span
        result.append(Citation(reference, a, b, path, address, True, "", index, start, end,
                               offsets[index] + start, offsets[index] + end))
    return result


def cited_passages(answer: str, documents: Sequence[Any]) -> list[str]:
    """The text of every passage the answer's citations name that exists, each cited
    document read once (a read-back one reads its file; one changed since it was read gives
    no passage: DocumentChanged is an OSError). For the answer's support check."""
    passages: list[str] = []
    texts: dict[int, str] = {}
    for c in resolve_citations(answer, documents) if documents else ():
        if c.ok and c.document is not None and c.start is not None:
            if c.document not in texts:
                texts[c.document] = cited_text(documents[c.document])
            passages.append(texts[c.document][c.start:c.end])
    return passages


def cited_text(doc: Any) -> Any:
    """What to cut a cited passage from: a big read-back document's TextWindow (read by offsets),
    else its text ("" when it cannot be read back: logged)."""
    return _text_or_window(doc, _text_of)


def _text_or_window(doc: Any, whole: Any = None) -> Any:
    """A big read-back document's text read by offsets (core/ingest/text_window.TextWindow), or
    its text, whole."""
    from core.ingest.text_window import text_window
    window = text_window(doc)
    if window is not None:
        return window
    return whole(doc) if whole is not None else _field(doc, "text", "")


def _text_of(doc: Any) -> str:
    try:
        text = doc.get("text") if isinstance(doc, dict) else getattr(doc, "text", None)
    except OSError as exc:
        log.warning("a cited document could not be read back: %s", exc)
        return ""
    return text or ""
