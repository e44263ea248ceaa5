"""The record is whole or says it is not, with real SQLite faults: a writer that cannot
open its database (locked by another connection), a batch that fails after the
streamed text was folded (retried by the writer), and a run whose sources could not
be saved or that is refused at its start check."""

from __future__ import annotations

import sqlite3
import time

import pytest

from core import events as ev
from core.config import RunConfig
from core.store import RunStore, StoreWriteError
from core.store import db as store_db
from core.store.db import connect, write_transaction
from core.store.projection import Projection
from core.store.writer import EventWriter


def _event(cls, seq, **fields):
    return cls(run_id="run-x", seq=seq, ts=1000.0 + seq, call_id=fields.pop("call_id", "R.t1"),
               parent_id=fields.pop("parent_id", "R"), **fields)


def _started(seq=1):
    return _event(ev.RunStarted, seq, call_id="R", parent_id=None, question="q", root_model="m",
                  sub_model="s", config={}, documents=[], total_chars=0, version="t")


def test_a_writer_that_cannot_open_its_database_says_so_and_refuses_writes(tmp_path, monkeypatch):
    path = tmp_path / "runs.db"
    connect(path).conn.close()                            # a WAL database, then locked by another process's
    holder = sqlite3.connect(path, isolation_level=None)  # connection in exclusive locking mode
    holder.execute("CREATE TABLE IF NOT EXISTS t (x)")
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO t VALUES (1)")
    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_S", 0.2)
    writer = EventWriter(path)
    try:
        accepted = 0
        deadline = time.monotonic() + 10
        with pytest.raises(StoreWriteError, match="stopped"):
            while time.monotonic() < deadline:             # the thread fails within the busy timeout
                writer(_started(accepted + 1))
                accepted += 1
                time.sleep(0.001)
        assert writer.error is not None and "locked" in str(writer.error)
        with pytest.raises(StoreWriteError, match="not running"):
            writer.flush(timeout=2)
    finally:
        writer.close()
        holder.close()


def _tokens_then_reply(db, projection):
    with write_transaction(db):
        projection.apply(db, [_event(ev.RootTurnStarted, 2, iteration=1, depth=0, model="m"),
                              _event(ev.RootTokens, 3, delta="Hel"), _event(ev.RootTokens, 4, delta="lo ")])
    return [_event(ev.RootTokens, 5, delta="world"),
            _event(ev.RootReplied, 6, text="Hello world", input_tokens=1, output_tokens=2, cost_usd=0.0,
                   duration_ms=5, model="m")]


def test_a_retried_batch_appends_no_root_text_twice(tmp_path):
    store = RunStore.open(tmp_path / "runs.db")
    store.close()
    db = connect(tmp_path / "runs.db")
    projection = Projection()
    with write_transaction(db):
        projection.apply(db, [_started()])
    batch = _tokens_then_reply(db, projection)
    # the disk refuses the batch's last row (after the streamed text was folded in memory)
    db.execute("CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.type = 'RootReplied' "
               "BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END")
    with pytest.raises(sqlite3.Error):
        with write_transaction(db):
            projection.apply(db, batch)
    db.execute("DROP TRIGGER refuse")
    with write_transaction(db):                       # what EventWriter._write does next: the same batch again
        projection.apply(db, batch)
    rows = db.execute("SELECT payload_json FROM events WHERE run_id = 'run-x' AND type = 'RootTokens'").fetchall()
    assert [r[0] for r in rows] == ['{"delta":"Hello world"}']
    db.conn.close()


def _config(**kw):
    return RunConfig(root_model="openai/root", sub_model="openai/sub", api_base="http://127.0.0.1:9", **kw)


async def test_a_run_refused_at_its_start_check_stores_nothing():
    from app.runner import QuestionRun
    from core.engine.run import ConfigError
    from tests.support.trust_runs import DOCS
    with RunStore.open() as store:
        run = QuestionRun("q", documents=DOCS, config=_config(max_cost_usd=1.0), store=store,
                          key_for=lambda m: None)
        with pytest.raises(ConfigError, match="No price"):
            await run.execute()
        assert store.db.execute("SELECT count(*) FROM sources").fetchone()[0] == 0
        assert store.db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 0
        assert store.list_runs() == []


async def test_sources_that_could_not_be_saved_are_a_store_error(openai_server):
    from app.runner import QuestionRun
    from tests.support.trust_runs import DOCS, KEY, code, config
    openai_server.script("root", replies=[code("FINAL('done')")])
    with RunStore.open() as store:
        store.db.execute("CREATE TRIGGER refuse_sources BEFORE INSERT ON sources "
                         "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
        store.db.conn.commit()
        outcome = await QuestionRun("q", documents=DOCS, config=config(openai_server), store=store,
                                    key_for=lambda m: KEY).execute()
    assert outcome.status == "finished"
    assert outcome.store_error and "sources of this run could not be saved" in outcome.store_error
