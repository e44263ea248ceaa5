"""Is the answer supported by anything the run read? (DESIGN section 5)

    corpus = SupportCorpus(question)
    corpus.observe(event)                  # every event of the run, as it is emitted
    result = corpus.check(answer, cited_passages(answer, documents))
    result.unsupported                     # ["12345"]: "not found in anything the run read"

The values an answer states are its numbers, its codes and identifiers (a token
that mixes letters and digits, or words joined by - or _ with a digit or a capital:
QX-4471, INV_2025_07, v2.3) and its quoted names ("Acme Corp"). A value is supported when

- it appears in something the run read: a cell's output, a sub-call's reply, a
  message the root was sent (the question, the documents' metadata and prefix, the
  feedback), or a passage the answer cites; or
- the model never wrote it: it is in none of the root's replies (prose or code), so
  it was produced by running code over the documents (FINAL_VAR of a computed
  variable, an f-string of a match), not typed.

A value the root typed and that nothing the run read contains is unsupported: the
real 1.5B model answered "The value of SECRET_CODE in the log is 12345." when no
cell ever printed 12345. Numbers compare as numbers (1,204 = 1204 = 1204.0); the
other values case-insensitively, with runs of white space as one space. Small
numbers are not exempt: a made-up count is the commonest case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Sequence


MESSAGE = "not found in anything the run read"
_NUMBER_BODY = r"(?<![\w.])(?:(?<![\d:]-)[-+])?\d(?:[\d_]|,(?=\d))*(?:\.\d+)?(?!\w)"
_NUMBER = re.compile(_NUMBER_BODY)
_CODE = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*(?![\w-])"
                   r"|(?<![\w-])[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+(?![\w-])")
_QUOTED = re.compile(r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|`([^`\n]{2,80})`|(?<!\w)'([^'\n]{2,80})'(?!\w)")
_CITATION = re.compile(r"\[doc:[^\[\]\n]+\]")
_SPACES = re.compile(r"\s+")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?" \
         r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY_MONTH_YEAR = rf"\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH},?\s+\d{{4}}"
_MONTH_DAY_YEAR = rf"{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
_ISO_DATE = r"\d{4}-\d{2}-\d{2}"
_DATE = rf"(?:{_ISO_DATE}|{_DAY_MONTH_YEAR}|{_MONTH_DAY_YEAR}|{_MONTH}\s+\d{{4}})"
_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?"
_ZONE = r"(?:\s*(?:UTC|GMT|Z|[A-Z]{3,4}))?"
_QUARTER = r"(?:Q[1-4][\s,]*\d{4}|\d{4}[\s-]*Q[1-4])"
_SCALE = r"(?:\s?(?:k|m|bn|thousand|million|billion)\b)?"
_STOP = {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "its", "of",
         "on", "or", "than", "that", "the", "then", "this", "to", "was", "were", "with", "and", "but", "per", "so"}
# One claim each: a time range with its zone and date, a date, a quarter, an amount with its
# currency or its unit ("$371,822", "92 orders", "9 %"), a code, a quoted name, a number.
_CLAIM = re.compile(
    rf"(?P<range>{_TIME}{_ZONE}\s*(?:-|–|—|to|until)\s*{_TIME}{_ZONE}(?:,?\s*(?:on\s+)?{_DATE})?)"
    rf"|(?P<date>{_DATE}(?:,?\s*(?:at\s+)?{_TIME}{_ZONE})?)"
    rf"|(?P<time>{_TIME}{_ZONE})"
    rf"|(?P<quarter>{_QUARTER})"
    rf"|(?P<code>{_CODE.pattern})"
    rf"|(?P<money>[$€£¥]\s?{_NUMBER_BODY}{_SCALE}|{_NUMBER_BODY}{_SCALE}\s?(?:USD|EUR|GBP|dollars|euros)\b)"
    rf"|(?P<amount>{_NUMBER_BODY}{_SCALE}(?:\s?%|\s?percent\b|\s(?P<unit>[a-z]{{2,20}})\b)?)",
    re.IGNORECASE)


@dataclass(frozen=True)
class Support:
    values: list[str]                        # the claims the answer makes, in order, once each
    unsupported: list[str] = field(default_factory=list)

    def public_dict(self) -> dict[str, Any]:
        return {"values": len(self.values), "unsupported": list(self.unsupported)}


def answer_values(answer: str) -> list[str]:
    """The claims an answer makes (citations left out), each in its own words: quoted names,
    time ranges with their zone and date, dates, quarters, amounts with their currency or
    unit, codes and identifiers, numbers."""
    text = _CITATION.sub(" ", answer or "")
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        found.append(next(g for g in match.groups() if g).strip())
    rest = _QUOTED.sub(" ", text)
    for match in _CLAIM.finditer(rest):
        claim = match.group(0).strip()
        unit = match.group("unit")
        if unit and unit.lower() in _STOP:
            claim = claim[:match.start("unit") - match.start()].strip()
        found.append(claim)
    seen: set[str] = set()
    out = []
    for value in found:
        key = value.lower()
        if value and key not in seen:
            seen.add(key)
            out.append(value)
    return out


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").replace("_", ""))
    except ValueError:
        return None


def _norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def _month(word: str) -> int:
    word = word.lower().rstrip(".")
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(word[:3]))


def _dates(text: str) -> set[tuple]:
    """(year, month, day) for every date in `text`, and (year, month, None) for each month of one."""
    out: set[tuple] = set()
    for m in re.finditer(r"(\d{4})-(\d{2})-(\d{2})", text):
        out.add((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    for m in re.finditer(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH}),?\s+(\d{{4}})", text, re.IGNORECASE):
        out.add((int(m.group(3)), _month(m.group(2)), int(m.group(1))))
    for m in re.finditer(rf"({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})", text, re.IGNORECASE):
        out.add((int(m.group(3)), _month(m.group(1)), int(m.group(2))))
    out |= {(y, mo, None) for y, mo, _ in list(out)}
    for m in re.finditer(rf"({_MONTH})\s+(\d{{4}})", text, re.IGNORECASE):
        out.add((int(m.group(2)), _month(m.group(1)), None))
    return out


def _times(text: str) -> set[tuple[int, int]]:
    return {(int(h) % 24, int(mi)) for h, mi in re.findall(r"(?<!\d)(\d{1,2}):(\d{2})(?!\d)", text)}


def _quarters(text: str) -> set[tuple[int, int]]:
    out = {(int(y), int(q)) for q, y in re.findall(r"Q([1-4])[\s,]*(\d{4})", text, re.IGNORECASE)}
    return out | {(int(y), int(q)) for y, q in re.findall(r"(\d{4})[\s-]*Q([1-4])", text, re.IGNORECASE)}


class _Haystack:
    """What a set of texts holds. Nothing is built up front: most claims are found in the
    texts as they are, and the numbers, dates, times and quarters of a whole document
    (a regex pass each: ~12 ms over 20 KB) are parsed only when a claim needs them."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.joined = "\n".join(t for t in texts if t)

    def _contains(self, value: str) -> bool:
        """`value` appears as it is (case and runs of white space aside), found in the texts
        as they are: normalizing a whole document for each answer costs more than the search."""
        words = _norm(value).split(" ")
        return bool(words[0]) and re.search(r"\s+".join(map(re.escape, words)), self.joined, re.IGNORECASE) is not None

    @cached_property
    def numbers(self) -> set[float]:
        found = {n for n in (_number(m.group(0)) for m in _NUMBER.finditer(self.joined)) if n is not None}
        # numbers inside codes, dates and times count too ("INV-2025" holds 2025)
        return found | {float(d) for d in re.findall(r"\d+", self.joined) if len(d) < 300}

    @cached_property
    def dates(self) -> set[tuple]:
        return _dates(self.joined)

    @cached_property
    def times(self) -> set[tuple[int, int]]:
        return _times(self.joined)

    @cached_property
    def quarters(self) -> set[tuple[int, int]]:
        return _quarters(self.joined)

    def _holds_number(self, text: str) -> bool:
        n = _number(re.sub(r"[^\d.,+-]", "", text))
        return n is not None and n in self.numbers

    def holds(self, value: str) -> bool:
        """A claim is held when each of its parts is: its dates as dates (14 August 2024 =
        2024-08-14), its times as hours and minutes (09:42 is in 09:42:13), a quarter as a
        quarter (Q3 2024 = 2024-Q3), an amount's number as a number (1,204 = 1204.0)."""
        if self._contains(value):
            return True
        match = _CLAIM.fullmatch(value.strip())
        if match is None:
            return False
        if match.group("code"):
            return False
        if match.group("quarter"):
            return bool(_quarters(value) & self.quarters)
        if match.group("range") or match.group("date") or match.group("time"):
            dates = _dates(value)
            return (dates <= self.dates) and _times(value) <= self.times and bool(dates or _times(value))
        number = _NUMBER.search(value)
        return number is not None and self._holds_number(number.group(0))


def typed_text(reply: str) -> str:
    """What a root reply typed itself: its prose, and of its code the string literals and the
    numbers it assigns or hands to FINAL/str (`x = 4`, `FINAL("4")`), not the numbers code uses
    to compute (`lines[:4]`, `range(10)`, `round(x, 2)`): a value those produce was computed."""
    parts = []
    position = 0
    for match in _FENCE.finditer(reply or ""):
        parts.append(reply[position:match.start()])
        parts.append(_code_literals(match.group(1)))
        position = match.end()
    parts.append((reply or "")[position:])
    return "\n".join(parts)


_FENCE = re.compile(r"```[\w-]*\n(.*?)(?:```|\Z)", re.DOTALL)


def _code_literals(code: str) -> str:
    import ast
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code                      # cannot tell: all of it counts as typed
    typed = []
    kept = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return)) and isinstance(node.value, ast.Constant):
            kept.add(id(node.value))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("FINAL", "final", "str", "print"):
            kept |= {id(a) for a in node.args if isinstance(a, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and (isinstance(node.value, str) or id(node) in kept):
            typed.append(str(node.value))
    return "\n".join(typed)


def check(answer: str, read: Iterable[str], written: Iterable[str]) -> Support:
    """`read`: everything the run read; `written`: everything the root typed (core.support.typed_text
    of its replies; a plain call's reply as it is)."""
    values = answer_values(answer)
    if not values:
        return Support([])
    typed = _Haystack(written)
    maybe = [v for v in values if typed.holds(v)]       # what the root typed (small) first: the rest is
    if not maybe:                                       # computed, supported without reading everything
        return Support(values)
    seen = _Haystack(read)
    return Support(values, [v for v in maybe if not seen.holds(v)])


class SupportCorpus:
    """What one run read and what its root wrote, gathered from its events."""

    def __init__(self, question: str = "", messages: Sequence[dict] = ()) -> None:
        self.read: list[str] = [question]
        self.written: list[str] = []
        for message in messages:          # a follow-up's kept conversation
            self._message(message)

    def _message(self, message: dict) -> None:
        content = message.get("content")
        text = content if isinstance(content, str) else str(content or "")
        if message.get("role") == "user":       # not a note that sent an answer back: it quotes the answer
            self.read.append("\n".join(ln for ln in text.splitlines() if "did not end the run" not in ln))
        elif message.get("role") == "assistant":
            self.written.append(typed_text(text))

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", "")
        if kind == "RootTurnStarted":
            for message in event.new_messages or ():
                self._message(message)
        elif kind == "RootReplied":
            self.written.append(typed_text(event.text))
        elif kind == "CellExecuted":
            self.read += [event.stdout or "", event.stderr or "", event.output_for_model or ""]
        elif kind == "SubCallFinished":
            self.read.append(event.response or "")
        elif kind == "RunStarted":
            self.read.append(event.question or "")

    def check(self, answer: str, cited: Sequence[str] = ()) -> Support:
        """`cited`: the passages the answer's citations name (core.ingest.citations.cited_passages)."""
        return check(answer, [*self.read, *cited], self.written)


def describe(unsupported: Sequence[str]) -> str:
    """'12345, "Acme": not found in anything the run read'."""
    shown = ", ".join(unsupported[:8]) + (f" and {len(unsupported) - 8} more" if len(unsupported) > 8 else "")
    return f"{shown}: {MESSAGE}"


def unsupported_line(totals: dict[str, Any] | None) -> str | None:
    """'12345: not found in anything the run read' from a run's totals (totals["unsupported"]),
    or None when the answer was supported or not checked. For the answer card, History,
    the exports and the command line."""
    values = (totals or {}).get("unsupported")
    return describe([str(v) for v in values]) if values else None
