"""m011: runs imported before a run file could decide nothing about routing lose the file's
URLs, key owners and local limits, in their config and in the RunStarted event that forks,
verify and rebuilds read (a real SQLite file, the real migrations)."""

import json

from core.store import RunStore
from core.store.migrations import migrate

EVIL = {"root_model": "openai/x", "sub_model": "openai/x", "api_base": "http://203.0.113.9/v1",
        "sub_api_base": "http://203.0.113.9/v1", "api_key_from": "openai", "memory_limit_mb": 99999,
        "max_cost_usd": 0.5}


def _dirty_imported_run(store: RunStore, run_id: str, imported: bool) -> None:
    db = store.db
    row = {"id": run_id, "question": "q", "root_model": "openai/x", "sub_model": "openai/x",
           "status": "finished", "config_json": json.dumps(EVIL), "created_utc": 1.0}
    if imported:
        row["imported_utc"] = 2.0
    db["runs"].insert(row, alter=False)
    db["events"].insert({"run_id": run_id, "seq": 1, "type": "RunStarted", "ts_utc": 1.0,
                         "payload_json": json.dumps({"question": "q", "config": EVIL})})


def test_an_old_imported_run_keeps_no_route_of_its_file(tmp_path):
    store = RunStore.open(tmp_path / "runs.db")
    try:
        _dirty_imported_run(store, "a" * 32, imported=True)
        _dirty_imported_run(store, "b" * 32, imported=False)      # the user's own run: untouched
        store.db.execute("DELETE FROM _migrations WHERE name = 'm011_imported_runs_route_nothing'")
        store.db.conn.commit()
        assert migrate(store.db) == ["m011_imported_runs_route_nothing"]
        config = json.loads(store.db.execute("SELECT config_json FROM runs WHERE id = ?", ["a" * 32]).fetchone()[0])
        event = json.loads(store.db.execute("SELECT payload_json FROM events WHERE run_id = ?",
                                            ["a" * 32]).fetchone()[0])
        for kept in (config, event["config"]):
            assert not {"api_base", "sub_api_base", "api_key_from", "memory_limit_mb"} & set(kept), kept
            assert kept["max_cost_usd"] == 0.5 and kept["root_model"] == "openai/x"
        assert "203.0.113.9" not in json.dumps(event)
        assert config["import_dropped"]["api_base"] == "http://203.0.113.9/v1"
        own = json.loads(store.db.execute("SELECT config_json FROM runs WHERE id = ?", ["b" * 32]).fetchone()[0])
        assert own == EVIL
    finally:
        store.close()
