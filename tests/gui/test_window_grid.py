"""The review grid in the real window against the scripted server: the Grid button opens
the grid view, a questions file runs over Sources' documents, the table fills cell by cell
(running, then the typed value and its cost), the grid is listed, a cell opens its run in
the main window and its cited passage in the source viewer; bad input is said in the view."""

from __future__ import annotations

import json
import re

from PySide6.QtCore import Qt

from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.openai_server import Reply

COLUMNS = [{"name": "count", "question": "How many fruits are counted?", "type": "number"},
           {"name": "fruit", "question": "Which fruit is it?", "type": "text"}]
ANSWERS = {("one.txt", "count"): "3 [doc:one.txt:line 1]", ("one.txt", "fruit"): "apples [doc:one.txt:line 1]",
           ("sub/two.md", "count"): "4 [doc:sub/two.md:line 2]", ("sub/two.md", "fruit"): "pears [doc:sub/two.md:line 2]"}


def root_fn(req):
    text = json.dumps(req.messages)
    path = re.search(r"Answer for the document (\S+) only", text).group(1)
    name = "count" if COLUMNS[0]["question"] in text else "fruit"
    return Reply(code(f"FINAL({ANSWERS[(path, name)]!r})"), usage=(100, 10))


def grid_view_with_columns(controller, tmp_path):
    """The grid view open, a questions file of COLUMNS written and typed in: (glue, view, file)."""
    cols = tmp_path / "cols.jsonl"
    cols.write_text("".join(json.dumps(c) + "\n" for c in COLUMNS))
    glue = controller.grids
    view = glue.open_view()
    view.columns_edit.setText(str(cols))
    return glue, view, cols


def test_a_grid_fills_in_the_window_and_a_cell_opens_its_evidence(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", fn=root_fn, latency_s=0.3)
    prepare(window, controller, server, tmp_path, qloop)
    cols = tmp_path / "cols.jsonl"
    cols.write_text("".join(json.dumps(c) + "\n" for c in COLUMNS))
    glue = controller.grids
    assert glue.action in window.toolbar.actions()
    view = glue.open_view()
    assert view.isVisible() and view.grid_list.count() == 0
    states_seen = set()
    view.model.dataChanged.connect(lambda index, _i: states_seen.add(view.model.cell(index.row(), index.column())["state"]))
    view.columns_edit.setText(str(cols))

    async def body():
        view.run_button.click()
        assert glue.task is not None and not view.run_button.isEnabled() and view.stop_button.isEnabled()
        return await glue.task
    data = run_async(qloop, body(), timeout=180)
    assert data.counts()["done"] == 4
    assert {"running", "done"} <= states_seen                      # the table filled live
    model = view.model
    assert (model.rowCount(), model.columnCount()) == (2, 2)
    assert [model.headerData(i, Qt.Orientation.Horizontal) for i in range(2)] == ["count", "fruit"]
    shown = {(model.headerData(r, Qt.Orientation.Vertical), model.headerData(c, Qt.Orientation.Horizontal)): model.data(model.index(r, c))
             for r in range(2) for c in range(2)}
    assert shown == {("one.txt", "count"): "3", ("one.txt", "fruit"): "apples",
                     ("sub/two.md", "count"): "4", ("sub/two.md", "fruit"): "pears"}
    assert "done · $" in model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole)   # tooltip: state, cost
    assert view.status_label.text().startswith("Done: 4 done, 0 failed, 0 limited")
    assert view.grid_list.count() == 1 and "2 questions x 2 documents" in view.grid_list.item(0).text()
    assert view.export_button.isEnabled()

    # A cell opens its run (replayed in the main window) and its passage in the source viewer.
    run_id = model.cell(1, 0)["run_id"]
    assert glue.open_cell(1, 0)
    assert controller.history.replaying == run_id
    viewer = controller.trust.viewer
    assert viewer.isVisible() and viewer.current_path == "sub/two.md" and viewer.selected_text() == "pears: 4"

    # Export from the view; bad input is said, nothing runs.
    out = glue.export(str(tmp_path / "grid.csv"))
    assert out.read_text().splitlines()[1:] == ["one.txt,3,apples", "sub/two.md,4,pears"]
    asked = len(server.history)
    view.columns_edit.setText("")
    view.run_button.click()
    assert view.status_label.text().startswith("Pick a questions file")
    cols.write_text('{"question": "When?", "type": "colour"}\n')
    view.columns_edit.setText(str(cols))
    view.run_button.click()
    assert "cols.jsonl line 1: unknown type 'colour'" in view.status_label.text()
    assert len(server.history) == asked and view.run_button.isEnabled()


def test_stop_in_the_window_keeps_the_finished_cells(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", fn=root_fn, latency_s=1.0)
    prepare(window, controller, server, tmp_path, qloop)
    glue, view, _ = grid_view_with_columns(controller, tmp_path)

    async def body():
        view.run_button.click()
        await wait_until(lambda: view.model.counts().get("running", 0) > 0, timeout=60, what="a cell running")
        view.stop_button.click()
        return await glue.task
    data = run_async(qloop, body(), timeout=180)
    assert data.status == "stopped" and data.counts()["running"] == 0
    assert data.counts()["queued"] > 0
    assert view.status_label.text().startswith("Stopped:") and view.run_button.isEnabled()
