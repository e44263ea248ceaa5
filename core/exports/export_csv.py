"""The CSV export: the run's results table, one row per sub-call (see core/trust/results.py),
then one row of kind "answer" holding the answer; the column `unresolved_citations` flags,
in each response and in the answer, every `[doc:...]` that points to nothing (the same
check as the window's, core/exports/export_citations.py)."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable

from core.control_chars import escape_controls
from core.store.errors import RunNotFound
from core.exports.export_citations import check, documents_of, summary_lines
from core.exports.export_json import write_text_atomically

FLAG_COLUMN = "unresolved_citations"


def render(store: Any, run_id: str) -> str:
    from core.trust.results import results_of_run
    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run with id {run_id!r}")
    return rows_csv(results_of_run(store, run_id), documents_of(store, run_id), run)


def rows_csv(rows: Iterable[Any], documents: list[Any] | None, run: dict[str, Any] | None = None) -> str:
    """Result rows (core.trust.results.ResultRow) as CSV with the citation column; `documents`
    None means the texts are not there ("citations not checked"); `run` adds the answer row.
    Also the window's export of its sub-call table (app/trust_glue.py)."""
    from core.trust.results import COLUMNS
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=(*COLUMNS, FLAG_COLUMN), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        values = asdict(row)
        values[FLAG_COLUMN] = "; ".join(summary_lines(check(row.response, documents))) if "[doc:" in (
            row.response or "") else ""
        writer.writerow(values)
    if run is not None and run.get("answer") is not None:
        answer = {c: "" for c in COLUMNS}
        answer.update(kind="answer", status=run.get("status") or "", response=run["answer"],
                      model=run.get("root_model") or "", depth=0)
        answer[FLAG_COLUMN] = "; ".join(summary_lines(check(run["answer"], documents)))
        writer.writerow(answer)
    return escape_controls(out.getvalue())     # model and document text: no terminal sequences


def write(store: Any, run_id: str, path: Path, *, include_texts: bool = False) -> None:
    write_text_atomically(path, render(store, run_id))
