"""Events through a real EventWriter thread into a real SQLite file.

The runs are recordings of real engine runs (tests/support/record_runs.py). Only the last
test, a burst of thousands of events interleaved with the store's own writes, keeps a
generated stream (tests/support/store_events.py): it tests the writer's locking under
volume, which needs more events than a small recording has, not what the engine says."""

from __future__ import annotations

import dataclasses

import pytest

from core import events as ev
from core.exports import export
from core.store import RunStore, StoreWriteError
from tests.support.record_runs import recorded_run
from tests.support.store_events import synthetic_run

from .conftest import write_events


def without_tokens(events):
    return [e for e in events if not isinstance(e, ev.RootTokens)]


def test_a_full_run_becomes_run_calls_and_events(store: RunStore):
    events = recorded_run("sales", "run-a")
    write_events(store, events)
    started, finished = events[0], events[-1]

    run = store.get_run("run-a")
    assert run["status"] == "finished" == finished.status
    assert run["question"] == started.question == "What were the total sales in 2023?"
    assert run["answer"] == finished.answer == "Total sales in 2023 were 4.2 million euros."
    assert (run["root_model"], run["sub_model"]) == (started.root_model, started.sub_model)
    config = started.config
    assert (run["max_depth"], run["max_iterations"], run["max_cost_usd"]) == (
        config["max_depth"], config["max_iterations"], config["max_cost_usd"])
    assert run["config"]["root_model"] == started.root_model and run["config"]["max_cost_usd"] == 5.0
    final = finished.totals
    for key in ("cost_usd", "input_tokens", "output_tokens", "iterations", "sub_calls", "cells",
                "syntax_errors", "wall_ms"):
        assert run[key] == final[key], key
        assert run["totals"][key] == final[key]
    assert run["totals"]["refused_calls"] == final["refused_calls"]     # extra keys of the final totals are kept
    cells = [e for e in events if isinstance(e, ev.CellExecuted)]
    turns = [e for e in events if isinstance(e, ev.RootTurnStarted) and e.depth == 0]
    assert (run["iterations"], run["syntax_errors"], run["documents"]) == (
        len(turns), sum(c.is_syntax_error for c in cells), len(started.documents))
    assert run["syntax_errors"] == 1                     # the recording has one cell that does not parse
    assert run["created_utc"] == events[0].ts and run["finished_utc"] == events[-1].ts
    assert run["owner_token"] and run["owner_pid"]

    # every non-token event comes back exactly, in order
    stored = list(store.iter_events("run-a"))
    assert without_tokens(stored) == without_tokens(events)
    assert [e.seq for e in stored] == sorted(e.seq for e in stored)


def test_token_deltas_are_coalesced_into_one_row_per_turn(store: RunStore):
    events = recorded_run("export", "run-t")          # three turns (one nested), streamed in chunks
    write_events(store, events)
    stored = list(store.iter_events("run-t"))
    tokens = [e for e in stored if isinstance(e, ev.RootTokens)]
    replies = {e.call_id: e.text for e in stored if isinstance(e, ev.RootReplied)}
    streamed = {e.call_id for e in events if isinstance(e, ev.RootTokens)}
    assert len([e for e in events if isinstance(e, ev.RootTokens)]) > len(streamed)   # several deltas a turn
    assert len(tokens) == len(replies) == len(streamed) == 3
    for t in tokens:
        assert t.delta == replies[t.call_id]
    # order stays meaningful: a turn's tokens come before its reply
    position = {(e.type, e.call_id): i for i, e in enumerate(stored)}
    for call_id in replies:
        assert position[("RootTokens", call_id)] < position[("RootReplied", call_id)]


def test_tokens_split_over_many_batches_are_folded_when_the_reply_arrives(store: RunStore):
    events = recorded_run("export", "run-s")
    writer = store.writer()
    for e in events:
        writer(e)
        if isinstance(e, ev.RootTokens):
            writer.flush()                          # every delta its own transaction
    writer.close()
    tokens = [e for e in store.iter_events("run-s") if isinstance(e, ev.RootTokens)]
    replies = {e.call_id: e.text for e in events if isinstance(e, ev.RootReplied)}
    assert sorted(t.call_id for t in tokens) == sorted(replies)
    assert all(t.delta == replies[t.call_id] for t in tokens)


def test_a_cancelled_turns_tokens_are_one_row_when_its_end_shares_their_batch(store: RunStore):
    """A Stop during a root call: RootCallFailed (cancelled) may land in the same batch as the
    turn's last deltas, after earlier deltas were written. Before, that batch's token row was
    kept beside the folded one (two rows for one turn: seen once in the cancel sweep)."""
    events = recorded_run("export", "run-x")
    first = next(e for e in events if isinstance(e, ev.RootReplied))
    upto = events.index(first)
    turn = [e for e in events[:upto] if isinstance(e, ev.RootTokens) and e.call_id == first.call_id]
    assert len(turn) >= 2
    failed = ev.RootCallFailed(run_id=first.run_id, seq=first.seq, ts=first.ts, call_id=first.call_id,
                               parent_id=first.parent_id, status="cancelled", error="cancelled",
                               input_tokens=first.input_tokens, output_tokens=first.output_tokens,
                               cost_usd=first.cost_usd, duration_ms=first.duration_ms, model=first.model)
    writer = store.writer()
    for e in events[:upto]:
        writer(e)
        if e is turn[0]:
            writer.flush()                          # the first delta alone, the rest with the end
    writer(failed)
    writer.close()
    rows = [e for e in store.iter_events("run-x") if isinstance(e, ev.RootTokens)]
    assert [r.call_id for r in rows] == [first.call_id]
    assert rows[0].delta == "".join(t.delta for t in turn)


def test_the_call_tree(store: RunStore):
    events = recorded_run("export", "run-c")           # depth 2: a nested RLM with its own turn and sub-call
    write_events(store, events)
    calls = {c["id"]: c for c in store.calls("run-c")}
    nested = [c for c in calls.values() if c["kind"] == "rlm"]
    assert len(nested) == 1
    rlm = nested[0]
    rlm_started = next(e for e in events if isinstance(e, ev.SubCallStarted) and e.kind == "rlm")
    assert rlm["parent_id"] == rlm_started.parent_id == "R.t1.c1" and rlm["depth"] == 1
    turns = [c for c in calls.values() if c["kind"] == "root"]
    turn_ids = [e.call_id for e in events if isinstance(e, ev.RootTurnStarted)]
    assert sorted(c["id"] for c in turns) == sorted(turn_ids) == sorted([f"{rlm['id']}.t1", "R.t1", "R.t2"])
    replied = {e.call_id: e for e in events if isinstance(e, ev.RootReplied)}
    assert calls["R.t1"]["parent_id"] == "R" and calls["R.t1"]["depth"] == 0
    assert calls["R.t1"]["response"] == replied["R.t1"].text
    assert calls["R.t1"]["status"] == "ok" and calls["R.t1"]["cost_usd"] == replied["R.t1"].cost_usd
    inner_turn = calls[f"{rlm['id']}.t1"]
    assert inner_turn["parent_id"] == rlm["id"] and inner_turn["depth"] == 1
    inner = [c for c in calls.values() if c["parent_id"] == f"{rlm['id']}.t1.c1"]
    assert len(inner) == 1 and inner[0]["kind"] == "sub" and inner[0]["depth"] == 2
    subs = [c for c in calls.values() if c["kind"] == "sub"]
    finished = {e.call_id: e for e in events if isinstance(e, ev.SubCallFinished)}
    prompts = {e.call_id: e.prompt for e in events if isinstance(e, ev.SubCallStarted)}
    assert all(c["status"] == "ok" and c["response"] == finished[c["id"]].response for c in subs)
    assert all(c["prompt"] == prompts[c["id"]] for c in subs)
    assert len(subs) + len(nested) == store.get_run("run-c")["sub_calls"] == len(finished)
    cells = store.db.execute("SELECT id, is_syntax_error FROM cells WHERE run_id = 'run-c' ORDER BY seq").fetchall()
    executed = [e for e in events if isinstance(e, ev.CellExecuted)]
    assert [c[0] for c in cells] == [e.call_id for e in executed]
    assert sum(c[1] for c in cells) == sum(e.is_syntax_error for e in executed) == 1


def test_totals_are_current_while_the_run_streams(store: RunStore):
    events = recorded_run("sales", "run-live")
    writer = store.writer()
    cut = next(i for i, e in enumerate(events) if isinstance(e, ev.RootTurnStarted) and e.call_id == "R.t2")
    for e in events[:cut]:
        writer(e)
    writer.flush()
    run = store.get_run("run-live")
    budget = [e for e in events[:cut] if isinstance(e, ev.BudgetChanged)][-1]
    assert run["status"] == "running"
    assert run["cost_usd"] == budget.spent_usd and run["sub_calls"] == budget.sub_calls
    cells = [e for e in events[:cut] if isinstance(e, ev.CellExecuted)]
    assert run["iterations"] == 1 and run["cells"] == len(cells) == 2
    assert run["syntax_errors"] == sum(c.is_syntax_error for c in cells) == 1
    for e in events[cut:]:
        writer(e)
    writer.close()
    assert store.get_run("run-live")["status"] == "finished"


def test_a_failed_run_keeps_its_error_and_open_calls_are_closed(store: RunStore):
    events = recorded_run("failed", "run-f")
    # The engine closes every call it opens, so a call still open when a run fails is made
    # here by hand: the writer's safety net for arbitrary streams, not engine output.
    started = ev.SubCallStarted(run_id="run-f", seq=events[-1].seq, ts=events[-1].ts, call_id="R.s99",
                                parent_id="R.t1", kind="llm", model=events[0].sub_model, prompt="p", depth=0)
    last = dataclasses.replace(events[-1], seq=events[-1].seq + 1)
    write_events(store, events[:-1] + [started, last])
    run = store.get_run("run-f")
    assert run["status"] == "failed" == last.status and run["error"] == last.error and last.error
    assert {c["id"]: c["status"] for c in store.calls("run-f")}["R.s99"] == "unfinished"


def test_closing_the_writer_before_a_result_marks_the_run_interrupted(store: RunStore):
    write_events(store, recorded_run("export", "run-i", finish=False))
    run = store.get_run("run-i")
    assert run["status"] == "interrupted" and "without a result" in run["error"]


def test_a_closed_writer_refuses_events(store: RunStore):
    writer = store.writer()
    writer.close()
    with pytest.raises(StoreWriteError):
        writer(recorded_run("failed", "x")[0])


def test_two_writers_of_one_process_write_side_by_side(store: RunStore):
    a, b = store.writer(), store.writer()
    for ea, eb in zip(recorded_run("export", "run-1"), recorded_run("export", "run-2")):
        a(ea)
        b(eb)
    a.close()
    b.close()
    assert [store.get_run(r)["status"] for r in ("run-1", "run-2")] == ["finished", "finished"]


def test_a_batch_the_database_refuses_is_reported_and_later_events_still_land(store: RunStore, caplog):
    events = recorded_run("sales", "run-x")
    assert not [e for e in events if isinstance(e, ev.Notice)]     # only the refused one below is a Notice
    store.db.execute("CREATE TRIGGER refuse_notices BEFORE INSERT ON events WHEN new.type = 'Notice' "
                     "BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    writer = store.writer()
    for e in events[:5]:
        writer(e)
    writer.flush()
    writer(ev.Notice(run_id="run-x", seq=1000, level="info", message="refused"))
    with pytest.raises(StoreWriteError, match="disk says no"):
        writer.flush()
    assert "lost 1 events" in caplog.text
    store.db.execute("DROP TRIGGER refuse_notices")
    for e in events[5:]:
        writer(e)
    writer.close()
    assert store.get_run("run-x")["status"] == "finished"
    assert without_tokens(store.iter_events("run-x")) == without_tokens(events)     # all but the refused one


def test_writes_from_the_store_and_the_writer_thread_interleave_without_busy_errors(store: RunStore, tmp_path):
    from .test_sources import docs
    # generated on purpose: a burst of ~2,000 events, far more than any small recording,
    # so that the writer thread and the store's connection really contend for the file
    events = synthetic_run("busy", turns=20, subcalls_per_cell=10)
    store.save_sources("other", docs(), [])
    write_events(store, recorded_run("export", "other"))
    export(store, "other", "json", tmp_path / "other.json", include_texts=True)
    writer = store.writer()
    for i, e in enumerate(events):
        writer(e)
        if i % 200 == 0:                       # the store's own connection writes meanwhile
            store.save_sources("busy", docs(), [])
            store.delete_run("other")
            assert store.import_json(tmp_path / "other.json") == "other"
    writer.flush()
    writer.close()
    assert without_tokens(store.iter_events("busy")) == without_tokens(events)
    assert store.get_run("busy")["status"] == "finished"


def test_submitted_rows_are_written_after_the_runs_events_and_in_their_commit(store: RunStore):
    """One writer for many runs (a grid's): a submitted function sees the rows of every
    event enqueued before it; one that raises is undone and told to its caller alone."""
    first, second = recorded_run("sales", "run-s1"), recorded_run("sales", "run-s2")
    writer = store.writer()
    try:
        for event in first:
            writer(event)
        told = {}
        writer.submit(lambda db: db.execute("UPDATE runs SET grid_id = 'g' WHERE id = 'run-s1'"),
                      lambda exc: told.setdefault("seen", exc))

        def broken(db):
            db.execute("UPDATE runs SET grid_id = 'broken' WHERE id = 'run-s1'")
            raise ValueError("no such cell")
        writer.submit(broken, lambda exc: told.setdefault("broken", exc))
        for event in second:
            writer(event)
        writer.flush()
        assert told["seen"] is None
        assert isinstance(told["broken"], ValueError) and str(told["broken"]) == "no such cell"
    finally:
        writer.close()
    assert store.get_run("run-s1")["status"] == store.get_run("run-s2")["status"] == "finished"
    grid = store.db.execute("SELECT grid_id FROM runs WHERE id = 'run-s1'").fetchone()[0]
    assert grid == "g"                                     # the broken call's change was undone
    with pytest.raises(StoreWriteError, match="closed"):
        writer.submit(lambda db: None)
