"""Offsets <-> addresses inside a document ("page 3, line 12", "sheet Sales row 4",
"slide 2", "message 7 (Subject)", "line 12"). Used by the REPL helper and by
citations ([doc:PATH:ADDRESS]) to find their passage again.

`address_of`/`locate` take a Document; `address_in`/`locate_in` take plain data
(text, spans as Span objects or [start, end, address] triples, format) for
processes that only have JSON, such as the REPL worker.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Union

from core.ingest.model import Document, Span

SpanLike = Union[Span, Sequence]      # Span or (start, end, address)

_LINE = re.compile(r"^line (\d+)$")
_SUFFIX = re.compile(r"^(?:, line | row )(\d+)$")


def address_of(document: Document, offset: int) -> str:
    return address_in(document.text, document.spans, document.format, offset)


def locate(document: Document, address: str) -> tuple[int, int] | None:
    return locate_in(document.text, document.spans, address)


def address_in(text: str, spans: Sequence[SpanLike], fmt: str, offset: int,
               base: int = 0, chars: int | None = None) -> str:
    """Where `offset` (a char offset into the document's text) sits. Inside a block (page,
    sheet, slide, message, chapter) lines count from the block's first line after its
    "--- ... ---" marker; spreadsheets say "row N". The document's text is
    text[base:base + chars] (the REPL's joined `context`, not cut out of it)."""
    chars = len(text) - base if chars is None else chars
    offset = max(0, min(offset, chars))
    span = _span_at(_triples(spans), offset)
    if span is None:
        return f"line {text.count(chr(10), base, base + offset) + 1}"
    start, _end, address = span
    line = text.count("\n", base + start, base + offset)
    if line == 0:
        return address
    if fmt == "xlsx":
        return f"{address} row {line}"
    return f"{address}, line {line}"


def locate_in(text: str, spans: Sequence[SpanLike], address: str) -> tuple[int, int] | None:
    """The [start, end) char range an address names, or None if it names nothing
    (a citation to flag). Accepts what address_in returns; a block's address also
    matches by its leading words ("message 7" for "message 7 (Hello)")."""
    address = " ".join(address.split())
    triples = _triples(spans)
    match = _LINE.match(address)
    if match and not triples:
        return _line_range(text, 0, len(text), int(match.group(1)))
    for start, end, head in sorted(triples, key=lambda t: -len(t[2])):
        for name in (head, head.split(" (", 1)[0]):
            if address == name:
                return start, end
            rest = _SUFFIX.match(address[len(name):]) if address.startswith(name) else None
            if rest:
                body = text.find("\n", start, end)
                return None if body < 0 else _line_range(text, body + 1, end, int(rest.group(1)))
    return None


def _triples(spans: Sequence[SpanLike]) -> list[tuple[int, int, str]]:
    return [(s.start, s.end, s.address) if isinstance(s, Span)
            else (int(s[0]), int(s[1]), str(s[2])) for s in spans]


def _span_at(spans: list[tuple[int, int, str]], offset: int) -> tuple[int, int, str] | None:
    """The span holding `offset` (spans are sorted and do not overlap)."""
    index = bisect.bisect_right([s[0] for s in spans], offset) - 1
    if index >= 0 and spans[index][0] <= offset < max(spans[index][1], spans[index][0] + 1):
        return spans[index]
    return None


def _line_range(text: str, start: int, end: int, number: int) -> tuple[int, int] | None:
    """Range of line `number` (1-based) within text[start:end]."""
    if number < 1:
        return None
    skip = getattr(text, "after_newlines", None)          # a text read by offsets (text_window.py)
    if skip is not None:
        position = skip(start, end, number - 1)
        if position < 0:
            return None
    else:
        position = start
        for _ in range(number - 1):
            position = text.find("\n", position, end)
            if position < 0:
                return None
            position += 1
    if position > end or (position == end and number > 1):
        return None
    stop = text.find("\n", position, end)
    return position, stop if stop >= 0 else end
