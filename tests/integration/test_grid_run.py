"""GridRun in this process with the real run service, store, REPL workers and scripted
server: cells as per-document RLM runs (code, sub-calls, FINAL) reserving from one grid
budget under a randomized schedule; Stop keeps every finished cell and a resume runs the rest."""

import asyncio
import random
import re

import pytest

from app.grid_runs import GridCells
from app.run_service import RunService
from core.config import Price, RunConfig
from core.grid import store as gs
from core.grid.model import Column, Row
from core.grid.runner import GridRun
from core.ingest import ingest
from core.store import RunStore
from core.store.db import connect
from tests.support import leaks
from tests.support.grid_corpus import expected, write_corpus
from tests.support.openai_server import Reply

ROOT_CODE = ("Reading the line.\n```repl\nline = context.splitlines()[2]\n"
             "out = llm_query('Extract the date: ' + line) + ' [doc:' + documents[0]['path'] + ':line 2]'\n"
             "FINAL(out)\n```")


def script(server, rng=None):
    def delay():
        if rng is not None:
            import time
            time.sleep(rng.uniform(0.0, 0.15))

    def root(req):
        delay()
        return ROOT_CODE

    def sub(req):
        delay()
        return req.prompt.split(": ")[-1]
    server.script("root", fn=root)
    server.script("sub", fn=sub)
    server.price("root", 1, 2)
    server.price("sub", 0.5, 1)


async def grid_of(tmp_path, n, server, **config):
    write_corpus(tmp_path / "docs", n)
    found = await ingest([str(tmp_path / "docs")])
    docs = sorted(found.documents, key=lambda d: d.path)
    cfg = RunConfig(root_model="openai/root", sub_model="openai/sub", api_base=server.url, mode="rlm",
                    max_iterations=3, max_depth=1, cell_timeout_s=20, request_timeout_s=20, memory_limit_mb=1024,
                    prices={"openai/root": Price(1, 2), "openai/sub": Price(0.5, 1)}, **config)
    store = RunStore.open()
    db = connect(store.path)
    grid_id, _ = gs.open_grid(db, [Column("renewal", "What is the renewal date?", "date")],
                              [Row(d.path, d.sha256, d.chars) for d in docs])
    return store, db, grid_id, docs, cfg


def new_run(store, db, grid_id, docs, cfg, **kw):
    return GridRun(db, grid_id, docs, cfg, run_cell=GridCells(RunService(store=store, keys=None)).run_cell, **kw)


@pytest.mark.timeout(300)
async def test_stop_keeps_every_finished_cell_and_a_resume_runs_the_rest(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    script(server)
    server.script("root", fn=lambda req: Reply(ROOT_CODE, usage=(300, 60)), latency_s=0.4)
    store, db, grid_id, docs, cfg = await grid_of(tmp_path, 12, server)
    grid = new_run(store, db, grid_id, docs, cfg, concurrency=3)
    ended = []

    def on_cell(event):
        if event.state == "done":
            ended.append(event)
            if len(ended) == 4:
                grid.stop()
    data = await grid.run(on_cell=on_cell)
    counts = data.counts()
    assert data.status == "stopped" and counts["running"] == 0
    assert counts["done"] >= 4 and counts["queued"] > 0 and counts["done"] + counts["queued"] == 12
    assert leaks.settle() == []                                # no REPL worker left behind
    kept = {k: c["run_id"] for k, c in data.cells.items() if c["state"] == "done"}
    for (row, _), cell in data.cells.items():
        if cell["state"] == "done":
            assert cell["value"] == expected(row)["renewal"] or (cell["value"] is None and row % 10 == 7)
            assert cell["citations"][0]["ok"]

    data = await new_run(store, db, grid_id, docs, cfg, concurrency=3).run()
    assert data.status == "finished" and data.counts()["done"] == 12
    assert all(data.cells[k]["run_id"] == run_id for k, run_id in kept.items())
    statuses = dict(db.execute("SELECT r.status, count(*) FROM grid_cells c JOIN runs r ON r.id = c.run_id "
                               "GROUP BY r.status").fetchall())
    assert statuses == {"finished": 12}
    db.close()
    store.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", [1, 2])
async def test_one_budget_holds_every_call_of_every_cell_under_a_random_schedule(server, tmp_path, monkeypatch,
                                                                                seed):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    script(server, random.Random(seed))
    store, db, grid_id, docs, cfg = await grid_of(tmp_path, 14, server, root_max_tokens=1500, sub_max_tokens=300)
    cap = 0.012
    grid = new_run(store, db, grid_id, docs, cfg, concurrency=6, max_cost_usd=cap)
    data = await grid.run()
    counts = data.counts()
    assert grid.budget.overrun_usd == 0 and grid.budget.estimated_calls == 0
    assert server.billed_usd() <= cap + 1e-12
    assert grid.budget.spent_usd <= cap + 1e-12 and data.cost_usd <= cap + 1e-12
    assert data.cost_usd == pytest.approx(server.billed_usd())
    assert counts["done"] > 0 and counts["limited"] > 0, counts
    assert grid.budget.reserved_usd == pytest.approx(0.0) and grid.budget.in_flight == 0
    for cell in data.cells.values():
        if cell["state"] == "limited":
            assert re.search(r"dollar cap", cell["error"] or ""), cell
    assert leaks.settle() == []
    db.close()
    store.close()


@pytest.mark.timeout(300)
async def test_a_document_changed_since_it_was_read_fails_its_cells_and_the_rest_run(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    script(server)
    store, db, grid_id, docs, cfg = await grid_of(tmp_path, 4, server)
    (tmp_path / "docs" / "contract_002.txt").write_text("rewritten since the grid read it\n")
    data = await new_run(store, db, grid_id, docs, cfg, concurrency=2).run()
    assert data.counts()["done"] == 3 and data.counts()["failed"] == 1
    error = data.cells[(2, 0)]["error"]
    assert "contract_002.txt" in error and "changed" in error, error
    db.close()
    store.close()


@pytest.mark.timeout(300)
async def test_cancelling_the_grid_ends_its_running_cells_and_keeps_the_ended_ones(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    script(server)
    server.script("root", fn=lambda req: Reply(ROOT_CODE, usage=(300, 60)), latency_s=0.5)
    store, db, grid_id, docs, cfg = await grid_of(tmp_path, 8, server)
    ended = asyncio.Event()

    def on_cell(event):
        if event.state == "done":
            ended.set()
    task = asyncio.ensure_future(new_run(store, db, grid_id, docs, cfg, concurrency=3).run(on_cell=on_cell))
    await asyncio.wait_for(ended.wait(), 120)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    data = gs.load_grid(db, grid_id)
    counts = data.counts()
    assert data.status == "stopped" and counts["running"] == 0 and counts["done"] >= 1 and counts["queued"] > 0
    assert leaks.settle() == []
    statuses = {s for (s,) in db.execute("SELECT status FROM runs")}
    assert "running" not in statuses
    db.close()
    store.close()
