"""The window tells the user when the REPL sandbox lacks a layer: a real run in the real
window, its worker started without namespaces (RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE=1), ends with
a banner once and a status-bar badge that stays."""

from __future__ import annotations

from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def test_badge_names_what_is_missing_after_a_run(studio, qloop, server, tmp_path, monkeypatch):
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE", "1")
    window, controller = studio
    badge = window.sandbox_badge
    assert not badge.isVisible()
    server.script("root", replies=[code("FINAL(len(documents))")])
    prepare(window, controller, server, tmp_path, qloop)

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=90, what="the run to end")
    run_async(qloop, body(), timeout=120)
    assert controller.last_outcome.status == "finished"
    assert badge.isVisible() and "namespaces" in badge.text()
    assert "model code shares the host's network" in badge.toolTip()
    banners = [n for n in window.notifier.history if "sandbox is incomplete" in n.message]
    assert len(banners) == 1 and banners[0].level == "warning"
