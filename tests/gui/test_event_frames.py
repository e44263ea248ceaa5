"""A burst of engine events reaches the panes over several frames (app/engine_thread.py's
per-frame budget): in order, none dropped or doubled, and the panes end exactly as they
would have applying the whole run at once; Stop while a backlog is carried over still
stops the run, and the backlog is applied before the run is reported. Real runs: the
window's engine thread against the scripted server."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import code, run_in_window, setup_lab

import app.engine_thread  # noqa: F401 - a missing module must fail, not skip

CALLS = 90


def tree_rows(model, parent=QModelIndex(), depth=0) -> list[tuple]:
    """Every row the call tree model shows: depth, each column's text, id and status."""
    from ui.call_tree_model import COLUMNS, NODE_ID_ROLE, STATUS_ROLE
    rows = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        cells = tuple(model.index(row, col, parent).data(Qt.ItemDataRole.DisplayRole) for col in range(len(COLUMNS)))
        rows.append((depth, cells, index.data(NODE_ID_ROLE), index.data(STATUS_ROLE)))
        rows += tree_rows(model, index, depth + 1)
    return rows


def state(panes) -> tuple:
    panes.flush()
    view = panes.view
    return (tree_rows(panes.tree_model), panes.meter.toolTip(), panes.transcript.plain_text(),
            view.status, view.answer, view.budget.spent_usd, view.figures.sub_calls)


def watch(controller) -> list:
    """What reaches the panes, in order (the events each frame applied)."""
    applied: list = []
    apply_many = controller.panes.apply_many

    def applying(batch, deadline=None) -> int:
        done = apply_many(batch, deadline)
        applied.extend(batch[:done])
        return done
    controller.panes.apply_many = applying
    return applied


def test_a_burst_is_applied_over_several_frames_in_order_and_ends_as_applied_at_once(studio, qloop, openai_server):
    from ui.run_panes import RunPanes
    window, controller = studio
    setup_lab(window, controller, openai_server, "Fan out")
    openai_server.script("sub", fn=lambda r: f"seen {r.prompt}")
    openai_server.script("root", replies=[
        code(f"out = llm_query_batched([f'part {{i}}' for i in range({CALLS})])\nprint(len(out))"),
        code("FINAL(out[0] + ' .. ' + out[-1])")])
    bridge = controller.runs.bridge
    bridge.budget_ms = 0                      # each frame applies one event: the rest is carried over
    applied = watch(controller)
    outcome = run_async(qloop, run_in_window(window, controller), timeout=120)
    assert outcome.status == "finished" and outcome.answer == f"seen part 0 .. seen part {CALLS - 1}"
    assert bridge.carried > 0 and bridge.batches > 1 and bridge.pending == 0

    stored = list(controller.history.store().iter_events(outcome.run_id))
    assert [e.seq for e in applied] == sorted({e.seq for e in applied})       # in order, none doubled
    assert {e.seq for e in stored} <= {e.seq for e in applied}                # none lost
    assert sum(e.type == "SubCallFinished" for e in applied) == CALLS

    at_once = RunPanes(window)        # owned like the window's own panes, deleted with the window
    at_once.reset()
    at_once.apply_many(applied)
    assert state(controller.panes) == state(at_once)
    assert len(tree_rows(at_once.tree_model)) > CALLS
    at_once.hide()


def test_stop_while_a_backlog_is_carried_over_stops_the_run_and_applies_it(studio, qloop, openai_server):
    from ui.run_panes import RunPanes
    window, controller = studio
    setup_lab(window, controller, openai_server, "Stop me")
    openai_server.script("sub", fn=lambda r: "slow", latency_s=20.0)
    openai_server.script("root", replies=[code(f"print(llm_query_batched([f'q{{i}}' for i in range({CALLS})]))")])
    bridge = controller.runs.bridge
    bridge.budget_ms = 0
    applied = watch(controller)
    seen_backlog = []

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running and bridge.pending > 10, timeout=60,
                         what="a backlog of the sub-calls' events")
        seen_backlog.append(bridge.pending)
        window.question_panel.stop_button.click()
        await wait_until(lambda: not controller.running, timeout=30, what="the run to stop")
    run_async(qloop, body(), timeout=120)
    outcome = controller.last_outcome
    assert seen_backlog and outcome.status == "cancelled"
    assert bridge.pending == 0                                   # applied before the run was reported
    assert all(r.disconnected for r in openai_server.requests_for("sub"))
    stored = list(controller.history.store().iter_events(outcome.run_id))
    assert [e.seq for e in applied] == sorted({e.seq for e in applied})
    assert {e.seq for e in stored} <= {e.seq for e in applied}
    assert controller.panes.view.status == "cancelled"
    at_once = RunPanes(window)        # owned like the window's own panes, deleted with the window
    at_once.reset()
    at_once.apply_many(applied)
    assert state(controller.panes) == state(at_once)
    at_once.hide()
