"""The cost preview next to Run (tokens and a dollar range for the chosen models,
from the documents' size) and, during a run, the projected cost to finish."""

from __future__ import annotations

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import code, setup_lab

import core.trust.preview  # noqa: F401,E402 - a missing module must fail, not skip


def priced(controller):
    from app.settings import ModelSettings
    from core.config import Price
    controller.settings.models["lab/root"] = ModelSettings(price=Price(1.0, 2.0))
    controller.settings.models["lab/sub"] = ModelSettings(price=Price(0.5, 1.0))


def test_estimate_before_and_projection_during_a_run(studio, qloop, openai_server):
    window, controller = studio
    trust = controller.trust
    priced(controller)
    setup_lab(window, controller, openai_server, "What was Q3 revenue?")

    async def estimate():
        task = trust.update_estimate()
        assert task is not None
        await task
    run_async(qloop, estimate())
    preview = trust.preview
    assert preview.isVisibleTo(window) and preview.estimate_text.startswith("Estimate: ~")
    low, high = trust.last_preview.usd_low, trust.last_preview.usd_high
    assert 0 < low < high
    assert "tokens in" in preview.text() and "$" in preview.text() and "heuristic" in preview.toolTip()

    # A smaller dollar cap bounds the high end.
    window.question_panel.set_caps({"max_cost_usd": round(high / 2, 2) or 0.01})
    run_async(qloop, estimate())
    assert trust.last_preview.usd_high <= round(high / 2, 2) or 0.01

    window.question_panel.set_caps({"max_cost_usd": 0})
    openai_server.script("sub", fn=lambda r: "noted", latency_s=1.5)
    openai_server.script("root", replies=[code("print(len(context))"),
                                          code("x = llm_query('Summarise: ' + context[:100])\nFINAL(x)")])

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: preview.projection_text.startswith("Projected to finish"), timeout=60,
                         what="the projection")
        assert controller.running and preview.isVisibleTo(window) and "at most $" in preview.text()
        await wait_until(lambda: not controller.running, timeout=60, what="the run to end")
        controller.trust.refresh()
        assert preview.projection_text == ""                     # the run ended: no projection left
        await wait_until(lambda: preview.estimate_text, timeout=30, what="the estimate for the next run")
    run_async(qloop, body(), timeout=120)
    assert controller.last_outcome.status == "finished", window.notifier.history


def test_no_estimate_without_documents(studio, qloop):
    window, controller = studio
    controller.set_documents([])
    assert controller.trust.update_estimate() is None
    assert not controller.trust.preview.isVisibleTo(window)
