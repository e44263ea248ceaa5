"""Caps in the real window, offscreen, against the scripted server on 127.0.0.1 (issue 22):
an endpoint says once whether its models are free; a run that cannot start has Run
disabled with the reason and fixes as buttons; a limited run flags its answer with a fix;
an unknown price is shown as unknown, never $0.0000."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from tests.gui.test_window_analyst import run_and_wait
from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def _run(window, controller, qloop, timeout=90):
    run_and_wait(window, controller, qloop, timeout)
    window.run_panes.flush()
    return controller.last_outcome


def _estimate(window, controller, qloop):
    """The cost preview (and with it Run's blocked state) for what the panel shows now:
    the debounced refresh the panel's edits started, and the one it computes."""
    trust = controller.trust

    async def body():
        trust.update_estimate()
        await wait_until(lambda: not trust._preview_timer.isActive() and trust.estimate_task is not None
                         and trust.estimate_task.done(), timeout=30, what="the cost preview")
    run_async(qloop, body(), timeout=40)


def test_an_endpoint_its_user_calls_paid_blocks_a_capped_run_until_its_models_are_marked_free(
        studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", replies=[code("FINAL('ran')")])
    prepare(window, controller, server, tmp_path, qloop)
    controller.settings.endpoints = []
    # Added by hand in Settings > Endpoints: asked once whether its models are free.
    dialog = controller.open_settings("endpoints")
    page = dialog.endpoints_page
    page.add_row({})
    page.name_edit.setText("lab")
    page.url_edit.setText(server.url)
    page.add_models(["root", "sub"])
    cost = page.cost_combo
    assert cost.currentData() == "free"                       # 127.0.0.1: free by its address
    page.url_edit.setText("https://gateway.example.com/v1")
    assert cost.currentData() == "paid"                       # a remote gateway: paid by default
    page.url_edit.setText(server.url)
    cost.setCurrentIndex(cost.findData("paid"))                # the user says: a proxy to a paid API
    cost.activated.emit(cost.currentIndex())
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert controller.settings.endpoints[0].runs_here is False

    qp = window.question_panel
    qp.set_caps({"max_depth": 1, "max_cost_usd": 0.5, "max_iterations": 4})
    _estimate(window, controller, qloop)
    assert not qp.run_button.isEnabled()
    assert qp.blocked().startswith("No price is known for lab/root and lab/sub")
    assert "--price" not in qp.blocked() and "openai/" not in qp.blocked()
    assert qp.blocked_box.isVisibleTo(window)
    labels = [b.text() for b in qp.fix_buttons]
    assert labels == ["Mark lab/root free", "Mark lab/sub free", "Set a price…", "Run without a cap"]
    assert qp.run_button.toolTip().startswith("Run is disabled: No price is known")

    qp.fix_buttons[0].click()
    _estimate(window, controller, qloop)
    assert qp.blocked().startswith("No price is known for lab/sub")
    qp.fix_buttons[0].click()                                   # now "Mark lab/sub free"
    _estimate(window, controller, qloop)
    assert qp.blocked() == "" and qp.run_button.isEnabled() and not qp.blocked_box.isVisibleTo(window)
    assert controller.settings.models["lab/root"].free and controller.settings.models["lab/sub"].free
    outcome = _run(window, controller, qloop)
    assert outcome.status == "finished" and outcome.answer == "ran", window.notifier.history


def test_a_cap_too_small_for_the_first_call_offers_the_cap_that_fits(studio, qloop, server, tmp_path):
    from app.settings import ModelSettings
    from core.config import Price
    window, controller = studio
    server.script("root", replies=[code("FINAL('ran')")])
    prepare(window, controller, server, tmp_path, qloop)
    controller.settings.models["lab/root"] = ModelSettings(price=Price(2.5, 10.0))
    controller.settings.models["lab/sub"] = ModelSettings(price=Price(0.15, 0.6))
    qp = window.question_panel
    qp.set_caps({"max_cost_usd": 0.01})
    _estimate(window, controller, qloop)
    assert not qp.run_button.isEnabled()
    assert qp.blocked().startswith("The dollar cap $0.0100 cannot pay even a short first root call")
    [fix] = qp.fix_buttons
    assert fix.text().startswith("Set the cap to $0.0")
    fix.click()
    _estimate(window, controller, qloop)
    assert qp.run_button.isEnabled(), qp.blocked()
    assert 0.01 < qp.caps()["max_cost_usd"] <= 0.05
    outcome = _run(window, controller, qloop)
    assert outcome.status == "finished", window.notifier.history
    meter = window.run_panes.meter
    assert f"/ ${qp.caps()['max_cost_usd']:.4f}" in meter.cost.text()          # the cap, not "no cap"
    # Shortened to fit: recorded on the turn, flagged on the answer, with the fix.
    [sent] = server.requests_for("root")
    assert sent.body["max_tokens"] < 8192
    card = window.run_panes.transcript.answer_card
    assert card.limited.isVisibleTo(window)
    assert card.limited_text.text() == ("1 reply shortened to fit the dollar cap: this answer may be "
                                        "incomplete.")
    assert card.fix_button.text() == "Raise the dollar cap…"
    before = qp.caps()["max_cost_usd"]
    card.fix_button.click()
    assert qp.caps()["max_cost_usd"] == round(before * 2, 2)          # doubled, never 100x


def test_refused_sub_calls_flag_the_answer_and_history(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("sub", fn=lambda r: r.prompt.upper())
    server.script("root", replies=[code("print(llm_query_batched(['a', 'b', 'c']))"), code("FINAL('partial')")])
    prepare(window, controller, server, tmp_path, qloop)
    controller.settings.caps["max_sub_calls"] = 1
    outcome = _run(window, controller, qloop)
    assert outcome.status == "finished"
    card = window.run_panes.transcript.answer_card
    assert card.limited.isVisibleTo(window)
    assert card.limited_text.text().startswith("2 of 3 sub-calls were refused by the sub-call cap")
    assert card.fix_button.text() == "Raise the sub-call cap…"
    assert "limited" in window.question_panel.status_label.text().lower()
    assert any("2 of 3 sub-calls were refused" in n.message for n in window.notifier.history)
    card.fix_button.click()
    assert controller.settings_dialog is not None                      # Settings > Caps
    assert controller.settings_dialog.tabs.currentWidget() is controller.settings_dialog.caps_page
    controller.settings_dialog.reject()
    model = window.history_pane.model
    [row] = [r for r in model.rows() if r.id == outcome.run_id]
    assert row.limited.startswith("2 of 3 sub-calls were refused")
    index = model.index(model.rows().index(row), model.COL_STATUS)
    assert model.data(index) == "finished · limited"


def test_a_model_without_a_price_shows_an_unknown_cost_without_a_cap(studio, qloop, server, tmp_path):
    from app.settings import Endpoint
    window, controller = studio
    server.script("root", replies=[code("FINAL('ran')")])
    prepare(window, controller, server, tmp_path, qloop)
    controller.settings.endpoints = [Endpoint("lab", server.url, ["root", "sub"], needs_key=True,
                                              runs_here=False)]
    outcome = _run(window, controller, qloop)
    assert outcome.status == "finished"
    meter = window.run_panes.meter
    assert meter.cost.text() == "cost unknown (no cap)"
    assert "$0.0000" not in window.run_panes.transcript.answer_card.figures.text()
    assert "cost unknown" in window.run_panes.transcript.answer_card.figures.text()
    [row] = [r for r in window.history_pane.model.rows() if r.id == outcome.run_id]
    assert row.unpriced
