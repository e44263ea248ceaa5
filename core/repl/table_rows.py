"""A CSV/TSV document's table read from `context` itself: the REPL's `tables` entry of a
document too big to be parsed into rows up front (read a piece at a time, or over the
5,000,000 cells of core/ingest/formats/tables.from_delimited).

    table = {"path", "sheet": None, "header": (...), "rows": Rows}
    rows = table["rows"]; len(rows); rows[i]; rows[a:b]; for row in rows
    where(rows.offset(i))        # "sales.csv:line 1235": cite it as [doc:sales.csv:line 1235]

`rows[i]` is the table's row i (spreadsheet row i + 2, the header is row 1), parsed when
read, its cells typed as the parsed tables' are (core/cell_values.typed) and padded to the header's
width (a longer row keeps its extra cells). Nothing holds the rows: an index of where every
CHUNK-th character's row starts (a row count and an offset per 64k characters, ~3,000 pairs
for 200 MB) is built on first use by counting newlines, outside quoted cells; a row is parsed
from the nearest indexed point before it.
"""

from __future__ import annotations

import bisect
import csv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

CHUNK = 64 * 1024


class Rows:
    __slots__ = ("_text", "_base", "_chars", "_delimiter", "_width", "_starts", "_before", "_count")

    def __init__(self, text: str, base: int, chars: int, delimiter: str) -> None:
        self._text, self._base, self._chars, self._delimiter = text, base, chars, delimiter
        self._starts: list[int] = []      # offsets (into the document) where a row starts ...
        self._before: list[int] = []      # ... and how many rows (header included) precede it
        self._count = -1
        self._width = 0

    # ------------------------------------------------------------------ the sequence

    def __len__(self) -> int:
        self._index()
        return max(self._count - 1, 0)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            return list(self._rows(start + 1, max(stop - start, 0)))
        count = len(self)
        at = index + count if index < 0 else index
        if not 0 <= at < count:
            raise IndexError(f"row index {index} out of range (0..{count - 1})")
        return next(self._rows(at + 1, 1))

    def __iter__(self) -> Iterator[tuple]:
        return self._rows(1, None)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __repr__(self) -> str:
        return (f"<{len(self):,} rows, parsed when read: rows[i], rows[a:b], a for loop; "
                "where(rows.offset(i)) names row i's line>")

    def header(self) -> tuple:
        first = next(self._parsed(0, 0, 1), [])
        self._width = len(first)
        return tuple(None if not cell else cell for cell in first)

    def offset(self, index: int) -> int:
        """The offset in `context` where row `index` starts."""
        count = len(self)
        at = index + count if index < 0 else index
        if not 0 <= at < count:
            raise IndexError(f"row index {index} out of range (0..{count - 1})")
        return self._base + self._start_of(at + 1)

    # ------------------------------------------------------------------ reading

    def _rows(self, first: int, count: int | None) -> Iterator[tuple]:
        """Rows `first`.. (header = 0), `count` of them (None: to the end), typed and padded."""
        from core.cell_values import typed
        self._index()
        if not self._width:
            self.header()
        width = self._width
        k = max(bisect.bisect_right(self._before, first) - 1, 0)
        for row in self._parsed(self._starts[k] if self._starts else 0, first - (self._before[k] if self._before else 0),
                                count):
            cells = tuple(map(typed, row))
            yield cells + (None,) * (width - len(cells)) if len(cells) < width else cells

    def _parsed(self, start: int, skip: int, count: int | None) -> Iterator[list[str]]:
        reader = csv.reader(self._lines(start), delimiter=self._delimiter)
        try:
            for _ in range(skip):
                next(reader)
            n = 0
            for row in reader:
                if count is not None and n >= count:
                    return
                n += 1
                yield row
        except StopIteration:
            return

    def _lines(self, start: int) -> Iterator[str]:
        text, end = self._text, self._base + self._chars
        at = self._base + start
        while at < end:
            newline = text.find("\n", at, end)
            stop = end if newline < 0 else newline + 1
            yield text[at:stop]                   # with its newline: a quoted cell keeps it
            at = stop

    def _start_of(self, row: int) -> int:
        """Where row `row` (header = 0) starts, from the nearest indexed point before it."""
        k = max(bisect.bisect_right(self._before, row) - 1, 0)
        at, n = self._starts[k], self._before[k]
        text, end, quoted = self._text, self._base + self._chars, False
        pos = self._base + at
        while n < row:
            newline = text.find("\n", pos, end)
            if newline < 0:
                break
            quoted ^= text.count('"', pos, newline) % 2 == 1
            pos = newline + 1
            n += 0 if quoted else 1
        return pos - self._base

    def _index(self) -> None:
        """Row counts at the first row start of every CHUNK characters: newlines counted in C
        where a chunk has no quote, line by line (quote parity) where it has."""
        if self._count >= 0:
            return
        text, base, end = self._text, self._base, self._base + self._chars
        starts, before = [0], [0]
        rows, pos, quoted = 0, base, False
        while pos < end:
            stop = text.find("\n", min(pos + CHUNK, end), end)
            stop = end if stop < 0 else stop + 1
            if not quoted and text.find('"', pos, stop) < 0:
                rows += text.count("\n", pos, stop)
            else:
                line = pos
                while line < stop:
                    newline = text.find("\n", line, stop)
                    nxt = stop if newline < 0 else newline + 1
                    quoted ^= text.count('"', line, nxt) % 2 == 1
                    if newline >= 0 and not quoted:
                        rows += 1
                    line = nxt
            pos = stop
            if pos < end and not quoted:
                starts.append(pos - base)
                before.append(rows)
        if self._chars and text[end - 1] != "\n" and not quoted:
            rows += 1                              # a last row without its newline
        self._starts, self._before, self._count = starts, before, rows


def lazy_table(path: str, text: str, base: int, chars: int, fmt: str) -> dict[str, Any] | None:
    """The `tables` entry of a CSV/TSV document held only as text (see the module docstring),
    None when it has no header row."""
    sample = text[base:base + min(chars, 20000)]
    if fmt == "tsv":
        delimiter = "\t"
    else:
        from core.cell_values import sniff_delimiter
        delimiter = sniff_delimiter(sample)
    rows = Rows(text, base, chars, delimiter)
    header = rows.header()
    if not header:
        return None
    return {"path": path, "sheet": None, "header": header, "rows": rows}
