"""The CSV export: the run's results table, one row per sub-call (see core/trust/results.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.store.errors import RunNotFound
from core.store.export_json import write_text_atomically


def write(store: Any, run_id: str, path: Path, *, include_texts: bool = False) -> None:
    from core.trust.results import results_of_run, to_csv
    if store.get_run(run_id) is None:
        raise RunNotFound(f"no run with id {run_id!r}")
    write_text_atomically(path, to_csv(results_of_run(store, run_id)))
