"""A grid written out: CSV (a `document` column, then one column per question, a row per
document), XLSX (openpyxl: a sheet of answers, one of citations, and optionally a
comment on each answer with the passage it quotes) and an HTML report (the table, then
each cell's answer, state, cost and citations with their passages; self-contained, as a
run's HTML export: no network, no script, model text escaped, only http(s), mailto and
in-page links live).

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

GRID_FORMATS = ("csv", "xlsx", "html")
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
        raise ValueError(f"cannot write a grid as {path.name}: the file must end in .csv, .xlsx or .html")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        if fmt == "csv":
            Path(tmp).write_text(render_csv(data), encoding="utf-8", newline="")
        elif fmt == "html":
            Path(tmp).write_text(render_html(data), encoding="utf-8")
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


GRID_CSS = """
td.queued,td.running{color:var(--muted)}td.failed,td.limited{color:var(--bad)}td small{display:block;color:var(--muted)}
section.cell{border-top:1px solid var(--line);margin-top:18px}section.cell:target{outline:2px solid var(--acc)}
"""


def render_html(data: Any) -> str:
    """The grid as one self-contained page. Every text from a model or a file is escaped (and
    its control characters written as `\\u00XX`); answers are rendered as a run's are
    (core/exports/answer_render.py: raw HTML shown as text, unsafe links and images as text)."""
    # lazy: +3 modules (first use only)
    from core.exports.answer_render import answer_html
    # lazy: the run export's page style and policy (first use only)
    from core.exports.export_html import CSS, esc, pre
    counts = data.counts()
    policy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{esc(data.name)} · RLM Studio grid</title>", f"<style>{CSS}{GRID_CSS}</style></head><body>",
           f"<h1>{esc(data.name)}</h1>",
           f'<p class="muted">RLM Studio review grid <code>{esc(data.id)}</code></p>',
           f'<p><span class="status {esc(data.status)}">{esc(data.status)}</span> '
           f"{counts['done']} done, {counts['failed']} failed, {counts['limited']} limited, "
           f"{counts['queued'] + counts['running']} not run; cost ${data.cost_usd:.4f}"
           + (f" of a ${data.max_cost_usd:.4f} cap" if data.max_cost_usd else "") + "</p>",
           "<h2>Answers</h2><table><tr><th>document</th>"]
    out.extend(f'<th title="{esc(c.question)}">{esc(c.name)} <small class="muted">{esc(c.type)}</small></th>'
               for c in data.columns)
    out.append("</tr>")
    for i, row in enumerate(data.rows):
        out.append(f"<tr><th>{esc(row.path)}</th>")
        for j in range(len(data.columns)):
            cell = data.cells.get((i, j)) or {"state": "queued"}
            text = esc(cell_text(cell))
            if cell.get("run_id") or cell.get("answer"):
                text = f'<a href="#cell-{i}-{j}">{text or esc(cell["state"])}</a>'
            out.append(f'<td class="{esc(cell["state"])}">{text}<small>{esc(cell["state"])} · '
                       f'${float(cell.get("cost_usd") or 0):.4f}</small></td>')
        out.append("</tr>")
    out.append("</table><h2>Cells</h2>")
    for (i, j), cell in sorted(data.cells.items()):
        if not (cell.get("run_id") or cell.get("answer") or cell.get("error")):
            continue
        out.append(f'<section class="cell" id="cell-{i}-{j}"><h3><code>{esc(data.rows[i].path)}</code> · '
                   f"{esc(data.columns[j].name)}</h3><p><strong>{esc(data.columns[j].question)}</strong></p>")
        out.append(f'<p><span class="status {esc(cell["state"])}">{esc(cell["state"])}</span> '
                   f'<span class="muted">${float(cell.get("cost_usd") or 0):.4f}'
                   + (f' · run <code>{esc(cell["run_id"])}</code>' if cell.get("run_id") else "") + "</span></p>")
        if cell.get("answer") is not None:
            out.append(f'<div class="answer">{answer_html(cell["answer"])[0]}</div>')
        for label, value in (("Value", cell_text(cell) if cell["state"] == "done" else ""),
                             ("Flag", cell.get("flag")), ("Why", cell.get("error"))):
            if value:
                out.append(f'<p><span class="label">{label}:</span> {esc(value)}</p>')
        cites = cell.get("citations") or []
        if cites:
            out.append("<ul>")
            for c in cites:
                where = esc(c.get("reference") or f"{c.get('path')}:{c.get('address')}")
                if c.get("ok"):
                    out.append(f'<li><code>{where}</code>{pre(c.get("passage") or "", "quote")}</li>')
                else:
                    out.append(f'<li><code>{where}</code> <span class="err">does not resolve: '
                               f'{esc(c.get("problem") or "")}</span></li>')
            out.append("</ul>")
        out.append("</section>")
    out.append("</body></html>")
    return escape_controls("\n".join(out)) + "\n"
