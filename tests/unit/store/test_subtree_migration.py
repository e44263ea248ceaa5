"""m007: a database written by the old schema (before calls.subtree_cost_usd, when a nested
RLM's cost_usd held its subtree's tally), opened by this one: it loads, replays and exports
the same totals, and every row's cost_usd is its own. Also a JSON file exported then."""

from __future__ import annotations

import json
import time

import sqlite_utils

from core import events as ev
from core.exports import export
from core.runview import fold
from core.store import RunStore
from core.store import report as rp
from core.store.migrations import MIGRATIONS
from core.trust.results import results_of_run
from tests.support.record_runs import recorded_events

RUN = "old-run"
NESTED = "R.s3"                 # the recording's nested RLM
TALLY = 0.0013175               # its SubCallFinished.cost_usd, as the engine recorded it then


def _old_database(path) -> None:
    """m001..m006 only, and the 'export' recording written as the store wrote it then: raw
    event payloads, and calls rows with each finished call's cost_usd as recorded."""
    db = sqlite_utils.Database(path)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_utc REAL NOT NULL)")
    for fn in MIGRATIONS[:6]:
        fn(db)
        db.execute("INSERT INTO _migrations VALUES (?, ?)", [fn.__name__, time.time()])
    assert "m007_calls_subtree_cost" not in {fn.__name__ for fn in MIGRATIONS[:6]}
    rows = recorded_events("export")
    final = rows[-1]
    db.execute("INSERT INTO runs (id, question, status, root_model, sub_model, config_json, created_utc, "
               "cost_usd, totals_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               [RUN, rows[0]["question"], final["status"], rows[0]["root_model"], rows[0]["sub_model"],
                json.dumps(rows[0]["config"]), rows[0]["ts"], final["totals"]["cost_usd"],
                json.dumps(final["totals"])])
    envelope = ("type", "run_id", "seq", "ts", "call_id", "parent_id")
    for r in rows:
        db.execute("INSERT INTO events (run_id, seq, type, call_id, parent_id, ts_utc, payload_json) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [RUN, r["seq"], r["type"], r.get("call_id"), r.get("parent_id"), r["ts"],
                    json.dumps({k: v for k, v in r.items() if k not in envelope})])
        if r["type"] == "RootTurnStarted":
            db.execute("INSERT INTO calls (run_id, id, parent_id, depth, kind, model, iteration, status, seq) "
                       "VALUES (?, ?, ?, ?, 'root', ?, ?, 'running', ?)",
                       [RUN, r["call_id"], r["parent_id"], r["depth"], r["model"], r["iteration"], r["seq"]])
        elif r["type"] == "SubCallStarted":
            db.execute("INSERT INTO calls (run_id, id, parent_id, depth, kind, model, prompt, status, seq) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?)",
                       [RUN, r["call_id"], r["parent_id"], r["depth"] + 1, "rlm" if r["kind"] == "rlm" else "sub",
                        r["model"], r["prompt"], r["seq"]])
        elif r["type"] in ("RootReplied", "RootCallFailed", "SubCallFinished"):
            db.execute("UPDATE calls SET status = ?, input_tokens = ?, output_tokens = ?, cost_usd = ? "
                       "WHERE run_id = ? AND id = ?",
                       [r.get("status", "ok"), r["input_tokens"], r["output_tokens"], r["cost_usd"], RUN,
                        r["call_id"]])
    db.conn.commit()
    db.close()


def _check(store: RunStore, run_id: str, total: float) -> None:
    calls = {c["id"]: c for c in store.calls(run_id)}
    assert calls[NESTED]["kind"] == "rlm"
    assert calls[NESTED]["cost_usd"] == 0.0 and abs(calls[NESTED]["subtree_cost_usd"] - TALLY) < 1e-15
    assert abs(sum(c["cost_usd"] for c in calls.values()) - total) < 1e-12       # each row's own
    for call_id, c in calls.items():
        if c["kind"] == "sub":
            assert c["subtree_cost_usd"] == c["cost_usd"], call_id
        elif c["kind"] == "root":          # the turn and its cells' calls
            below = sum(d["subtree_cost_usd"] for d in calls.values()
                        if (d["parent_id"] or "").startswith(call_id + ".c"))
            assert abs(c["subtree_cost_usd"] - c["cost_usd"] - below) < 1e-12, call_id
    assert abs(sum(c["subtree_cost_usd"] for c in calls.values() if c["parent_id"] == "R") - total) < 1e-12

    report = rp.build(store, run_id)       # the report reads the same figures
    assert abs(sum(t.subtree_cost for t in report.tree) - total) < 1e-12
    view = fold(list(store.iter_events(run_id)))     # replay folds the stored events the same way
    assert abs(view.root.subtree_cost_usd - total) < 1e-12
    assert view.nodes[NESTED].cost_usd == 0.0 and abs(view.nodes[NESTED].subtree_cost_usd - TALLY) < 1e-15
    rows = {r.call_id: r for r in results_of_run(store, run_id)}
    assert rows[NESTED].cost_usd == 0.0 and abs(rows[NESTED].subtree_cost_usd - TALLY) < 1e-15


def test_an_old_database_migrates_to_own_costs_and_subtrees_with_the_same_totals(tmp_path):
    path = tmp_path / "runs.db"
    _old_database(path)
    before = sqlite_utils.Database(path)
    assert "subtree_cost_usd" not in before["calls"].columns_dict
    old_rlm = before.execute("SELECT cost_usd FROM calls WHERE id = ?", [NESTED]).fetchone()[0]
    assert old_rlm == TALLY                    # the old meaning: the nested RLM's whole tally
    before.close()
    total = recorded_events("export")[-1]["totals"]["cost_usd"]
    with RunStore.open(path) as store:
        assert store.get_run(RUN)["cost_usd"] == total
        _check(store, RUN, total)
        md = tmp_path / "run.md"
        export(store, RUN, "md", md)
        assert f"own $0.0000, subtree ${TALLY:.4f}" in md.read_text()


def test_a_json_file_exported_before_m007_imports_with_own_costs_and_subtrees(tmp_path):
    path = tmp_path / "runs.db"
    _old_database(path)
    total = recorded_events("export")[-1]["totals"]["cost_usd"]
    with RunStore.open(path) as store:
        out = tmp_path / "run.json"
        export(store, RUN, "json", out)
    data = json.loads(out.read_text())
    data["version"] = 1                        # as the old tree wrote it
    for c in data["calls"]:
        if c["kind"] == "rlm":
            c["cost_usd"] = c["subtree_cost_usd"]
        del c["subtree_cost_usd"]
    for e in data["events"]:
        e.pop("subtree_cost_usd", None)
    old_file = tmp_path / "old.json"
    old_file.write_text(json.dumps(data))
    with RunStore.open(tmp_path / "other.db") as store:
        run_id = store.import_json(old_file)
        _check(store, run_id, total)


def test_an_event_recorded_before_the_field_reads_as_own_cost_and_subtree():
    raw = next(r for r in recorded_events("export") if r["type"] == "SubCallFinished" and r["kind"] == "rlm")
    assert "subtree_cost_usd" not in raw
    e = ev.from_dict(raw)
    assert (e.cost_usd, e.subtree_cost_usd) == (0.0, TALLY)
    llm = next(r for r in recorded_events("export") if r["type"] == "SubCallFinished" and r["kind"] == "llm")
    e = ev.from_dict(llm)
    assert e.cost_usd == e.subtree_cost_usd == llm["cost_usd"]
    again = ev.from_dict(ev.from_dict(raw).to_dict())       # a new record is read as it is
    assert (again.cost_usd, again.subtree_cost_usd) == (0.0, TALLY)


def test_m007s_own_copy_of_a_cells_turn_reads_ids_as_call_ids_does():
    """m007 carries its own copy of turn_of_cell (a migration imports no live code); on the
    ids the engine writes and on odd ones it gives what core.call_ids gave when m007 shipped."""
    from core.call_ids import turn_of_cell
    from core.store.migrations import _turn_of_cell
    ids = ["R.t1.c1", "R.t12.c3", "R.s5.t2.c1", "R.s5.s2.t1.c4", "R.t01.c1", "R.s05.t1.c1", "R.t1", "R.s3",
           "R", "", "X.t1.c1", "R.t1.c1.s2", "R.c1", "R.t1.c", "R.t1.c1 ", "R.tx.c1"]
    assert [_turn_of_cell(i) for i in ids] == [turn_of_cell(i) for i in ids]
