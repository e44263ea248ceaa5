"""m009: a run stored with its prices under routed names (recorded on 2ac47f0) keeps the price
of its own root and sub under the names the user picked; prices of models that are not the
run's own are kept apart and said in exports."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from core.config import RunConfig
import sqlite_utils

from core.store import RunStore
from core.store.migrations import MIGRATIONS
from core.store.report import price_rows

OLD = json.loads((Path(__file__).parents[2] / "fixtures" / "recorded" / "routed_prices_config.json").read_text())


def test_m009_keys_an_old_runs_prices_by_the_picked_name(tmp_path):
    path = tmp_path / "runs.db"
    db = sqlite_utils.Database(path)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_utc REAL NOT NULL)")
    for fn in MIGRATIONS[:8]:                                  # the database as 2ac47f0 left it
        fn(db)
        db.execute("INSERT INTO _migrations (name, applied_utc) VALUES (?, 0)", [fn.__name__])
    db.execute("INSERT INTO runs (id, question, status, created_utc, config_json) VALUES (?, ?, ?, ?, ?)",
               ["old1", "How many apples?", "finished", 1.0, json.dumps(OLD["config"])])
    db.conn.commit()
    db.close()
    RunStore.open(path).close()                               # applies m009 to the stored run
    conn = sqlite3.connect(path)
    config, fork_turn = conn.execute("SELECT config_json, fork_turn FROM runs WHERE id = 'old1'").fetchone()
    config = json.loads(config)
    assert fork_turn is None and MIGRATIONS[8].__name__.startswith("m009_")
    assert OLD["config"]["prices"] == {"openai/root": [1.0, 2.0], "openai/sub": [0.5, 1.5],
                                       "openai/other": [3.0, 4.0]}
    # what the run was billed at, now under the names picked: here/sub at lab's price, as it was
    assert config["prices"] == {"lab/root": [1.0, 2.0], "here/sub": [0.5, 1.5]}
    assert config["prices_unresolved"] == {"openai/other": [3.0, 4.0]}
    loaded = RunConfig.from_public_dict(config)
    assert loaded.specs == () and loaded.label("openai/sub") == "here/sub"
    rows = dict(price_rows(config))
    assert rows["price of here/sub"] == "$0.5 in · $1.5 out per M tokens"
    assert rows["prices not tied to this run's models"].startswith("openai/other $3 in · $4 out per M tokens")
