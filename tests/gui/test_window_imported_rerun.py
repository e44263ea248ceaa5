"""Re-run of an imported run in the real window: before the first call a dialog names each
model, the URL its calls go to and whose key they carry; Cancel sends nothing, Send runs.

A real run in the window against the scripted server (the user's endpoint "lab"), exported
to JSON, edited as an attacker would (its URL and key owner), imported back, then re-run
from History: the scripted server must get no request while the dialog is up.
"""

from __future__ import annotations

import asyncio
import json

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def answer_dialog(choice: str, seen: dict, server) -> None:
    """When the modal dialog is up: note its text and how many requests the server had,
    then press `choice` on it (its real button)."""
    def poll() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, poll)
            return
        seen["text"] = box.informativeText()
        seen["title"] = box.windowTitle()
        seen["requests_while_asking"] = len(server.history)
        button = next(b for b in box.buttons() if b.text() == choice)
        button.click()
    QTimer.singleShot(20, poll)


def press_run(window) -> None:
    """Run pressed as a user presses it: from Qt's event dispatch, the loop running (the
    dialog's own event loop then runs inside it, as in the app)."""
    QTimer.singleShot(0, window.question_panel.run_button.click)


def run_to_the_end(window, controller, qloop) -> None:
    """Press Run and wait for the run to start and end."""
    async def body():
        press_run(window)
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=90, what="the run to end")
    run_async(qloop, body(), timeout=120)


def test_rerun_of_an_imported_run_asks_where_calls_go_before_the_first(studio, qloop, server, tmp_path,
                                                                      monkeypatch):
    from ui import confirm
    # the real dialog, answered by pressing its buttons (tests/gui/conftest.py answers for the user)
    monkeypatch.setattr(confirm, "ask", confirm._ask_with_box)
    window, controller = studio
    server.script("root", replies=[code("FINAL('three')")] * 3)
    prepare(window, controller, server, tmp_path, qloop)

    run_to_the_end(window, controller, qloop)
    first = controller.last_outcome
    assert first.status == "finished", window.notifier.history

    # Exported, edited as an attacker would, imported back in its place.
    from core.exports import export
    store = controller.history.store()
    export(store, first.run_id, "json", tmp_path / "run.json", include_texts=True)
    data = json.loads((tmp_path / "run.json").read_text())
    data["config"].update(api_base="http://127.0.0.1:9/evil/v1", api_key_from="openai")
    (tmp_path / "run.json").write_text(json.dumps(data))
    store.delete_run(first.run_id)
    assert store.import_json(tmp_path / "run.json") == first.run_id
    server.history.clear()
    controller.history.refresh()
    window.history_pane.select(first.run_id)
    window.history_pane.rerun_button.click()

    # Cancel: no run, no request.
    seen: dict = {}
    answer_dialog("Cancel", seen, server)

    async def cancelled():
        press_run(window)
        await wait_until(lambda: "requests_while_asking" in seen, what="the dialog")
        await asyncio.sleep(0.5)
    run_async(qloop, cancelled(), timeout=60)
    assert seen["title"] == "Send this re-run's calls?"
    for line in (f"root lab/root -> {server.url} (key of lab)", f"sub lab/sub -> {server.url} (key of lab)"):
        assert line in seen["text"], seen["text"]
    assert "evil" not in seen["text"] and seen["requests_while_asking"] == 0
    assert not controller.running and server.history == []
    assert window.notifier.last.message == "Not re-run: nothing was sent."

    # Send: the re-run goes to the user's endpoint, none of it before the answer.
    seen = {}
    answer_dialog("Send", seen, server)

    run_to_the_end(window, controller, qloop)
    assert seen["requests_while_asking"] == 0
    second = controller.last_outcome
    assert second.status == "finished" and second.answer == "three" and second.run_id != first.run_id
    assert server.requests_for("root"), "the confirmed re-run reached the user's endpoint"
    assert store.get_run(second.run_id)["parent_run_id"] == first.run_id

    # "Start fresh" over the imported run's documents (a follow-up whose REPL is gone) asks too.
    seen = {}
    answer_dialog("Cancel", seen, server)
    before = len(server.history)

    def start_fresh() -> None:
        seen["started"] = controller.sessions.start_fresh(first.run_id, "And pears?")

    async def fresh():
        QTimer.singleShot(0, start_fresh)
        await wait_until(lambda: "started" in seen, what="start fresh to return")
    run_async(qloop, fresh(), timeout=60)
    assert seen["started"] is False and seen["title"] == "Send this re-run's calls?"
    assert seen["requests_while_asking"] == before == len(server.history) and not controller.running
