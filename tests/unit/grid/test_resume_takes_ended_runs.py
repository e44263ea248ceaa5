"""A kill -9 between a cell's run ending and its cell's row: on resume the cell takes that
run's answer (the run is in the store, finished) instead of asking the model again; a cell
whose run did not finish, and a cell put back by --retry, run again."""

import asyncio

from core.config import RunConfig
from core.grid import store as gs
from core.grid.model import Column, Row
from core.grid.runner import GridRun
from core.ingest import ingest
from core.store import RunStore
from core.store.db import connect, write_transaction
from tests.support.record_runs import recorded_run


def test_a_cell_whose_run_ended_before_the_kill_takes_it_on_resume(tmp_path, monkeypatch):
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(tmp_path / "home"))
    (tmp_path / "docs").mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / "docs" / name).write_text(f"{name}: sales were 4.2 million euros\n")
    documents = sorted(asyncio.run(ingest([str(tmp_path / "docs")])).documents, key=lambda d: d.path)
    store = RunStore.open()
    writer = store.writer()
    for event in recorded_run("sales", "run-ended"):              # finished before the kill
        writer(event)
    for event in recorded_run("sales", "run-cut", finish=False):  # cut off by it
        writer(event)
    writer.close()
    db = connect(store.path)
    grid_id, _ = gs.open_grid(db, [Column("total", "What were the total sales?")],
                              [Row(d.path, d.sha256, d.chars) for d in documents])
    with write_transaction(db):                                    # what the killed process had written
        gs.start_cell(db, grid_id, 0, 0, "run-ended")
        gs.start_cell(db, grid_id, 1, 0, "run-cut")
    store.recover()                                                 # its runs: interrupted
    again, created = gs.open_grid(db, [Column("total", "What were the total sales?")],
                                  [Row(d.path, d.sha256, d.chars) for d in documents])
    assert (again, created) == (grid_id, False)

    asked = []

    async def run_cell(question, document, config, budget, run_id):
        asked.append(document.path)
        raise RuntimeError("the model is not asked in this test")
    shared = store.writer()
    grid = GridRun(db, grid_id, documents, RunConfig(root_model="openai/m", sub_model="openai/m"), run_cell=run_cell, writer=shared)
    data = asyncio.run(grid.run())
    shared.close()
    assert sorted(asked) == ["b.txt", "c.txt"]                      # the ended run was not asked again
    taken = data.cells[(0, 0)]
    assert taken["state"] == "done" and taken["run_id"] == "run-ended"
    assert taken["answer"] == store.get_run("run-ended")["answer"] == "Total sales in 2023 were 4.2 million euros."
    assert data.cells[(1, 0)]["state"] == "failed"                  # the cut run's cell ran (and failed here)
    assert store.get_run("run-ended")["grid_id"] == grid_id

    assert gs.requeue(db, grid_id, ("done",), [(0, 0)]) == 1
    assert gs.interrupted_cells(db, grid_id) == []                  # a requeued cell is not "interrupted"
    db.close()
    store.close()
