"""A grid written out: CSV (a `document` column, then one column per question, a row per
document) and XLSX (openpyxl: a sheet of answers, one of citations, and optionally a
comment on each answer with the passage it quotes).

    write_grid(load_grid(db, grid_id), Path("review.xlsx"))     # the suffix picks the format

Every text that came from a model or a file passes through escape_controls
(core/control_chars.py): control characters are written as `\\u00XX`, so a spreadsheet
never holds a character it cannot show (openpyxl refuses them) and nothing acts on them.
A cell shows its typed value; one without a value says why: "not stated", "(flagged: ...)",
"(failed: ...)", "(limited: ...)"; a queued cell is empty.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from pathlib import Path
from typing import Any

from core.control_chars import escape_controls
from core.grid.values import display

GRID_FORMATS = ("csv", "xlsx")
CITATION_COLUMNS = ("document", "question", "state", "value", "answer", "flag", "citation", "resolves",
                    "passage", "cost_usd", "run_id")


def cell_text(cell: dict | None) -> str:
    if cell is None:
        return ""
    state = cell["state"]
    if state == "done":
        if cell.get("value") is not None:
            return escape_controls(display(cell["value"]))
        flag = cell.get("flag") or "no value"
        return "not stated" if flag == "not stated" else escape_controls(f"(flagged: {flag})")
    if state in ("failed", "limited"):
        return escape_controls(f"({state}: {cell.get('error') or state})")
    return ""


def answer_rows(data: Any) -> list[list[str]]:
    rows = [["document", *(escape_controls(c.name) for c in data.columns)]]
    for i, row in enumerate(data.rows):
        rows.append([escape_controls(row.path), *(cell_text(data.cells.get((i, j))) for j in range(len(data.columns)))])
    return rows


def citation_rows(data: Any) -> list[list[Any]]:
    rows: list[list[Any]] = [list(CITATION_COLUMNS)]
    for (i, j), cell in sorted(data.cells.items()):
        base = [escape_controls(data.rows[i].path), escape_controls(data.columns[j].name), cell["state"],
                cell_text(cell), escape_controls(cell.get("answer") or ""), escape_controls(cell.get("flag") or "")]
        tail = [round(float(cell.get("cost_usd") or 0.0), 6), cell.get("run_id") or ""]
        cites = cell.get("citations") or []
        if not cites:
            rows.append([*base, "", "", "", *tail])
        for c in cites:
            rows.append([*base, escape_controls(c.get("reference", "")), "yes" if c.get("ok") else
                         escape_controls(f"no: {c.get('problem', '')}"), escape_controls(c.get("passage") or ""), *tail])
    return rows


def render_csv(data: Any) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(answer_rows(data))
    return out.getvalue()


def write_grid(data: Any, path: Path, *, comments: bool = True) -> Path:
    """Write the grid as CSV or XLSX (by the suffix), atomically: a crash leaves the old file."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in GRID_FORMATS:
        raise ValueError(f"cannot write a grid as {path.name}: the file must end in .csv or .xlsx")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        if fmt == "csv":
            Path(tmp).write_text(render_csv(data), encoding="utf-8", newline="")
        else:
            _write_xlsx(data, Path(tmp), comments)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _write_xlsx(data: Any, path: Path, comments: bool) -> None:
    from openpyxl import Workbook
    from openpyxl.comments import Comment
    book = Workbook()
    answers = book.active
    answers.title = "Answers"
    _fill(answers, answer_rows(data))
    answers.freeze_panes = "B2"
    if comments:
        for (i, j), cell in data.cells.items():
            passages = [c.get("passage") for c in cell.get("citations") or [] if c.get("ok") and c.get("passage")]
            note = [f"\u201c{escape_controls(p[:500])}\u201d" for p in passages[:2]]
            if cell.get("flag") and cell["flag"] != "not stated":
                note.append(escape_controls(f"Flag: {cell['flag']}"))
            if note:
                answers.cell(row=i + 2, column=j + 2).comment = Comment("\n".join(note), "RLM Studio")
    sheet = book.create_sheet("Citations")
    _fill(sheet, citation_rows(data))
    book.save(path)


def _fill(sheet: Any, rows: list[list[Any]]) -> None:
    """Rows into a sheet, every text kept as text: a model's "=HYPERLINK(...)" is not a formula."""
    for values in rows:
        sheet.append(values)
        for cell in sheet[sheet.max_row]:
            if isinstance(cell.value, str) and cell.value.startswith("="):
                cell.data_type = "s"
