"""Schema changes, append-only: `m001_initial`, `m002_...`. A shipped migration is
never edited; a change is a new function at the end of MIGRATIONS. Each one runs
in the same transaction as its record in `_migrations` (name, applied_utc).

Times (`*_utc`) are Unix epoch seconds (REAL, UTC): exact, cheap to filter, and
`datetime(created_utc, 'unixepoch')` shows them in SQL.
"""

from __future__ import annotations

import re
import json
import time
from typing import Callable

import sqlite_utils


Migration = Callable[[sqlite_utils.Database], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(db: sqlite_utils.Database) -> None:
    # One row per run: what was asked, with which models and caps, and how it went.
    # The totals are kept current while the run streams, so history lists are cheap.
    db.execute("""
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            question TEXT NOT NULL,
            answer TEXT,
            error TEXT,
            status TEXT NOT NULL,
            root_model TEXT,
            sub_model TEXT,
            max_depth INTEGER,
            max_iterations INTEGER,
            max_cost_usd REAL,
            max_sub_calls INTEGER,
            config_json TEXT,
            documents INTEGER NOT NULL DEFAULT 0,
            total_chars INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            iterations INTEGER NOT NULL DEFAULT 0,
            sub_calls INTEGER NOT NULL DEFAULT 0,
            cells INTEGER NOT NULL DEFAULT 0,
            syntax_errors INTEGER NOT NULL DEFAULT 0,
            wall_ms INTEGER,
            totals_json TEXT,
            created_utc REAL NOT NULL,
            finished_utc REAL,
            version TEXT,
            parent_run_id TEXT,
            imported_utc REAL,
            owner_pid INTEGER,
            owner_host TEXT,
            owner_token TEXT
        )""")
    for column in ("created_utc", "status", "root_model", "sub_model", "cost_usd", "parent_run_id"):
        db.execute(f"CREATE INDEX idx_runs_{column} ON runs ({column})")
    db["runs"].enable_fts(["question", "answer"], create_triggers=True)

    # Every event exactly as the engine emitted it (streamed token deltas coalesced),
    # in seq order: replay reads these back through the same fold as a live run.
    db.execute("""
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            call_id TEXT,
            parent_id TEXT,
            ts_utc REAL NOT NULL,
            payload_json TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX idx_events_run_id_seq ON events (run_id, seq)")

    # The call tree: root turns (kind root), sub-calls (sub) and nested RLMs (rlm).
    # Prompts and responses of sub-calls are kept so a run can be verified by
    # re-execution with every llm_query answered from the record.
    db.execute("""
        CREATE TABLE calls (
            run_id TEXT NOT NULL,
            id TEXT NOT NULL,
            parent_id TEXT,
            depth INTEGER NOT NULL DEFAULT 0,
            kind TEXT NOT NULL,
            model TEXT,
            iteration INTEGER,
            prompt TEXT,
            response TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0,
            duration_ms INTEGER,
            status TEXT NOT NULL,
            error TEXT,
            seq INTEGER,
            started_utc REAL,
            finished_utc REAL,
            PRIMARY KEY (run_id, id)
        )""")

    # What a run read (and skipped), in context order; the text itself is in blobs.
    db.execute("""
        CREATE TABLE sources (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            status TEXT NOT NULL,
            path TEXT NOT NULL,
            source_path TEXT,
            format TEXT,
            size INTEGER,
            chars INTEGER,
            sha256 TEXT,
            text_sha256 TEXT,
            spans_sha256 TEXT,
            reason TEXT,
            detail TEXT
        )""")
    for column in ("run_id", "text_sha256", "spans_sha256"):
        db.execute(f"CREATE INDEX idx_sources_{column} ON sources ({column})")

    # Document texts (and span tables) by sha256 of their content, compressed,
    # written once and shared by every run over the same files.
    db.execute("""
        CREATE TABLE blobs (
            sha256 TEXT PRIMARY KEY,
            codec TEXT NOT NULL,
            size INTEGER NOT NULL,
            content BLOB NOT NULL,
            created_utc REAL NOT NULL
        )""")

    # Code cells live in events only; this view makes them queryable.
    db.execute("""
        CREATE VIEW cells AS
        SELECT run_id, call_id AS id, parent_id, seq, ts_utc,
               json_extract(payload_json, '$.index') AS cell_index,
               json_extract(payload_json, '$.code') AS code,
               json_extract(payload_json, '$.stdout') AS stdout,
               json_extract(payload_json, '$.stderr') AS stderr,
               json_extract(payload_json, '$.error') AS error,
               json_extract(payload_json, '$.is_syntax_error') AS is_syntax_error,
               json_extract(payload_json, '$.fault') AS fault,
               json_extract(payload_json, '$.duration_ms') AS duration_ms
        FROM events WHERE type = 'CellExecuted'""")


@migration
def m002_evaluations(db: sqlite_utils.Database) -> None:
    # One row per evaluation: a question set over a set of documents. Running the same set
    # over the same documents again adds repeats to it (found by `key`).
    db.execute("""
        CREATE TABLE evaluations (
            id TEXT PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            set_path TEXT,
            set_sha256 TEXT NOT NULL,
            set_json TEXT NOT NULL,
            documents_json TEXT NOT NULL,
            scorecard_json TEXT,
            created_utc REAL NOT NULL,
            updated_utc REAL NOT NULL
        )""")
    # One row per answered question: an RLM run (linked by run_id to `runs`) or a plain
    # direct call (mode 'direct', no run), with what the scorecard needs.
    db.execute("""
        CREATE TABLE evaluation_runs (
            id INTEGER PRIMARY KEY,
            evaluation_id TEXT NOT NULL REFERENCES evaluations(id),
            pair TEXT NOT NULL,
            mode TEXT NOT NULL,
            root_model TEXT NOT NULL,
            sub_model TEXT,
            question_id TEXT NOT NULL,
            repeat INTEGER NOT NULL,
            run_id TEXT,
            status TEXT NOT NULL,
            answer TEXT,
            correct INTEGER NOT NULL,
            detail TEXT,
            cost_usd REAL NOT NULL DEFAULT 0,
            judge_cost_usd REAL NOT NULL DEFAULT 0,
            wall_ms INTEGER,
            iterations INTEGER NOT NULL DEFAULT 0,
            cells INTEGER NOT NULL DEFAULT 0,
            syntax_errors INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            created_utc REAL NOT NULL
        )""")
    db.execute("CREATE INDEX idx_evaluation_runs_evaluation_id ON evaluation_runs (evaluation_id)")
    db.execute("CREATE INDEX idx_evaluation_runs_run_id ON evaluation_runs (run_id)")


@migration
def m003_runs_model_labels(db: sqlite_utils.Database) -> None:
    # The model names the user picked ("ollama/qwen2.5-coder:7b"); root_model and
    # sub_model keep the routed names litellm was given ("openai/qwen2.5-coder:7b").
    # NULL when the two are the same.
    db.execute("ALTER TABLE runs ADD COLUMN root_model_label TEXT")
    db.execute("ALTER TABLE runs ADD COLUMN sub_model_label TEXT")


@migration
def m004_runs_limited_and_unpriced(db: sqlite_utils.Database) -> None:
    # What a cap or limit changed in the run, in one sentence (core/limits.py summary):
    # refused sub-calls, cells cut at the time limit, calls shortened to fit the dollar cap.
    # NULL when nothing was limited (and for runs stored before it was counted).
    db.execute("ALTER TABLE runs ADD COLUMN limited TEXT")
    # The run's models with no known price, comma-separated (their cost is unknown, so
    # cost_usd is a lower bound, never "$0"); NULL when every model had a price.
    db.execute("ALTER TABLE runs ADD COLUMN unpriced TEXT")


@migration
def m005_extracts(db: sqlite_utils.Database) -> None:
    # What reading a file on disk produced, by its path, so an unchanged file is not read
    # again (core/store/extracts.py). The text and spans are blobs (shared with sources);
    # a row whose blobs were collected is a miss, never an error.
    db.execute("""
        CREATE TABLE extracts (
            source_path TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            format TEXT NOT NULL,
            chars INTEGER NOT NULL,
            text_sha256 TEXT NOT NULL,
            spans_sha256 TEXT,
            ocr_pages_json TEXT,
            updated_utc REAL NOT NULL
        )""")


@migration
def m006_runs_evaluation_id(db: sqlite_utils.Database) -> None:
    # The evaluation a run answered a question of (RunStarted.evaluation_id): History hides
    # these runs unless asked ("Show evaluation runs"); NULL for every other run. Runs stored
    # before it are tagged from evaluation_runs, which linked them after they ended.
    db.execute("ALTER TABLE runs ADD COLUMN evaluation_id TEXT")
    db.execute("UPDATE runs SET evaluation_id = (SELECT er.evaluation_id FROM evaluation_runs er "
               "WHERE er.run_id = runs.id LIMIT 1) WHERE id IN (SELECT run_id FROM evaluation_runs "
               "WHERE run_id IS NOT NULL)")
    db.execute("CREATE INDEX idx_runs_evaluation_id ON runs (evaluation_id)")


@migration
def m007_calls_subtree_cost(db: sqlite_utils.Database) -> None:
    # What a call cost with everything below it (a root turn: its own call and its cells'
    # sub-calls; a nested RLM: its whole tally), so cost_usd is the row's own cost on every
    # row. Until now a nested RLM's (kind rlm) cost_usd held its subtree's tally.
    db.execute("ALTER TABLE calls ADD COLUMN subtree_cost_usd REAL NOT NULL DEFAULT 0")
    backfill_subtree_costs(db)


def backfill_subtree_costs(db: sqlite_utils.Database, run_ids: list[str] | None = None) -> None:
    """Rows written before m007 (stored, or in a file exported then): a nested RLM's
    cost_usd becomes its subtree_cost_usd and its own cost 0; every other row's subtree is
    its own cost plus its children's (a sub-call hangs below the turn of the cell that made
    it). Used by m007 and by the JSON import; change it only together with a new migration."""
    where, params = "", []
    if run_ids is not None:
        where, params = f" WHERE run_id IN ({', '.join('?' * len(run_ids))})", list(run_ids)
    runs: dict[str, dict[str, tuple]] = {}
    for run_id, call_id, parent_id, kind, cost in db.execute(
            f"SELECT run_id, id, parent_id, kind, cost_usd FROM calls{where}", params).fetchall():
        runs.setdefault(run_id, {})[call_id] = (parent_id, kind, cost or 0.0)
    updates = []
    for run_id, rows in runs.items():
        children: dict[str, list[str]] = {}
        for call_id, (parent_id, _, _) in rows.items():
            parent = parent_id if parent_id in rows else _turn_of_cell(parent_id or "")
            if parent in rows:
                children.setdefault(parent, []).append(call_id)
        subtree: dict[str, float] = {}

        def total(call_id: str) -> float:
            if call_id not in subtree:
                _, kind, cost = rows[call_id]
                subtree[call_id] = cost if kind == "rlm" else \
                    cost + sum(total(c) for c in children.get(call_id, ()))
            return subtree[call_id]
        for call_id, (_, kind, _) in rows.items():
            updates.append((0.0 if kind == "rlm" else rows[call_id][2], total(call_id), run_id, call_id))
    db.conn.executemany("UPDATE calls SET cost_usd = ?, subtree_cost_usd = ? WHERE run_id = ? AND id = ?",
                        updates)


# A cell id's turn, as core.call_ids.turn_of_cell read it when m007 shipped, copied here so
# that what m007 does cannot change when that module changes ("R.s5.t2.c1" -> "R.s5.t2";
# numbers as integers, so "R.t01.c1" -> "R.t1"; anything else -> None).
_CELL_ID = re.compile(r"R((?:\.s\d+)*)\.t(\d+)\.c\d+")


def _turn_of_cell(cell_id: str) -> str | None:
    match = _CELL_ID.fullmatch(cell_id)
    if match is None:
        return None
    owner = "R" + "".join(f".s{int(n)}" for n in re.findall(r"\d+", match.group(1)))
    return f"{owner}.t{int(match.group(2))}"


@migration
def m008_extracts_width_tokens(db: sqlite_utils.Database) -> None:
    # What the engine needs of an unchanged plain-text file's text without reading it
    # (core/ingest/text_back.py): the bytes per character CPython holds it with (1, 2 or 4)
    # and its estimated tokens. NULL in rows written before: such a file is read once more.
    db.execute("ALTER TABLE extracts ADD COLUMN width INTEGER")
    db.execute("ALTER TABLE extracts ADD COLUMN tokens INTEGER")



@migration
def m009_prices_by_picked_name_and_fork_turn(db: sqlite_utils.Database) -> None:
    # A fork's turn in its parent (RunStarted.forked_from): History marks forks by it.
    # NULL for every other run, and for forks stored before it was kept.
    db.execute("ALTER TABLE runs ADD COLUMN fork_turn INTEGER")
    # A run's prices are kept by the model as the user named it on its endpoint
    # ("lab/small-3b"), as its ModelSpec resolved them (core/models.py); runs stored
    # before were keyed by the routed name ("openai/small-3b"), and carried every model
    # of the settings, where two endpoints' models of one name overwrote each other.
    # A routed key of the run's own root or sub model becomes the name the user picked;
    # any other is moved to "prices_unresolved", which `runs show` and exports name.
    rows = db.execute("SELECT id, config_json FROM runs WHERE config_json IS NOT NULL").fetchall()
    for run_id, text in rows:
        try:
            config = json.loads(text)
        except ValueError:
            continue
        if not isinstance(config, dict) or config.get("specs") or not isinstance(config.get("prices"), dict):
            continue
        labels = config.get("model_labels") if isinstance(config.get("model_labels"), dict) else {}
        own = {config.get("root_model"), config.get("sub_model")}
        prices, unresolved = {}, {}
        for routed, price in config["prices"].items():
            if routed in labels and routed in own:
                prices[labels[routed]] = price
            elif routed in own:
                prices[routed] = price
            else:
                unresolved[routed] = price
        config["prices"] = prices
        if unresolved:
            config["prices_unresolved"] = unresolved
        db.execute("UPDATE runs SET config_json = ? WHERE id = ?", [json.dumps(config), run_id])


@migration
def m010_grids(db: sqlite_utils.Database) -> None:
    # A review grid: questions (columns) over documents (rows). The same columns over the
    # same documents (by path and text) are the same grid, so running it again resumes it.
    db.execute("""
        CREATE TABLE grids (
            id TEXT PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            status TEXT NOT NULL,
            max_cost_usd REAL,
            cost_usd REAL NOT NULL DEFAULT 0,
            config_json TEXT,
            created_utc REAL NOT NULL,
            updated_utc REAL NOT NULL
        )""")
    # One question of a grid: its answers are parsed as `type` (text, number, date, yes/no, list, excerpt).
    db.execute("""
        CREATE TABLE grid_columns (
            grid_id TEXT NOT NULL REFERENCES grids(id),
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            question TEXT NOT NULL,
            type TEXT NOT NULL,
            instruction TEXT,
            PRIMARY KEY (grid_id, position)
        )""")
    # One document of a grid (a file or an archive member); `error` says why it could not be read.
    db.execute("""
        CREATE TABLE grid_rows (
            grid_id TEXT NOT NULL REFERENCES grids(id),
            position INTEGER NOT NULL,
            path TEXT NOT NULL,
            sha256 TEXT,
            chars INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            PRIMARY KEY (grid_id, position)
        )""")
    # One answer: committed as soon as its run ends, so a killed grid keeps every finished cell.
    # state: queued | running | done | failed | limited; run_id: the stored run that answered it.
    db.execute("""
        CREATE TABLE grid_cells (
            grid_id TEXT NOT NULL REFERENCES grids(id),
            row INTEGER NOT NULL,
            col INTEGER NOT NULL,
            state TEXT NOT NULL,
            answer TEXT,
            value_json TEXT,
            flag TEXT,
            error TEXT,
            cost_usd REAL NOT NULL DEFAULT 0,
            run_id TEXT,
            citations_json TEXT,
            started_utc REAL,
            finished_utc REAL,
            PRIMARY KEY (grid_id, row, col)
        )""")
    db.execute("CREATE INDEX idx_grid_cells_state ON grid_cells (grid_id, state)")
    # The grid a run answered a cell of: History leaves such runs out, as it does an evaluation's.
    db.execute("ALTER TABLE runs ADD COLUMN grid_id TEXT")


@migration
def m011_imported_runs_route_nothing(db: sqlite_utils.Database) -> None:
    # A run file decides nothing about where calls go or whose key they carry: an import
    # drops those settings (core/store/import_checks.py). Runs imported before it kept the
    # file's URLs and key owners in their config and in their RunStarted event (which forks,
    # verify and rebuilds read); both are cleaned here the same way, and what was dropped is
    # kept under "import_dropped" so `runs show` can name it. (The key lists are copied, not
    # imported: a migration never changes with live code.)
    routing = ("api_base", "sub_api_base", "api_key_from", "sub_call_models", "endpoints")
    local = ("memory_limit_mb", "require_full_sandbox")

    def cleaned(config: object) -> tuple[object, dict]:
        if not isinstance(config, dict):
            return config, {}
        dropped = {k: v for k, v in config.items() if k in routing + local and v not in (None, {}, [], "")}
        kept = {k: v for k, v in config.items() if k not in routing + local}
        return kept, dropped

    runs = db.execute("SELECT id, config_json FROM runs WHERE imported_utc IS NOT NULL").fetchall()
    for run_id, text in runs:
        try:
            config = json.loads(text) if text else None
        except ValueError:
            config = None
        kept, dropped = cleaned(config)
        if dropped and isinstance(kept, dict):
            kept["import_dropped"] = {**(kept.get("import_dropped") or {}), **dropped}
            db.execute("UPDATE runs SET config_json = ? WHERE id = ?", [json.dumps(kept), run_id])
        for event_id, payload in db.execute(
                "SELECT id, payload_json FROM events WHERE run_id = ? AND type = 'RunStarted'", [run_id]).fetchall():
            try:
                data = json.loads(payload)
            except ValueError:
                continue
            if not isinstance(data, dict):
                continue
            kept_event, dropped_event = cleaned(data.get("config"))
            if dropped_event:
                data["config"] = kept_event
                db.execute("UPDATE events SET payload_json = ? WHERE id = ?", [json.dumps(data), event_id])


def migrate(db: sqlite_utils.Database) -> list[str]:
    """Apply pending migrations; returns the names applied. BEGIN IMMEDIATE makes two
    processes opening a fresh database at once take turns instead of colliding."""
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_utc REAL NOT NULL)")
    if db.conn.in_transaction:
        db.conn.commit()
    applied = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    if all(fn.__name__ in applied for fn in MIGRATIONS):
        return []
    done: list[str] = []
    db.execute("BEGIN IMMEDIATE")
    try:
        applied = {row[0] for row in db.execute("SELECT name FROM _migrations")}
        for fn in MIGRATIONS:
            if fn.__name__ in applied:
                continue
            fn(db)
            db.execute("INSERT INTO _migrations (name, applied_utc) VALUES (?, ?)", [fn.__name__, time.time()])
            done.append(fn.__name__)
        db.execute("COMMIT")
    except BaseException:
        db.conn.rollback()
        raise
    return done
