"""History: search, filters, id prefixes, delete, over recordings of real engine runs
(tests/support/record_runs.py: sales, supplier, penalties)."""

from __future__ import annotations

import pytest

from core.store import AmbiguousRunId, RunBusyError, RunNotFound, RunStore
from tests.support.record_runs import recorded_run

from .conftest import write_events

T0 = 1_780_000_000.0


@pytest.fixture
def history(store: RunStore) -> RunStore:
    write_events(store, [e for run in RUNS.values() for e in run])
    return store


# aaa111: sales (finished, priced high), aaa222: supplier (openai/claude-x, capped),
# bbb333: penalties (sub-model openai/qwen-local, priced low); 100 s apart.
RUNS = {"aaa111": recorded_run("sales", "aaa111", t0=T0),
        "aaa222": recorded_run("supplier", "aaa222", t0=T0 + 100),
        "bbb333": recorded_run("penalties", "bbb333", t0=T0 + 200)}


def cost(run_id: str) -> float:
    return RUNS[run_id][-1].totals["cost_usd"]


def ids(rows):
    return [r["id"] for r in rows]


def test_newest_first_with_the_fields_the_cli_needs(history: RunStore):
    rows = history.list_runs()
    assert ids(rows) == ["bbb333", "aaa222", "aaa111"]
    row = rows[0]
    assert {"id", "status", "question", "created_at", "cost_usd", "root_model", "sub_model"} <= set(row)
    assert row["created_at"].endswith("Z") and row["cost_usd"] == pytest.approx(cost("bbb333"))
    assert ids(history.list_runs(limit=1, offset=1)) == ["aaa222"]


def test_full_text_search_over_questions_and_answers(history: RunStore):
    assert ids(history.list_runs(search="sales")) == ["aaa111"]
    assert ids(history.list_runs(search="acme")) == ["aaa222"]          # the answer
    assert ids(history.list_runs(search="clause penal")) == ["bbb333"]   # prefixes, all words
    assert ids(history.list_runs(search="million euros")) == ["aaa111"]
    assert history.list_runs(search="nothing-like-this") == []
    assert ids(history.list_runs(search='"sales" (*')) == ["aaa111"]  # FTS syntax is taken literally


def test_filters(history: RunStore):
    assert ids(history.list_runs(status="capped")) == ["aaa222"]
    assert ids(history.list_runs(model="claude")) == ["aaa222"]
    assert ids(history.list_runs(model="openai/qwen-local")) == ["bbb333"]
    assert ids(history.list_runs(since=T0 + 50)) == ["bbb333", "aaa222"]
    assert ids(history.list_runs(until=T0 + 50)) == ["aaa111"]
    assert cost("aaa111") > cost("aaa222") > cost("bbb333")
    assert ids(history.list_runs(min_cost=(cost("aaa111") + cost("aaa222")) / 2)) == ["aaa111"]
    assert ids(history.list_runs(max_cost=(cost("aaa222") + cost("bbb333")) / 2)) == ["bbb333"]
    assert ids(history.list_runs(search="supplier", status="finished")) == []


def test_a_unique_prefix_names_a_run(history: RunStore):
    assert history.resolve_id("bbb") == "bbb333"
    assert history.resolve_id("aaa111") == "aaa111"
    with pytest.raises(AmbiguousRunId, match="several runs"):
        history.resolve_id("aaa")
    with pytest.raises(RunNotFound):
        history.resolve_id("zzz")


def test_delete_removes_everything_of_the_run(history: RunStore):
    assert history.delete_run("aaa222") is True
    assert history.get_run("aaa222") is None
    for table in ("events", "calls", "sources"):
        assert history.db.execute(f"SELECT count(*) FROM {table} WHERE run_id = 'aaa222'").fetchone()[0] == 0
    assert history.list_runs(search="acme") == []            # gone from the index too
    assert history.delete_run("aaa222") is False
    assert ids(history.list_runs()) == ["bbb333", "aaa111"]


def test_a_run_still_being_written_cannot_be_deleted(store: RunStore):
    writer = store.writer()
    for e in recorded_run("sales", "live", finish=False):
        writer(e)
    writer.flush()
    with pytest.raises(RunBusyError):
        store.delete_run("live")
    writer.close()
    assert store.delete_run("live") is True
