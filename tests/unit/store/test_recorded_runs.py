"""Recordings of real engine runs (tests/support/record_runs.py) through a real EventWriter
into a real SQLite file: runs, calls and events say what the engine said."""

from __future__ import annotations

import pytest

from core import events as ev
from core.store import RunStore
from core.store.projection import TOTAL_COLUMNS
from tests.support.record_runs import RECORDINGS, recorded_run

from .conftest import write_events


def without_tokens(events):
    return [e for e in events if not isinstance(e, ev.RootTokens)]


@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_a_recorded_run_becomes_its_run_calls_and_events(store: RunStore, name: str):
    events = recorded_run(name, f"rec-{name}")
    write_events(store, events)
    run = store.get_run(f"rec-{name}")
    final = events[-1]
    assert final.type in ev.TERMINAL_TYPES and run["status"] == final.status
    for key in TOTAL_COLUMNS:
        if key in final.totals:
            assert run[key] == final.totals[key], key
    assert run["totals"] == final.totals
    stored = list(store.iter_events(f"rec-{name}"))
    assert without_tokens(stored) == without_tokens(events)
    # every call the engine reported is a row with the engine's figures; nothing stays running
    calls = {c["id"]: c for c in store.calls(f"rec-{name}")}
    for e in events:
        if e.type in ("RootReplied", "SubCallFinished", "RootCallFailed"):
            row = calls[e.call_id]
            assert (row["cost_usd"], row["input_tokens"], row["output_tokens"]) == \
                (e.cost_usd, e.input_tokens, e.output_tokens), e.call_id
    assert not [c for c in calls.values() if c["status"] == "running"]
    leaves = sum(c["cost_usd"] or 0.0 for c in calls.values() if c["kind"] != "rlm")
    assert abs(leaves - run["cost_usd"]) < 1e-12


def test_the_export_recording_has_what_the_store_tests_need():
    events = recorded_run("export", "x")
    kinds = {e.type for e in events}
    assert {"RootTokens", "CellExecuted", "SubCallFinished", "BudgetChanged", "Notice", "RunFinished"} <= kinds
    assert any(e.type == "CellExecuted" and e.is_syntax_error for e in events)
    assert any(e.type == "SubCallFinished" and e.kind == "rlm" for e in events)


def test_a_run_cut_off_is_marked_interrupted_when_its_writer_closes(store: RunStore):
    write_events(store, recorded_run("export", "cut", finish=False))
    run = store.get_run("cut")
    assert run["status"] == "interrupted"
    assert len(list(store.iter_events("cut"))) > 10
