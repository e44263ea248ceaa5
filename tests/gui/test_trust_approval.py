"""The approval gate in the real window: with "ask before batches over 2 calls",
a batch of 3 sub-calls waits for the dialog; nothing is sent until the user
approves; a refused batch reaches the root code as refused slots."""

from __future__ import annotations

import asyncio


from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import code, setup_lab

BATCH = code("out = llm_query_batched(['one', 'two', 'three'])\nprint(out)\nFINAL(' | '.join(out))")


def start(window, controller, server):
    server.script("sub", fn=lambda r: r.prompt.upper())
    server.script("root", replies=[BATCH])
    setup_lab(window, controller, server, "Shout the numbers.")
    controller.trust.thresholds.calls_spin.setValue(2)          # ask before batches of more than 2 calls
    assert controller.settings.caps["approve_batch_calls"] == 2
    window.question_panel.run_button.click()


def test_a_big_batch_waits_until_approved(studio, qloop, openai_server):
    window, controller = studio
    trust = controller.trust

    async def body():
        start(window, controller, openai_server)
        dialog = await wait_until(lambda: trust.approval, timeout=60, what="the approval dialog")
        assert dialog.isVisible() and "3 sub-calls" in dialog.message.text()
        await asyncio.sleep(0.5)                                  # the run waits: nothing was sent
        assert controller.running and openai_server.requests_for("sub") == []
        dialog.approve_button.click()
        await wait_until(lambda: not controller.running, timeout=60, what="the run to end")

    run_async(qloop, body(), timeout=120)
    outcome = controller.last_outcome
    assert outcome.status == "finished" and outcome.answer == "ONE | TWO | THREE", window.notifier.history
    assert len(openai_server.requests_for("sub")) == 3
    assert trust.approval is None and len(trust.approvals) == 1
    shown = trust.approvals[0]
    assert shown.calls == 3 and shown.reason == "more than 2 calls" and shown.model == "openai/sub"
    window.run_panes.flush()
    notices = [n.message for n in window.run_panes.view.notices]
    assert any("Waiting for approval" in m for m in notices) and any("approved" in m for m in notices)


def test_a_refused_batch_is_not_sent(studio, qloop, openai_server):
    window, controller = studio

    async def body():
        start(window, controller, openai_server)
        dialog = await wait_until(lambda: controller.trust.approval, timeout=60, what="the approval dialog")
        dialog.refuse_button.click()
        await wait_until(lambda: not controller.running, timeout=60, what="the run to end")

    run_async(qloop, body(), timeout=120)
    outcome = controller.last_outcome
    assert outcome.status == "finished", window.notifier.history
    assert openai_server.requests_for("sub") == []
    assert outcome.answer.count("did not approve") == 3
