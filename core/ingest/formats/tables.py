"""CSV/TSV text and XLSX cells -> Table (see model.Table): the REPL's `tables`.

Cells: empty -> None; numbers -> int or float ("1,234.5" and "007" stay text: a
thousands separator or a leading zero is not a plain number); "TRUE"/"FALSE"
stay text in CSV (bool only from XLSX); XLSX dates and times -> ISO strings.
Every row is padded to the header's width (longer rows widen the table: the
header gets None names), so `rows[i][j]` always exists. rows[i] is row i + 2.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable, Sequence

from core.cell_values import sniff_delimiter, typed  # noqa: F401 (typed: this module's API too)
from core.ingest.model import Table

def xlsx_value(value: object) -> object:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def table(path: str, sheet: str | None, rows: Iterable[Sequence[object]]) -> Table | None:
    """A Table from rows of values (the first is the header), None if all empty."""
    rows = rows if isinstance(rows, list) else list(rows)
    while rows and all(v is None for v in rows[-1]):
        rows.pop()
    if not rows:
        return None
    width = max(map(len, rows))
    padded = tuple(tuple(r) if len(r) == width else tuple(r) + (None,) * (width - len(r))
                   for r in rows)
    header = tuple(None if v is None else str(v) for v in padded[0])
    return Table(path, sheet, header, padded[1:])


def from_delimited(path: str, text: str, fmt: str, max_cells: int) -> tuple[Table, ...]:
    """CSV (delimiter sniffed among , ; |) or TSV text as one Table; () when it is
    over max_cells or not a table at all."""
    delimiter = "\t" if fmt == "tsv" else sniff_delimiter(text)
    rows, cells = [], 0
    try:
        for row in csv.reader(text.splitlines(keepends=True), delimiter=delimiter):   # a quoted cell keeps its newlines
            cells += len(row)
            if cells > max_cells:
                return ()
            rows.append(list(map(typed, row)))
    except csv.Error:
        return ()
    found = table(path, None, rows)
    return (found,) if found is not None else ()


def from_document_text(path: str, text: str, fmt: str, spans: Sequence = (),
                       max_cells: int = 5_000_000) -> tuple[Table, ...]:
    """Tables of a document that has only its text (a stored run's document):
    CSV/TSV parsed again; an XLSX sheet block split into tab-separated cells with
    types guessed as for CSV (so a text cell "12" comes back as 12)."""
    if fmt in ("csv", "tsv"):
        return from_delimited(path, text, fmt, max_cells)
    if fmt != "xlsx":
        return ()
    found, cells = [], 0
    for span in spans:
        start, end, address = ((span.start, span.end, span.address) if hasattr(span, "address")
                               else (int(span[0]), int(span[1]), str(span[2])))
        if not address.startswith("sheet "):
            continue
        body = text[start:end].split("\n", 1)
        lines = body[1].split("\n") if len(body) > 1 else []
        rows = [[typed(cell) for cell in line.split("\t")] if line else [] for line in lines]
        cells += sum(len(r) for r in rows)
        if cells > max_cells:
            return ()
        made = table(path, address[len("sheet "):], rows)
        if made is not None:
            found.append(made)
    return tuple(found)
