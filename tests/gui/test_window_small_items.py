"""Smaller things of the window: Stop says nothing in internal field names, a replay
does not show the live run's "Stopped · 5.7 s", "Back to live" shows the run that was
left (not an empty view) and moves no toolbar button, saved settings take down a run
error they may have fixed."""

from __future__ import annotations

import asyncio
import re

from tests.gui.test_window_layout import started
from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401

FIELD_NAME = re.compile(r"\b[a-z]+_[a-z_]+\b")      # estimated_usage_calls, overrun_usd, max_tokens


def stop_a_run(window, controller, server, qloop):
    server.script("sub", fn=lambda r: "x", latency_s=3.0)
    server.script("root", replies=[code("out = llm_query_batched(['a', 'b', 'c'])\nprint(out)")] * 3)

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: len(server.requests_for("sub")) >= 3, timeout=20, what="the sub-calls")
        await asyncio.sleep(0.3)
        window.question_panel.stop_button.click()
        await wait_until(lambda: not controller.running, timeout=30, what="the run to stop")
        await asyncio.sleep(0.3)
    run_async(qloop, body(), timeout=60)


def test_stop_replay_and_back_to_live(studio, qloop, qapp, server, tmp_path):
    window, controller = studio
    controller.first_run.hide_welcome()
    prepare(window, controller, server, tmp_path, qloop)
    stop_a_run(window, controller, server, qloop)
    panes, qp = window.run_panes, window.question_panel
    assert controller.last_outcome.status == "cancelled"

    # Stop: no warning, and nothing in the transcript or the messages names an internal field.
    notices = panes.view.notices
    assert not [n.message for n in notices if n.level == "warning"], [n.message for n in notices]
    shown = panes.transcript.plain_text() + " ".join(n.message + n.advice for n in window.notifier.history)
    assert not FIELD_NAME.findall(shown.replace("llm_query_batched", "")), FIELD_NAME.findall(shown)
    assert qp.status_label.text().startswith("Stopped")
    live_text = panes.transcript.plain_text()
    live_items = panes.transcript.item_count()

    # A replay: the live run's status line does not stand beside it.
    toolbar = window.toolbar
    before = {a.text(): toolbar.widgetForAction(a).geometry() for a in toolbar.actions()
              if toolbar.widgetForAction(a) is not None and toolbar.widgetForAction(a).isVisible()}
    controller.history.open_run(controller.last_outcome.run_id)
    qapp.processEvents()
    assert qp.status_label.text() == ""
    assert panes.replay_bar.live_button.isVisibleTo(window)
    during = {a.text(): toolbar.widgetForAction(a).geometry() for a in toolbar.actions()
              if toolbar.widgetForAction(a) is not None and toolbar.widgetForAction(a).isVisible()}
    assert during == before, "the toolbar's buttons moved when the replay opened"

    # Back to live: the run that was left, whole; the toolbar stays put; the status line is back.
    panes.replay_bar.live_button.click()
    qapp.processEvents()
    assert not panes.replay_bar.isVisibleTo(window) and panes.live
    assert panes.transcript.item_count() == live_items and panes.transcript.plain_text() == live_text
    assert panes.view.meta.run_id == controller.last_outcome.run_id and panes.tree_model.rowCount() > 0
    assert qp.status_label.text().startswith("Stopped")
    after = {a.text(): toolbar.widgetForAction(a).geometry() for a in toolbar.actions()
             if toolbar.widgetForAction(a) is not None and toolbar.widgetForAction(a).isVisible()}
    assert after == before


def test_saved_settings_take_down_a_run_error(studio, qloop, qapp):
    window, controller = studio
    started(controller, qloop)
    from ui.notifier import explain_error
    window.notifier.post(explain_error("APIConnectionError: Connection refused", model="lab/root",
                                       api_base="http://127.0.0.1:9/v1"))
    assert window.banner.isVisibleTo(window) and "Nothing answers" in window.banner.note.message
    controller.settings_applied()                 # the address was fixed in Settings > Endpoints
    assert not window.banner.isVisibleTo(window)


def test_delete_is_enabled_only_for_a_stored_key(studio, qloop):
    window, controller = studio
    started(controller, qloop)
    dialog = controller.open_settings("keys")
    page = dialog.keys_page
    page.select_provider("openai")
    assert not page.delete_button.isEnabled()                      # nothing stored yet
    page.key_edit.setText("sk-test-0123456789abcd")
    page.set_button.click()
    assert page.delete_button.isEnabled()
    page.select_provider("anthropic")
    assert not page.delete_button.isEnabled()
    page.select_provider("openai")
    page.delete_button.click()
    assert controller.keys().get("openai") is None and not page.delete_button.isEnabled()
    dialog.reject()


def test_models_welcome_and_guide_are_in_the_menus(studio, qloop, qapp):
    window, controller = studio
    started(controller, qloop)
    view = {a.text(): a for a in window.menus["view"].actions() if a.text()}
    assert {"Recent", "Welcome", "Guide", "Models"} <= set(view), sorted(view)
    assert "Guide" in [a.text() for a in window.menus["help"].actions()]
    view["Models"].trigger()
    qapp.processEvents()
    assert controller.models.view is not None and controller.models.view.isVisibleTo(window)
    view["Welcome"].trigger()
    qapp.processEvents()
    assert controller.first_run.view.isVisibleTo(window)
    started(controller, qloop)                # the Welcome page looks for servers again
