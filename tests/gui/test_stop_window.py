"""The window's Stop while a fork is being prepared: preparing re-executes every recorded
cell (here a cell that slept 3 s), and Stop ends it there: no run is started or stored,
no worker process and no `rlm-repl-*` directory is left, the window says it stopped
before the run began, and the next run works."""

from __future__ import annotations

import time

import pytest

from tests.support import leaks
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import code, run_in_window, setup_lab

import core.engine.prepare  # noqa: F401,E402 - a missing module must fail, not skip


@pytest.fixture
def parent(studio, qloop, openai_server):
    from core.store import RunStore
    from tests.support.trust_runs import stored_run
    window, controller = studio
    setup_lab(window, controller, openai_server, "What was Q3 revenue?")
    openai_server.script("root", replies=[code("import time\ntime.sleep(3)\nx = 1"), code("print(x)"),
                                          code("FINAL('done')")])
    with RunStore.open() as store:
        outcome = run_async(qloop, stored_run(openai_server, store))
    assert outcome.status == "finished"
    return window, controller, outcome


def test_stop_while_a_fork_is_prepared(parent, qloop, openai_server):
    window, controller, outcome = parent
    actions = controller.trust.actions
    dialog = actions.fork_dialog_for(outcome.run_id, 3, show=False)
    choice = dialog.values()
    store = controller.history.store()
    runs_before = len(store.list_runs())
    asked_root = len(openai_server.requests_for("root"))

    async def body():
        actions.start_fork(outcome.run_id, choice, dialog.original_models)
        await wait_until(lambda: controller.running, what="the fork to start")
        await wait_until(lambda: leaks.worker_processes(), what="the rebuilt REPL's worker")
        time.sleep(0.5)                                       # inside the replayed 3 s cell
        stopped = time.monotonic()
        controller.stop_run()
        await wait_until(lambda: not controller.running, timeout=30, what="the fork to stop")
        return time.monotonic() - stopped
    took = run_async(qloop, body(), timeout=60)
    assert took < 2.0, f"Stop took {took:.1f} s: the preparation was not cut short"
    assert window.question_panel.status_label.text() == "Stopped before the run began."
    assert not leaks.repl_dirs() and not leaks.settle(2.0)
    assert len(store.list_runs()) == runs_before
    assert len(openai_server.requests_for("root")) == asked_root      # the fork's root was never asked
    openai_server.script("root", replies=[code("FINAL('next')")])
    window.question_panel.set_question("And now?")
    nxt = run_async(qloop, run_in_window(window, controller), timeout=60)
    assert nxt.status == "finished" and nxt.answer == "next"
