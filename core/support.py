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
from typing import Any, Iterable, Sequence


MESSAGE = "not found in anything the run read"
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,_]*(?:\.\d+)?(?![\w])")
_CODE = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*(?![\w-])"
                   r"|(?<![\w-])[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+(?![\w-])")
_QUOTED = re.compile(r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|`([^`\n]{2,80})`|(?<!\w)'([^'\n]{2,80})'(?!\w)")
_CITATION = re.compile(r"\[doc:[^\[\]\n]+\]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Support:
    values: list[str]                        # what the answer states, in order, once each
    unsupported: list[str] = field(default_factory=list)

    def public_dict(self) -> dict[str, Any]:
        return {"values": len(self.values), "unsupported": list(self.unsupported)}


def answer_values(answer: str) -> list[str]:
    """The numbers, codes and quoted names an answer states (citations left out)."""
    text = _CITATION.sub(" ", answer or "")
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        found.append(next(g for g in match.groups() if g).strip())
    unquoted = _QUOTED.sub(" ", text)
    codes = [m.group(0) for m in _CODE.finditer(unquoted)]
    found += codes
    rest = _CODE.sub(" ", unquoted)
    found += [m.group(0) for m in _NUMBER.finditer(rest)]
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


class _Haystack:
    def __init__(self, texts: Iterable[str]) -> None:
        joined = "\n".join(t for t in texts if t)
        self.text = _norm(joined)
        self.numbers = {n for n in (_number(m.group(0)) for m in _NUMBER.finditer(joined)) if n is not None}
        # numbers inside codes count too ("INV-2025" holds 2025)
        self.numbers |= {float(d) for d in re.findall(r"\d+", joined) if len(d) < 300}

    def holds(self, value: str) -> bool:
        if _NUMBER.fullmatch(value):
            n = _number(value)
            return n is not None and n in self.numbers
        return _norm(value) in self.text


def check(answer: str, read: Iterable[str], written: Iterable[str]) -> Support:
    """`read`: everything the run read; `written`: everything the root wrote (its replies)."""
    values = answer_values(answer)
    if not values:
        return Support([])
    seen, typed = _Haystack(read), _Haystack(written)
    return Support(values, [v for v in values if not seen.holds(v) and typed.holds(v)])


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
        if message.get("role") == "user":
            self.read.append(text)
        elif message.get("role") == "assistant":
            self.written.append(text)

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", "")
        if kind == "RootTurnStarted":
            for message in event.new_messages or ():
                self._message(message)
        elif kind == "RootReplied":
            self.written.append(event.text)
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
