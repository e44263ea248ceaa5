"""The schema that migrations produce, pinned column by column."""

from __future__ import annotations

import sqlite3

from core.store import RunStore
from core.store.migrations import MIGRATIONS

EXPECTED = {
    "runs": ["id", "question", "answer", "error", "status", "root_model", "sub_model", "max_depth",
             "max_iterations", "max_cost_usd", "max_sub_calls", "config_json", "documents", "total_chars",
             "cost_usd", "input_tokens", "output_tokens", "iterations", "sub_calls", "cells", "syntax_errors",
             "wall_ms", "totals_json", "created_utc", "finished_utc", "version", "parent_run_id",
             "imported_utc", "owner_pid", "owner_host", "owner_token", "root_model_label", "sub_model_label",
             "limited", "unpriced", "evaluation_id", "fork_turn", "grid_id"],
    "events": ["id", "run_id", "seq", "type", "call_id", "parent_id", "ts_utc", "payload_json"],
    "calls": ["run_id", "id", "parent_id", "depth", "kind", "model", "iteration", "prompt", "response",
              "input_tokens", "output_tokens", "cost_usd", "duration_ms", "status", "error", "seq",
              "started_utc", "finished_utc", "subtree_cost_usd"],
    "sources": ["id", "run_id", "position", "status", "path", "source_path", "format", "size", "chars",
                "sha256", "text_sha256", "spans_sha256", "reason", "detail"],
    "blobs": ["sha256", "codec", "size", "content", "created_utc"],
    "cells": ["run_id", "id", "parent_id", "seq", "ts_utc", "cell_index", "code", "stdout", "stderr", "error",
              "is_syntax_error", "fault", "duration_ms"],
    "evaluations": ["id", "key", "name", "set_path", "set_sha256", "set_json", "documents_json",
                    "scorecard_json", "created_utc", "updated_utc"],
    "evaluation_runs": ["id", "evaluation_id", "pair", "mode", "root_model", "sub_model", "question_id",
                        "repeat", "run_id", "status", "answer", "correct", "detail", "cost_usd",
                        "judge_cost_usd", "wall_ms", "iterations", "cells", "syntax_errors", "input_tokens",
                        "output_tokens", "error", "created_utc"],
    "extracts": ["source_path", "size", "mtime_ns", "sha256", "format", "chars", "text_sha256",
                 "spans_sha256", "ocr_pages_json", "updated_utc", "width", "tokens"],
    "grids": ["id", "key", "name", "status", "max_cost_usd", "cost_usd", "config_json", "created_utc",
              "updated_utc"],
    "grid_columns": ["grid_id", "position", "name", "question", "type", "instruction"],
    "grid_rows": ["grid_id", "position", "path", "sha256", "chars", "error"],
    "grid_cells": ["grid_id", "row", "col", "state", "answer", "value_json", "flag", "error", "cost_usd", "run_id",
                   "citations_json", "started_utc", "finished_utc"],
    "_migrations": ["name", "applied_utc"],
    "runs_fts": ["question", "answer"],
}


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def test_migrations_produce_the_pinned_columns(tmp_path):
    store = RunStore.open(tmp_path / "runs.db")
    store.close()
    conn = sqlite3.connect(tmp_path / "runs.db")
    for table, expected in EXPECTED.items():
        assert columns(conn, table) == expected, table
    names = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]
    assert names == [fn.__name__ for fn in MIGRATIONS]
    assert names[0] == "m001_initial"
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"runs_ai", "runs_ad", "runs_au"} <= triggers
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"idx_runs_created_utc", "idx_runs_status", "idx_events_run_id_seq", "idx_sources_text_sha256"} <= indexes
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_migrations_are_names_in_order_and_reopening_applies_nothing(tmp_path):
    assert all(fn.__name__.startswith(f"m{i:03d}_") for i, fn in enumerate(MIGRATIONS, start=1))
    RunStore.open(tmp_path / "runs.db").close()
    store = RunStore.open(tmp_path / "runs.db")
    from core.store.migrations import migrate
    assert migrate(store.db) == []
    assert store.db.execute("SELECT count(*) FROM _migrations").fetchone()[0] == len(MIGRATIONS)
    store.close()


def test_default_path_follows_rlm_studio_home(home):
    store = RunStore.open()
    try:
        assert store.path == home / "runs.db"
        assert store.path.exists()
    finally:
        store.close()
