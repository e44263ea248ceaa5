"""Grids in the runs database (tables grids, grid_columns, grid_rows, grid_cells;
migration m010_grids). Functions take a sqlite-utils Database; open_grid and requeue
are a transaction each; the cell writes (start_cell, finish_cell, ...) go inside the
caller's transaction: a running grid's are the batches of its EventWriter, committed
with its runs' events, so a grid killed at any moment keeps every cell that ended.

    grid_id, created = open_grid(db, columns, rows, max_cost_usd=5.0)
    writer.submit(lambda db: finish_cell(db, grid_id, CellResult(...)))
    load_grid(db, grid_id)        # GridData: columns, rows, cells

The same columns over the same documents (by path and content) are the same grid:
opening it again resumes it (cells left running by a process that died are queued).
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Sequence

from core.grid.model import Column, Row
from core.store.db import write_transaction


@dataclass(frozen=True)
class CellResult:
    row: int
    col: int
    state: str                     # done | failed | limited
    answer: str | None = None
    value: Any = None
    flag: str | None = None
    error: str | None = None
    cost_usd: float = 0.0
    run_id: str | None = None
    citations: Sequence[dict] = ()


@dataclass
class GridData:
    id: str
    name: str
    status: str
    max_cost_usd: float | None
    cost_usd: float
    columns: list[Column]
    rows: list[Row]
    cells: dict[tuple[int, int], dict] = field(default_factory=dict)
    created_utc: float = 0.0
    updated_utc: float = 0.0

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in ("queued", "running", "done", "failed", "limited")}
        for cell in self.cells.values():
            out[cell["state"]] = out.get(cell["state"], 0) + 1
        return out


def grid_key(columns: Sequence[Column], rows: Sequence[Row]) -> str:
    body = json.dumps([[c.public_dict() for c in columns], [[r.path, r.sha256] for r in rows]], sort_keys=True)
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def open_grid(db: Any, columns: Sequence[Column], rows: Sequence[Row], *, name: str = "",
              max_cost_usd: float | None = None, config: dict | None = None) -> tuple[str, bool]:
    """The grid of these columns over these rows, created with every cell queued (a row
    that could not be read: its cells failed with why), or found and made ready to resume.
    Returns (grid id, created)."""
    key = grid_key(columns, rows)
    now = time.time()
    with write_transaction(db):
        found = db.execute("SELECT id FROM grids WHERE key = ?", [key]).fetchone()
        if found:
            # Cells a dead process left running are queued again; started_utc stays, so that a
            # cell whose run ended before the process died takes that run (interrupted_cells).
            db.execute("UPDATE grid_cells SET state = 'queued' WHERE grid_id = ? AND state = 'running'", [found[0]])
            db.execute("UPDATE grids SET max_cost_usd = ?, updated_utc = ? WHERE id = ?",
                       [max_cost_usd, now, found[0]])
            return found[0], False
        grid_id = uuid.uuid4().hex
        db.execute("INSERT INTO grids (id, key, name, status, max_cost_usd, config_json, created_utc, "
                   "updated_utc) VALUES (?, ?, ?, 'queued', ?, ?, ?, ?)",
                   [grid_id, key, name or f"{len(columns)} questions x {len(rows)} documents", max_cost_usd,
                    json.dumps(config or {}, default=str), now, now])
        db.conn.executemany(
            "INSERT INTO grid_columns (grid_id, position, name, question, type, instruction) VALUES (?, ?, ?, ?, ?, ?)",
            [(grid_id, i, c.name, c.question, c.type, c.instruction) for i, c in enumerate(columns)])
        db.conn.executemany(
            "INSERT INTO grid_rows (grid_id, position, path, sha256, chars, error) VALUES (?, ?, ?, ?, ?, ?)",
            [(grid_id, i, r.path, r.sha256, r.chars, r.error) for i, r in enumerate(rows)])
        db.conn.executemany(
            "INSERT INTO grid_cells (grid_id, row, col, state, error, finished_utc) VALUES (?, ?, ?, ?, ?, ?)",
            [(grid_id, i, j, "failed" if r.error else "queued", r.error, now if r.error else None)
             for i, r in enumerate(rows) for j in range(len(columns))])
        reuse_answers(db, grid_id)
    return grid_id, True


def reuse_answers(db: Any, grid_id: str) -> int:
    """A new grid that shares questions and documents with earlier grids (a column or rows
    added to a finished grid) takes their done cells instead of asking again: the same
    question (name, text, type, instruction) of the same document (path and content). The
    answer keeps its run; its cost stays the earlier grid's. Call inside a transaction."""
    found = db.execute(
        "SELECT nrow.position, ncol.position, oc.answer, oc.value_json, oc.flag, oc.run_id, oc.citations_json, "
        "oc.grid_id FROM grid_columns ncol JOIN grid_rows nrow ON nrow.grid_id = ncol.grid_id "
        "JOIN grid_columns ocol ON ocol.name = ncol.name AND ocol.question = ncol.question AND ocol.type = ncol.type "
        "AND coalesce(ocol.instruction, '') = coalesce(ncol.instruction, '') AND ocol.grid_id != ncol.grid_id "
        "JOIN grid_rows orow ON orow.grid_id = ocol.grid_id AND orow.path = nrow.path AND orow.sha256 = nrow.sha256 "
        "JOIN grid_cells oc ON oc.grid_id = ocol.grid_id AND oc.row = orow.position AND oc.col = ocol.position "
        "AND oc.state = 'done' WHERE ncol.grid_id = ? AND nrow.error IS NULL ORDER BY oc.finished_utc",
        [grid_id]).fetchall()
    latest = {(row, col): rest for row, col, *rest in found}      # the newest answer of each cell wins
    for (row, col), (answer, value, flag, run_id, cites, source) in latest.items():
        db.execute("UPDATE grid_cells SET state = 'done', answer = ?, value_json = ?, flag = ?, run_id = ?, "
                   "citations_json = ?, error = ?, finished_utc = ? WHERE grid_id = ? AND row = ? AND col = ?",
                   [answer, value, flag, run_id, cites, f"answer taken from grid {source[:12]} (same question, "
                    "same document)", time.time(), grid_id, row, col])
    return len(latest)


def requeue(db: Any, grid_id: str, states: Sequence[str] = ("failed", "limited"),
            cells: Sequence[tuple[int, int]] | None = None) -> int:
    """Put cells in `states` (all of them, or only `cells`) back in the queue; a cell of a
    row that could not be read stays failed. Returns how many were queued."""
    marks = ",".join("?" for _ in states)
    query = (f"UPDATE grid_cells SET state = 'queued', error = NULL, flag = NULL, started_utc = NULL "
             f"WHERE grid_id = ? AND state IN ({marks}) AND row NOT IN "
             f"(SELECT position FROM grid_rows WHERE grid_id = ? AND error IS NOT NULL)")
    with write_transaction(db):
        if cells is None:
            return db.execute(query, [grid_id, *states, grid_id]).rowcount
        return sum(db.execute(query + " AND row = ? AND col = ?", [grid_id, *states, grid_id, r, c]).rowcount
                   for r, c in cells)


def queued_cells(db: Any, grid_id: str) -> list[tuple[int, int]]:
    """The cells still to run, column by column (a column's cells run side by side)."""
    return [tuple(r) for r in db.execute(
        "SELECT row, col FROM grid_cells WHERE grid_id = ? AND state = 'queued' ORDER BY col, row", [grid_id])]


def start_cell(db: Any, grid_id: str, row: int, col: int, run_id: str) -> None:
    """Call inside a transaction (a grid's writes go through its EventWriter: core/grid/runner.py)."""
    db.execute("UPDATE grid_cells SET state = 'running', run_id = ?, started_utc = ? "
               "WHERE grid_id = ? AND row = ? AND col = ?", [run_id, time.time(), grid_id, row, col])


def unstart_cell(db: Any, grid_id: str, row: int, col: int) -> None:
    """A cell stopped before it ended: queued again (its stopped run is kept, as the grid's).
    Call inside a transaction."""
    db.execute("UPDATE runs SET grid_id = ? WHERE id = (SELECT run_id FROM grid_cells WHERE grid_id = ? "
               "AND row = ? AND col = ?)", [grid_id, grid_id, row, col])
    db.execute("UPDATE grid_cells SET state = 'queued', started_utc = NULL WHERE grid_id = ? AND row = ? "
               "AND col = ? AND state = 'running'", [grid_id, row, col])


def finish_cell(db: Any, grid_id: str, result: CellResult) -> None:
    """One ended cell with the grid's cost. Call inside a transaction."""
    now = time.time()
    # The grid's cost is the sum of its cells' (a re-run cell's new cost replaces its old one),
    # kept by difference: summing every cell at each end is quadratic in a 5,000-cell grid.
    db.execute("UPDATE grids SET cost_usd = coalesce(cost_usd, 0) + ? - coalesce((SELECT cost_usd FROM grid_cells "
               "WHERE grid_id = ? AND row = ? AND col = ?), 0), updated_utc = ? WHERE id = ?",
               [result.cost_usd, grid_id, result.row, result.col, now, grid_id])
    db.execute(
        "UPDATE grid_cells SET state = ?, answer = ?, value_json = ?, flag = ?, error = ?, cost_usd = ?, "
        "run_id = coalesce(?, run_id), citations_json = ?, finished_utc = ? WHERE grid_id = ? AND row = ? "
        "AND col = ?",
        [result.state, result.answer, json.dumps(result.value, ensure_ascii=False), result.flag,
         result.error, result.cost_usd, result.run_id, json.dumps(list(result.citations), ensure_ascii=False),
         now, grid_id, result.row, result.col])
    if result.run_id:              # the cell's run: out of History's list, like an evaluation's
        db.execute("UPDATE runs SET grid_id = ? WHERE id = ?", [grid_id, result.run_id])


def interrupted_cells(db: Any, grid_id: str) -> list[dict]:
    """Queued cells whose run ended (finished or capped) in a process that died before the
    cell was written: that run is the cell's answer, not asked again."""
    names = ("row", "col", "run_id", "status", "answer", "error", "totals_json")
    return [dict(zip(names, r)) for r in db.execute(
        "SELECT c.row, c.col, c.run_id, r.status, r.answer, r.error, r.totals_json FROM grid_cells c "
        "JOIN runs r ON r.id = c.run_id WHERE c.grid_id = ? AND c.state = 'queued' AND c.started_utc IS NOT NULL "
        "AND r.status IN ('finished', 'capped')", [grid_id])]


def set_status(db: Any, grid_id: str, status: str) -> None:
    """Call inside a transaction."""
    db.execute("UPDATE grids SET status = ?, updated_utc = ? WHERE id = ?", [status, time.time(), grid_id])


def load_grid(db: Any, grid_id: str, *, citations: bool = True) -> GridData:
    """The grid with every cell; `citations=False`: the cells without their citations (a CSV
    needs none, and 5,000 cells' citations with their passages take ~8 MB)."""
    row = db.execute("SELECT id, name, status, max_cost_usd, cost_usd, created_utc, updated_utc FROM grids "
                     "WHERE id = ?", [grid_id]).fetchone()
    if row is None:
        raise KeyError(f"no grid {grid_id!r}")
    columns = [Column(n, q, t, i or "") for n, q, t, i in db.execute(
        "SELECT name, question, type, instruction FROM grid_columns WHERE grid_id = ? ORDER BY position", [grid_id])]
    rows = [Row(p, s or "", c, e) for p, s, c, e in db.execute(
        "SELECT path, sha256, chars, error FROM grid_rows WHERE grid_id = ? ORDER BY position", [grid_id])]
    names = ("row", "col", "state", "answer", "value_json", "flag", "error", "cost_usd", "run_id",
             "citations_json" if citations else "'[]'")
    cells = {}
    for values in db.execute(f"SELECT {', '.join(names)} FROM grid_cells WHERE grid_id = ?", [grid_id]):
        cell = dict(zip(names[:-1], values))
        cell["value"] = json.loads(cell.pop("value_json") or "null")
        cell["citations"] = json.loads(values[-1] or "[]")
        cells[(cell["row"], cell["col"])] = cell
    return GridData(row[0], row[1], row[2], row[3], row[4] or 0.0, columns, rows, cells, row[5], row[6])


def cell_counts(db: Any, grid_id: str) -> dict[str, int]:
    """How many cells are in each state (GridData.counts without loading the cells)."""
    out = {s: 0 for s in ("queued", "running", "done", "failed", "limited")}
    out.update(db.execute("SELECT state, count(*) FROM grid_cells WHERE grid_id = ? GROUP BY state", [grid_id]))
    return out


def grid_cost(db: Any, grid_id: str) -> float:
    """What the grid's cells have spent (across resumes)."""
    row = db.execute("SELECT cost_usd FROM grids WHERE id = ?", [grid_id]).fetchone()
    return float(row[0] or 0.0) if row else 0.0


def list_grids(db: Any) -> list[dict]:
    """Every grid, newest first, with its cell counts (History lists them)."""
    out = []
    for gid, name, status, cost, created, updated in db.execute(
            "SELECT id, name, status, cost_usd, created_utc, updated_utc FROM grids ORDER BY updated_utc DESC"):
        counts = dict(db.execute("SELECT state, count(*) FROM grid_cells WHERE grid_id = ? GROUP BY state", [gid]))
        out.append({"id": gid, "name": name, "status": status, "cost_usd": cost or 0.0, "created_utc": created,
                    "updated_utc": updated, "cells": counts})
    return out


def resolve_grid(db: Any, prefix: str) -> str:
    found = [r[0] for r in db.execute("SELECT id FROM grids WHERE id LIKE ?", [prefix + "%"])]
    if len(found) != 1:
        raise KeyError(f"no grid {prefix!r}" if not found else f"{len(found)} grids start with {prefix!r}")
    return found[0]
