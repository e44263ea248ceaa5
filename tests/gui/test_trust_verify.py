"""Verify from History in the real window: a stored run re-executed with the
recorded sub-call answers matches; after tampering with its record, the window
shows where it diverges. The loop keeps running meanwhile (no freeze)."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import code

import core.trust.verify  # noqa: F401,E402 - a missing module must fail, not skip

SCRIPT = [
    code("lines = context.splitlines()\nprint(len(lines), 'lines')"),
    code("rev = [l for l in lines if 'Revenue in Q3' in l]\n"
         "answers = llm_query_batched(['Extract the number: ' + r for r in rev])\nprint(answers)"),
    code("FINAL('Q3: ' + answers[0])"),
]


@pytest.fixture
def stored(studio, qloop, openai_server):
    from core.store import RunStore
    from tests.support.trust_runs import stored_run
    openai_server.script("root", replies=list(SCRIPT))
    openai_server.script("sub", fn=lambda r: "42 million")
    store = RunStore.open()
    outcome = run_async(qloop, stored_run(openai_server, store))
    assert outcome.status == "finished"
    yield studio[0], studio[1], store, outcome
    store.close()


def verify_in_window(window, controller, qloop, run_id):
    controller.history.refresh()
    assert window.history_pane.select(run_id)
    actions = controller.trust.actions
    assert actions.bar.verify_button.isEnabled()
    ticks = []

    async def body():
        actions.bar.verify_button.click()
        task = actions.verify_task
        assert task is not None
        while not task.done():                         # the loop (and the window) keep going
            ticks.append(1)
            await asyncio.sleep(0.01)
        await task
    run_async(qloop, body(), timeout=60)
    assert len(ticks) > 1
    return actions.verify_view


def test_verify_of_a_stored_run_matches(stored, qloop, openai_server):
    window, controller, _store, outcome = stored
    asked = len(openai_server.history)
    view = verify_in_window(window, controller, qloop, outcome.run_id)
    assert view.isVisible()
    assert view.verdict.text().startswith("Verified")
    assert view.cell_results() == [("turn 1 · cell 1", "same"), ("turn 2 · cell 1", "same"),
                                   ("turn 3 · cell 1", "same")]
    assert not view.divergence.isVisibleTo(view)
    assert "answer is the same" in view.summary.text()
    assert len(openai_server.history) == asked                 # no model was called
    assert "verified" in window.notifier.last.message


def test_tampered_record_shows_the_divergence(stored, qloop):
    from tests.support.trust_runs import tamper_event
    window, controller, store, outcome = stored
    tamper_event(store, outcome.run_id, "SubCallFinished", 0, "response", "<forged>")
    view = verify_in_window(window, controller, qloop, outcome.run_id)
    assert view.verdict.text().startswith("Diverges")
    results = dict(view.cell_results())
    assert results["turn 1 · cell 1"] == "same" and results["turn 2 · cell 1"] == "different"
    assert view.divergence.isVisibleTo(view)
    text = view.divergence.toPlainText()
    assert text.startswith("First divergence: turn 2, cell 1") and "<forged>" in text
    assert "answer is different" in view.summary.text()
    assert "diverges" in window.notifier.last.message
