"""History: search, filters, id prefixes, delete."""

from __future__ import annotations

import pytest

from core.store import AmbiguousRunId, RunBusyError, RunNotFound, RunStore
from tests.support.store_events import synthetic_run

from .conftest import write_events

T0 = 1_780_000_000.0


@pytest.fixture
def history(store: RunStore) -> RunStore:
    runs = [
        synthetic_run("aaa111", question="What were the total sales in 2023?", t0=T0, cost_per_call=0.01),
        synthetic_run("aaa222", question="Which supplier was late most often?", answer="Acme, 14 times.",
                      t0=T0 + 100, root_model="anthropic/claude-x", status="capped"),
        synthetic_run("bbb333", question="List every contract clause about penalties", answer="Clauses 4.2 and 9.",
                      t0=T0 + 200, sub_model="ollama/qwen", cost_per_call=0.0001),
    ]
    write_events(store, [e for run in runs for e in run])
    return store


def ids(rows):
    return [r["id"] for r in rows]


def test_newest_first_with_the_fields_the_cli_needs(history: RunStore):
    rows = history.list_runs()
    assert ids(rows) == ["bbb333", "aaa222", "aaa111"]
    row = rows[0]
    assert {"id", "status", "question", "created_at", "cost_usd", "root_model", "sub_model"} <= set(row)
    assert row["created_at"].endswith("Z") and row["cost_usd"] == pytest.approx(0.0011)
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
    assert ids(history.list_runs(model="ollama/qwen")) == ["bbb333"]
    assert ids(history.list_runs(since=T0 + 50)) == ["bbb333", "aaa222"]
    assert ids(history.list_runs(until=T0 + 50)) == ["aaa111"]
    assert ids(history.list_runs(min_cost=0.05)) == ["aaa111"]
    assert ids(history.list_runs(max_cost=0.005)) == ["bbb333"]
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
    for e in synthetic_run("live", finish=False):
        writer(e)
    writer.flush()
    with pytest.raises(RunBusyError):
        store.delete_run("live")
    writer.close()
    assert store.delete_run("live") is True
