"""Columns read from text or JSON lines; the grid's tables written cell by cell, resumed."""

import pytest

from core.grid import store as gs
from core.grid.model import Column, ColumnError, Row, cell_question, parse_columns
from core.store import RunStore
from core.store.db import connect, write_transaction


def test_plain_lines_and_json_lines():
    cols = parse_columns("What law governs?\n# a comment\n\n"
                         '{"name": "renewal", "question": "Renewal date?", "type": "Date", '
                         '"instruction": "The first renewal only."}\n'
                         '{"question": "Auto renews?", "type": "yes_no"}\n')
    assert cols == [Column("What law governs?", "What law governs?"),
                    Column("renewal", "Renewal date?", "date", "The first renewal only."),
                    Column("Auto renews?", "Auto renews?", "yes/no")]


@pytest.mark.parametrize("text, sentence", [
    ("", "q.txt: no questions"),
    ('{"question": ""}', "q.txt line 1: the question is empty"),
    ('{"question": "a?", "type": "money"}', "q.txt line 1: unknown type 'money' (one of text, number, date"),
    ('{"question": "a?"', "q.txt line 1: not valid JSON"),
    ('["a?"]', "q.txt line 1: expected a JSON object"),
    ('{"question": 3}', "q.txt line 1: name, question, type and instruction must be text"),
    ("a?\na?", "q.txt: two columns are named 'a?'"),
])
def test_bad_columns_say_where_and_what(text, sentence):
    with pytest.raises(ColumnError) as info:
        parse_columns(text, "q.txt")
    assert str(info.value).startswith(sentence)


def test_the_cell_question_names_the_document_the_type_and_the_instruction():
    q = cell_question(Column("renewal", "Renewal date?", "date", "The first renewal only."), "deals/acme.pdf")
    assert q.startswith("Renewal date?\nThe first renewal only.\n")
    assert "deals/acme.pdf" in q and "YYYY-MM-DD" in q and "[doc:deals/acme.pdf:line N]" in q


def test_a_grid_is_committed_cell_by_cell_and_reopened_for_resume(tmp_path):
    RunStore.open(tmp_path / "runs.db").close()
    db = connect(tmp_path / "runs.db")
    cols = [Column("a", "A?"), Column("b", "B?", "number")]
    rows = [Row("x.txt", "s1", 10), Row("y.pdf", error="y.pdf could not be read: corrupt")]
    grid_id, created = gs.open_grid(db, cols, rows, max_cost_usd=1.0)
    assert created and gs.queued_cells(db, grid_id) == [(0, 0), (0, 1)]
    with write_transaction(db):
        gs.start_cell(db, grid_id, 0, 0, "run1")
        gs.start_cell(db, grid_id, 0, 1, "run2")
    with write_transaction(db):
        gs.finish_cell(db, grid_id, gs.CellResult(0, 1, "done", "7 [doc:x.txt:line 1]", 7, cost_usd=0.25,
                                                  run_id="run2", citations=[{"ok": True}]))
    other = connect(tmp_path / "runs.db")             # what another process (a resume) reads
    data = gs.load_grid(other, grid_id)
    assert data.cells[(0, 1)]["value"] == 7 and data.cost_usd == 0.25
    assert data.cells[(1, 0)]["state"] == "failed" and data.cells[(1, 0)]["error"].startswith("y.pdf could not")
    assert data.counts() == {"queued": 0, "running": 1, "done": 1, "failed": 2, "limited": 0}

    again, created = gs.open_grid(other, cols, rows, max_cost_usd=2.0)     # the same grid: resumed
    assert (again, created) == (grid_id, False)
    assert gs.queued_cells(other, grid_id) == [(0, 0)]                     # the one left running
    with write_transaction(other):
        gs.finish_cell(other, grid_id, gs.CellResult(0, 0, "limited", error="the grid's dollar cap", cost_usd=0.5))
    with write_transaction(other):                                         # a re-run's cost replaces the old
        gs.finish_cell(other, grid_id, gs.CellResult(0, 1, "done", "8", 8, cost_usd=0.125, run_id="run3"))
    assert gs.load_grid(other, grid_id).cost_usd == 0.625
    assert gs.requeue(other, grid_id) == 1                                 # unreadable rows stay failed
    assert gs.queued_cells(other, grid_id) == [(0, 0)]
    assert [g["id"] for g in gs.list_grids(other)] == [grid_id] and gs.resolve_grid(other, grid_id[:6]) == grid_id
    changed, created = gs.open_grid(other, cols, [Row("x.txt", "s2", 10)])   # other text: another grid
    assert created and changed != grid_id
