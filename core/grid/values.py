"""A cell's answer as its column's type: parsed and checked, never guessed.

    parse_value("date", "2024-03-05 [doc:a.txt:line 3]")   # Parsed("2024-03-05", None)
    parse_value("date", "early March")                      # Parsed(None, "unparseable date: ...")

`value` is JSON-ready (a str, a float, a bool or a list of str); `flag` says why there is
no value, or what is doubtful about it. "not stated" (the document does not say) is a
value of None with the flag "not stated".
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from core.ingest.citations import _BRACKET

NOT_STATED = re.compile(r"^\W*(not stated|not found|none|n/?a|unknown|not mentioned)\W*$", re.I)
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+")
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_MONTHS = {m.lower(): i for i, m in enumerate(
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
     "November", "December"], 1)}
_MONTHS.update({k[:3]: v for k, v in list(_MONTHS.items())})
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+)\.?,?\s+(\d{4})\b")
_MONTH_DAY_YEAR = re.compile(r"\b([A-Za-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b")
_SLASHED = re.compile(r"\b(\d{1,4})[/.](\d{1,2})[/.](\d{1,4})\b")


@dataclass(frozen=True)
class Parsed:
    value: Any
    flag: str | None = None


def strip_citations(answer: str) -> str:
    return _BRACKET.sub("", answer or "").strip()


def parse_value(kind: str, answer: str | None, document_text: str | None = None) -> Parsed:
    body = strip_citations(answer or "")
    if not body:
        return Parsed(None, "empty answer")
    if NOT_STATED.match(body):
        return Parsed(None, "not stated")
    return _PARSERS[kind](body, document_text)


def _text(body: str, _doc: str | None) -> Parsed:
    return Parsed(body)


def _number(body: str, _doc: str | None) -> Parsed:
    found = _NUMBER.findall(body)
    if not found:
        return Parsed(None, f"no number in the answer: {body[:80]!r}")
    value = float(found[0].replace(",", ""))
    value = int(value) if value.is_integer() and "." not in found[0] else value
    return Parsed(value, f"{len(found)} numbers in the answer; the first is kept" if len(set(found)) > 1 else None)


def _date(body: str, _doc: str | None) -> Parsed:
    candidates: list[tuple[int, int, int]] = []
    for y, m, d in _ISO.findall(body):
        candidates.append((int(y), int(m), int(d)))
    for d, month, y in _DAY_MONTH_YEAR.findall(body):
        if month.lower() in _MONTHS:
            candidates.append((int(y), _MONTHS[month.lower()], int(d)))
    for month, d, y in _MONTH_DAY_YEAR.findall(body):
        if month.lower() in _MONTHS:
            candidates.append((int(y), _MONTHS[month.lower()], int(d)))
    if not candidates:
        for a, b, c in _SLASHED.findall(body):
            if len(a) == 4:
                candidates.append((int(a), int(b), int(c)))
            elif int(a) <= 12 and int(b) <= 12 and a != b:
                return Parsed(None, f"ambiguous date {a}/{b}/{c}: day and month could be either")
            else:
                day, month = (int(a), int(b)) if int(a) > 12 else (int(b), int(a))
                candidates.append((int(c), month, day))
    valid = []
    for y, m, d in candidates:
        try:
            valid.append(dt.date(y, m, d).isoformat())
        except ValueError:
            pass
    if not valid:
        return Parsed(None, f"unparseable date: {body[:80]!r}")
    if len(set(valid)) > 1:
        return Parsed(valid[0], f"{len(set(valid))} dates in the answer; the first is kept")
    return Parsed(valid[0])


def _yes_no(body: str, _doc: str | None) -> Parsed:
    word = re.match(r"\W*(\w+)", body)
    first = word.group(1).lower() if word else ""
    if first in ("yes", "true", "y"):
        return Parsed(True)
    if first in ("no", "false", "n"):
        return Parsed(False)
    return Parsed(None, f"not a yes or no: {body[:80]!r}")


def _list(body: str, _doc: str | None) -> Parsed:
    lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
    if len(lines) == 1:
        lines = [p.strip() for p in re.split(r";|,(?![^()]*\))", lines[0]) if p.strip()]
    items = [re.sub(r"^(?:[-*\u2022]|\d+[.)])\s*", "", ln).strip() for ln in lines]
    return Parsed([i for i in items if i])


def _excerpt(body: str, doc: str | None) -> Parsed:
    quoted = re.search(r"[\"\u201c](.+?)[\"\u201d]", body, re.S)
    passage = (quoted.group(1) if quoted else body).strip()
    if doc is not None and _squash(passage) not in _squash(doc):
        return Parsed(passage, "the excerpt is not word for word in the document")
    return Parsed(passage)


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


_PARSERS = {"text": _text, "number": _number, "date": _date, "yes/no": _yes_no, "list": _list,
            "excerpt": _excerpt}


def display(value: Any) -> str:
    """A parsed value as one cell of an export."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "; ".join(map(str, value))
    return str(value)
