"""XLSX -> one block per sheet with openpyxl (read-only, cached values): each
spreadsheet row on its own line, cells tab-separated, so line N of a sheet's
block is row N ("sheet Sales row 12"). Empty rows stay as empty lines (the
numbering must hold); trailing empty cells and rows are dropped. With tables on,
each sheet is also a Table (typed cells; see tables.py)."""

from __future__ import annotations

import datetime as dt
import io

from core.ingest.formats.blocks import BlockText
from core.ingest.model import NO_TEXT, ExtractError, Extracted, Table


def extract(data: bytes, path: str = "", want_tables: bool = False,
            max_cells: int = 5_000_000) -> Extracted:
    import openpyxl

    from core.ingest.formats import tables

    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    found: list[Table] = []
    cells_seen = 0
    try:
        blocks = BlockText()
        for sheet in workbook.worksheets:
            if not hasattr(sheet, "iter_rows"):
                continue                     # chartsheet
            rows: list[str] = []
            values_rows: list[list[object]] = []
            for values in sheet.iter_rows(values_only=True):
                cells = [_cell(value) for value in values]
                while cells and not cells[-1]:
                    cells.pop()
                rows.append("\t".join(cells))
                if want_tables:
                    cells_seen += len(cells)
                    values_rows.append([tables.xlsx_value(v) for v in values[:len(cells)]])
            while rows and not rows[-1]:
                rows.pop()
            blocks.add(f"sheet {sheet.title}", "\n".join(rows))
            if want_tables and cells_seen <= max_cells:
                made = tables.table(path, sheet.title, values_rows)
                if made is not None:
                    found.append(made)
    finally:
        workbook.close()
    if not blocks.blocks_with_text:
        raise ExtractError(NO_TEXT, "workbook has no cell values")
    if cells_seen > max_cells:
        found = []                           # too big as data: text only
    return Extracted("xlsx", blocks.text(), tuple(blocks.spans), tables=tuple(found))


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return " ".join(str(value).split()) if isinstance(value, str) else str(value)
