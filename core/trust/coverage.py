"""Coverage: which stretches of which documents the model actually looked at.

It reads the one fold of a run's events (core/run_record.py), event by event, so the
GUI can update it live and a replay gives the same result:

    cov = Coverage(documents)                # the run's documents (a big read-back text is read by offsets)
    for event in events: changed = cov.apply(event)
    cov.report()                             # per document: read/unread intervals, percent; total; warnings

What counts as looked at:
  - what a cell showed the root (CellExecuted.output_for_model, at any depth):
    printed stretches of document text, found back in `context` line by line
    (lines of at least `min_chars` characters; a line that is not a whole line
    of the context is searched as a substring, and a line that only partly
    holds document text, like "Summarise: <text>", is grown from a probe;
    a bounded number of such searches per text, each scans the context);
  - what a sub-call's prompt contained (SubCallStarted.prompt): the sub model
    read all of it;
  - a document a plain call's prompt carried whole (RootTurnStarted.plain_call; its
    messages hold `=== path ===` and the full text): read in full, so a plain call that
    carried every document covers 100%.
A sub-call whose prompt carries more than `forward_warn` (80%) of the whole
context gets a warning: it forwards the context without splitting it.
"""

from __future__ import annotations

import re

import bisect
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

from core.run_record import RunRecord
from core.trust.joined import joined_context

MIN_CHARS = 40
FORWARD_WARN = 0.8
MAX_SEARCHES = 64          # substring searches per text (each scans the context once) ...
SCAN_CHARS = 200_000_000   # ... and at most about this many context characters scanned per text


@dataclass(frozen=True)
class DocumentCoverage:
    path: str
    chars: int
    read: list[tuple[int, int]]      # [start, end) in the document's text, merged, sorted
    unread: list[tuple[int, int]]
    read_chars: int
    percent: float
    searched: bool = False           # code ran over it (a search, a count), whether or not shown


@dataclass(frozen=True)
class CoverageReport:
    documents: list[DocumentCoverage]
    total_chars: int
    read_chars: int
    percent: float
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Intervals:
    """Merged, sorted [start, end) intervals."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, start: int, end: int) -> bool:
        if end <= start:
            return False
        i = bisect.bisect_left(self.ends, start)          # first interval that ends at/after start
        j = bisect.bisect_right(self.starts, end)         # intervals starting at/before end
        if i < j:
            if self.starts[i] <= start and self.ends[j - 1] >= end and i == j - 1:
                return False
            start, end = min(start, self.starts[i]), max(end, self.ends[j - 1])
        self.starts[i:j] = [start]
        self.ends[i:j] = [end]
        return True

    def clipped(self, lo: int, hi: int) -> list[tuple[int, int]]:
        i = bisect.bisect_right(self.ends, lo)
        out = []
        while i < len(self.starts) and self.starts[i] < hi:
            out.append((max(self.starts[i], lo) - lo, min(self.ends[i], hi) - lo))
            i += 1
        return out

    def total(self) -> int:
        return sum(e - s for s, e in zip(self.starts, self.ends))


class ContextMatcher:
    """Finds stretches of `context` inside a text (printed output, a prompt). `context` is a
    str, or a core.trust.joined.JoinedText whose big texts are read by offsets."""

    def __init__(self, context: Any, *, min_chars: int = MIN_CHARS) -> None:
        self.context = context
        self.min_chars = min_chars
        self._lines: dict[str, list[int]] | None = None

    def _index(self) -> dict[str, list[int]]:
        if self._lines is None:
            lines: dict[str, list[int]] = {}
            if isinstance(self.context, str):
                position = 0
                for line in self.context.split("\n"):
                    if len(line) >= self.min_chars:
                        lines.setdefault(line, []).append(position)
                    position += len(line) + 1
            else:                       # a JoinedText (core/trust/joined.py): big texts are searched
                for line, position in self.context.held_lines():
                    if len(line) >= self.min_chars:
                        lines.setdefault(line, []).append(position)
            self._lines = lines
        return self._lines

    def spans(self, text: str) -> list[tuple[int, int]]:
        """[start, end) ranges of `context` that `text` reproduces."""
        lines = [line.rstrip("\r") for line in text.split("\n")]
        where: list[int | None] = [None] * len(lines)      # context offset of each resolved line
        index, context = self._index(), self.context
        # 1. whole lines of the context that are long enough to be telling
        previous = -2
        for i, line in enumerate(lines):
            hits = index.get(line) if len(line) >= self.min_chars else None
            if hits:
                where[i] = previous + 1 if previous + 1 in hits[:64] else hits[0]
                previous = where[i] + len(line)
        # 2. their neighbours, short or partial, when the context goes on the same way
        #    (blank lines too: a fully printed document is read in full, paragraph breaks included)
        for i in range(len(lines)):
            if where[i] is not None and i + 1 < len(lines) and where[i + 1] is None:
                after = where[i] + len(lines[i]) + 1
                end = after + len(lines[i + 1])
                if after <= len(context) and context[after - 1] == "\n" and \
                        context.startswith(lines[i + 1], after) and (end == len(context) or context[end] == "\n"):
                    where[i + 1] = after
        for i in range(len(lines) - 1, 0, -1):
            if where[i] is not None and where[i - 1] is None:
                end = where[i] - 1
                start = end - len(lines[i - 1])
                if start >= 0 and context[end] == "\n" and context.startswith(lines[i - 1], start) and \
                        (start == 0 or context[start - 1] == "\n"):
                    where[i - 1] = start
        found = [(w, w + len(lines[i]) + (1 if i + 1 < len(lines) and where[i + 1] == w + len(lines[i]) + 1
                                            else 0))
                 for i, w in enumerate(where) if w is not None]
        # 3. the rest: runs of unresolved lines, as blocks (bounded number of searches)
        budget = [max(4, min(MAX_SEARCHES, SCAN_CHARS // max(len(context), 1)))]
        i = 0
        while i < len(lines):
            if where[i] is not None:
                i += 1
                continue
            j = i
            while j < len(lines) and where[j] is None:
                j += 1
            found += self._blocks(lines[i:j], budget)
            i = j
        return found

    def _blocks(self, lines: list[str], budget: list[int]) -> list[tuple[int, int]]:
        """A run of printed lines: the whole run, else without its first or last line or both (a
        "[cell output]" header, a remark), else each half; single long lines are grown."""
        while lines and not lines[0]:
            lines = lines[1:]
        while lines and not lines[-1]:
            lines = lines[:-1]
        block = "\n".join(lines)
        if len(block) < self.min_chars or budget[0] <= 0:
            return []
        budget[0] -= 1
        start = self.context.find(block)
        if start >= 0:
            return [(start, start + len(block))]
        if len(lines) == 1:
            budget[0] -= 1
            grown = self._grow(block)
            return [grown] if grown else []
        for part in (lines[1:], lines[:-1], lines[1:-1]):
            text = "\n".join(part)
            if len(text) >= self.min_chars and budget[0] > 0:
                budget[0] -= 1
                start = self.context.find(text)
                if start >= 0:
                    return [(start, start + len(text))]
        middle = len(lines) // 2
        return self._blocks(lines[:middle], budget) + self._blocks(lines[middle:], budget)

    def _grow(self, line: str) -> tuple[int, int] | None:
        """A line holding document text plus words of its own ("Summarise: <text>"): find a
        probe of it (its middle, else its end, else its start), then extend the match both
        ways while the characters agree."""
        size = max(self.min_chars // 2, 8)
        probes = ([len(line) // 2] if len(line) >= 3 * size else []) + [len(line) - size, 0]
        context = self.context
        for at_line in probes:
            probe = line[at_line:at_line + size]
            at = context.find(probe)
            if at < 0:
                continue
            left, c_left = at_line, at
            while left > 0 and c_left > 0 and line[left - 1] == context[c_left - 1]:
                left, c_left = left - 1, c_left - 1
            right, c_right = at_line + size, at + size
            while right < len(line) and c_right < len(context) and line[right] == context[c_right]:
                right, c_right = right + 1, c_right + 1
            if c_right - c_left >= self.min_chars:
                return c_left, c_right
        return None


def _field(doc: Any, name: str, default: Any = None) -> Any:
    return doc.get(name, default) if isinstance(doc, dict) else getattr(doc, name, default)


class Coverage:
    def __init__(self, documents: Sequence[Any], *, min_chars: int = MIN_CHARS,
                 forward_warn: float = FORWARD_WARN) -> None:
        context, self.bounds, self.warnings = joined_context(documents)
        self.matcher = ContextMatcher(context, min_chars=min_chars)
        self.total_chars = sum(b - a for _, a, b in self.bounds)
        self.forward_warn = forward_warn
        self.read = Intervals()
        self.searched: set[str] = set()      # documents the code ran over (not what a model saw)
        self.events = 0
        self.record = RunRecord()            # the one fold of the run's events: its cells and calls

    def apply(self, event: Any) -> bool:
        """Fold one event into the run's record; True when coverage or the warnings changed."""
        self.events += 1
        change = self.record.apply(event)
        if getattr(event, "type", "") == "RootTurnStarted" and getattr(event, "plain_call", False):
            return self._carried(event.new_messages or ())
        if change.kind == "cell_added":
            cell = self.record.cells[change.cell_id]
            reached = self._code_reach(cell.code) if not cell.is_syntax_error else set()
            grew = not reached <= self.searched
            self.searched |= reached
            return self._add(self.matcher.spans(cell.output_for_model)) or grew
        if change.kind == "node_added":
            node = self.record.nodes[change.updated[0]]
            spans = self.matcher.spans(node.prompt)
            changed = self._add(spans)
            forwarded_in = Intervals()            # document characters, each counted once
            for a, b in spans:
                forwarded_in.add(a, b)
            forwarded = sum(b - a for _, lo, hi in self.bounds for a, b in forwarded_in.clipped(lo, hi))
            if self.total_chars and forwarded > self.forward_warn * self.total_chars:
                self.warnings.append(
                    f"sub-call {node.id} forwards {forwarded / self.total_chars:.0%} of the context "
                    f"({forwarded:,} of {self.total_chars:,} characters) without splitting it")
                changed = True
            return changed
        return False

    def _carried(self, messages: Sequence[dict]) -> bool:
        """Each document that a root prompt's user message holds whole, header and text, is read."""
        prompts = [m.get("content") for m in messages
                   if m.get("role") == "user" and isinstance(m.get("content"), str)]
        changed = False
        longest = max(map(len, prompts), default=0)
        for path, lo, hi in self.bounds:
            head = len(f"=== {path} ===\n")
            if not 0 < hi - lo <= longest - head:           # no prompt could hold it whole: not read
                continue
            whole = self.matcher.context[lo - head:hi]
            if any(whole in text for text in prompts if len(text) >= len(whole)):
                changed = self._add([(lo, hi)]) or changed
                self.searched.add(path)
        return changed

    def _code_reach(self, code: str) -> set[str]:
        """The documents a cell's code ran over: those it names (by path or file name),
        else every one when it goes through `context` or `documents` as a whole."""
        paths = [p for p, _, _ in self.bounds]
        named = {p for p in paths if p in code or (len(p.rsplit("/", 1)[-1]) > 3 and p.rsplit("/", 1)[-1] in code)}
        if named:
            return named
        if re.search(r"\b(context|documents)\b", code):
            return set(paths)
        return set()

    def _add(self, spans: Iterable[tuple[int, int]]) -> bool:
        changed = False
        for a, b in spans:
            changed = self.read.add(a, b) or changed
        return changed

    def report(self) -> CoverageReport:
        docs = []
        read_total = 0
        for path, lo, hi in self.bounds:
            read = self.read.clipped(lo, hi)
            unread, cursor = [], 0
            for a, b in read:
                if a > cursor:
                    unread.append((cursor, a))
                cursor = b
            if cursor < hi - lo:
                unread.append((cursor, hi - lo))
            chars = sum(b - a for a, b in read)
            read_total += chars
            docs.append(DocumentCoverage(path, hi - lo, read, unread, chars,
                                         100.0 * chars / (hi - lo) if hi > lo else 100.0,
                                         path in self.searched))
        percent = 100.0 * read_total / self.total_chars if self.total_chars else 100.0
        return CoverageReport(docs, self.total_chars, read_total, percent, list(self.warnings))

    @classmethod
    def of_events(cls, documents: Sequence[Any], events: Iterable[Any], **kw: Any) -> "Coverage":
        cov = cls(documents, **kw)
        for e in events:
            cov.apply(e)
        return cov


def coverage_of_run(store: Any, run_id: str) -> CoverageReport:
    return Coverage.of_events(store.documents(run_id), store.iter_events(run_id)).report()
