"""The run's `context` as coverage and the sub-call sources search it, without holding the
text of a big read-back document: `=== path ===` headers and held texts as strings, a big
file's text as its TextWindow (core/ingest/text_window.py), read by offsets.

    context, bounds, warnings = joined_context(documents)
    bounds[i] == (path, start, end)          # document i's text is context[start:end]

`context` is a str when every text is held (the small case: one join, as before), else a
JoinedText that answers what core/trust/coverage.ContextMatcher asks of it: len, one
character, a slice, startswith at an offset, find, and the whole lines of its held parts.
"""

from __future__ import annotations

import bisect
from typing import Any, Iterator, Sequence


def _field(doc: Any, name: str, default: Any = None) -> Any:
    return doc.get(name, default) if isinstance(doc, dict) else getattr(doc, name, default)


class JoinedText:
    """Strings and TextWindows end to end, read as one text."""

    def __init__(self, parts: Sequence[Any]) -> None:
        merged: list[Any] = []
        for part in parts:                     # neighbouring strings joined: fewer boundaries
            if isinstance(part, str) and merged and isinstance(merged[-1], str):
                merged[-1] += part
            elif len(part):
                merged.append(part)
        self.parts = merged
        self.starts: list[int] = []
        position = 0
        for part in merged:
            self.starts.append(position)
            position += len(part)
        self.length = position

    def __len__(self) -> int:
        return self.length

    def _at(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def __getitem__(self, index: Any) -> str:
        if isinstance(index, int):
            if index < 0:
                index += self.length
            if not 0 <= index < self.length:
                raise IndexError("JoinedText index out of range")
            i = self._at(index)
            return self.parts[i][index - self.starts[i]]
        start, end, step = index.indices(self.length)
        if step != 1:
            raise TypeError("a JoinedText is read by [start:end] slices or one index")
        out = []
        i = self._at(start) if start < self.length else len(self.parts)
        while start < end and i < len(self.parts):
            lo = self.starts[i]
            out.append(self.parts[i][start - lo:min(end, lo + len(self.parts[i])) - lo])
            start = lo + len(self.parts[i])
            i += 1
        return "".join(out)

    def startswith(self, prefix: str, at: int = 0) -> bool:
        return self[at:at + len(prefix)] == prefix

    def find(self, sub: str, start: int = 0, end: int | None = None) -> int:
        """The first `sub` at or after `start`: in one part, or across two neighbouring ones."""
        end = self.length if end is None else min(end, self.length)
        start = max(start, 0)
        if not sub:
            return start if start <= end else -1
        i = self._at(start) if start < self.length else len(self.parts)
        while i < len(self.parts) and self.starts[i] < end:
            lo, part = self.starts[i], self.parts[i]
            hi = lo + len(part)
            found = part.find(sub, max(start - lo, 0), min(end, hi) - lo)
            if found >= 0:
                return lo + found
            if hi < end and len(sub) > 1:                 # a match that starts here and ends beyond
                a = max(start, hi - len(sub) + 1)
                across = self[a:min(end, hi + len(sub) - 1)].find(sub)
                if across >= 0:
                    return a + across
            i += 1
        return -1

    def count(self, sub: str, start: int = 0, end: int | None = None) -> int:
        """Occurrences of `sub` in [start, end), counted part by part (for one character, such
        as the newlines address_in counts, that is exact)."""
        end = self.length if end is None else min(end, self.length)
        total = 0
        for lo, part in zip(self.starts, self.parts):
            hi = lo + len(part)
            if hi > start and lo < end:
                total += part.count(sub, max(start - lo, 0), min(end, hi) - lo)
        return total

    def held_lines(self) -> Iterator[tuple[str, int]]:
        """(line, offset) of every whole line inside the held parts (a line that runs into a
        TextWindow is not whole here, and a window's lines are not listed: searched instead)."""
        for i, part in enumerate(self.parts):
            if not isinstance(part, str):
                continue
            position = self.starts[i]
            lines = part.split("\n")
            for j, line in enumerate(lines):
                if (j > 0 or i == 0) and (j < len(lines) - 1 or i == len(self.parts) - 1):
                    yield line, position
                position += len(line) + 1


def joined_context(documents: Sequence[Any]) -> tuple[Any, list[tuple[str, int, int]], list[str]]:
    """The run's `context` (see the module docstring), where each document's text sits in it,
    and a sentence for each document whose text could not be read back (measured as empty)."""
    from core.ingest.text_window import text_window
    parts: list[Any] = []
    bounds: list[tuple[str, int, int]] = []
    warnings: list[str] = []
    position = 0
    windowed = False
    for d in documents:
        path = str(_field(d, "path"))
        text: Any = text_window(d)
        windowed = windowed or text is not None
        if text is None:
            try:
                text = _field(d, "text", "") or ""
            except OSError as exc:       # read back from a file that changed or went: say so, measure the rest
                text = ""
                warnings.append(f"{path} is not measured: {exc}")
        head = f"=== {path} ===\n"
        parts += [head, text, "\n\n"]
        bounds.append((path, position + len(head), position + len(head) + len(text)))
        position += len(head) + len(text) + 2
    return (JoinedText(parts) if windowed else "".join(parts)), bounds, warnings
