"""A grid's memory follows the cells in flight: once a cell ends, its document's text and
its filled prompt are held by nothing, even while the finished run's objects wait for
Python's cyclic collector (a grid ends thousands of runs; docs/dev/grid.md has the
figures). Through the real run service, store and scripted server, each cell a plain call."""

import gc

import pytest

from app.grid_runs import GridCells
from app.run_service import RunService
from core.config import RunConfig
from core.grid import store as gs
from core.grid.model import Column, Row
from core.grid.runner import WRITER_LINGER_S, GridRun
from core.ingest import ingest
from core.store import RunStore
from core.store.db import connect
from tests.support.grid_corpus import COLUMNS, answer_cell, write_corpus

MARK = "Boilerplate clause text.\n" * 40          # in every document, in no answer or row


def texts_in(objects) -> int:
    """How many of `objects` refer to a string that holds a document's text."""
    return sum(1 for o in objects for r in gc.get_referents(o) if isinstance(r, str) and MARK in r)


@pytest.mark.timeout(300)
async def test_an_ended_cell_leaves_no_text_to_the_cyclic_collector(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.script("m", fn=answer_cell)
    write_corpus(tmp_path / "docs", 6, filler_lines=200)
    found = await ingest([str(tmp_path / "docs")])
    docs = sorted(found.documents, key=lambda d: d.path)
    assert not any(d.held for d in docs)             # plain text: read back from the file when asked
    cfg = RunConfig(root_model="openai/m", sub_model="openai/m", api_base=server.url, request_timeout_s=20,
                    context_windows={"openai/m": 1_000_000})
    store = RunStore.open()
    db = connect(store.path)
    writer = store.writer(linger_s=WRITER_LINGER_S)
    columns = [Column(**c) for c in COLUMNS[:2]]
    grid_id, _ = gs.open_grid(db, columns, [Row(d.path, d.sha256, d.chars) for d in docs])
    given = []
    cells = GridCells(RunService(store=store, writer=writer, keys=None))

    async def run_cell(question, document, config, budget, run_id):
        given.append(document)
        assert document.held and MARK in document.text  # held while its cell runs
        return await cells.run_cell(question, document, config, budget, run_id)
    grid = GridRun(db, grid_id, docs, cfg, run_cell=run_cell, concurrency=3, writer=writer)
    gc.collect()
    gc.disable()
    try:
        data = await grid.run(citations=False)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        garbage = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert data.counts()["done"] == 12 and gs.cell_counts(db, grid_id)["done"] == 12
    assert all(cell["citations"] == [] for cell in data.cells.values())       # not loaded: asked so
    assert texts_in(garbage) == 0                  # the runs' objects wait for it without a text
    assert not any(d.held for d in given)          # each cell let go of its copy's text
    assert MARK in given[0].text                   # which still reads back from the file
    cited = gs.load_grid(db, grid_id).cells[(0, 0)]["citations"]
    assert cited and cited[0]["ok"] and cited[0]["passage"] == "Renewal date: 2025-01-01"
    writer.close()
    db.close()
    store.close()
