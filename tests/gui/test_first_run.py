"""The first minute in the real window: the welcome view finds a scripted
OpenAI-compatible server posing as a local model server (on a port the test
picks and tells the detector about), "Use this" selects it, "Try the samples"
loads the samples and the question, Run answers. Then the guide, the Recent
menu, and re-opening the last session at the next start."""

from __future__ import annotations

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401

from tests.support.openai_server import ScriptedOpenAI


def code(src: str) -> str:
    return f"Let me look.\n```repl\n{src}\n```"


@pytest.fixture
def local_server(monkeypatch, studio_home):
    server = ScriptedOpenAI().start()
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_DISCOVERY_PORTS", str(port))
    server.script("sub", replies=[])
    try:
        yield server, port
    finally:
        server.stop()


def test_first_minute_welcome_local_server_samples_run(local_server, studio, qloop, qapp):
    server, port = local_server
    window, controller = studio
    glue = controller.first_run
    view = glue.view
    server.script("coder", replies=[code(
        "names = sorted(d['path'] for d in documents)\n"
        "errors = context.count('certificate has expired')\n"
        "FINAL(f'{len(names)} documents, {errors} expired-certificate errors')")])

    assert view.isVisibleTo(window) and not window.run_panes.isVisibleTo(window)   # first start

    async def body():
        await wait_until(lambda: glue.started and glue.discovery_task and glue.discovery_task.done(),
                         timeout=20, what="discovery")
        await wait_until(lambda: glue.keys_task and glue.keys_task.done(), what="the keychain check")
        rows = {s.port: (s, combo, button) for s, combo, button in view.server_rows()}
        assert port in rows, [s for s in glue.servers]
        found, combo, button = rows[port]
        assert {combo.itemText(i) for i in range(combo.count())} == {"coder", "sub"}
        assert "No API keys yet" in view.keys_label.text()
        assert "Not running here" in view.missing_label.text() or len(rows) > 1
        combo.setCurrentText("coder")
        button.click()                                                # "Use this"
        model_id = f"local-{port}/coder"
        qp = window.question_panel
        assert qp.root_model() == model_id and qp.sub_model() == model_id
        endpoint = controller.settings.endpoint(f"local-{port}")
        assert endpoint is not None and endpoint.base_url == server.url and not endpoint.needs_key
        assert endpoint.runs_here is True and model_id not in controller.settings.models   # Free, said once
        assert window.notifier.last.action == "undo_use_server"
        assert window.notifier.last.message.startswith(f"Added the endpoint “local-{port}” ({server.url}) to Settings > Endpoints, with its")
        assert model_id in view.selected_label.text()

        view.samples_button.click()                                   # "Try the samples"
        assert not view.isVisibleTo(window) and window.run_panes.isVisibleTo(window)
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done()
                         and len(controller.documents) == 10, timeout=60, what="the samples")
        assert qp.question() == glue.samples.questions[0]
        assert {d.path.split("/")[-1] for d in controller.documents.values()} >= {"sales.csv", "webshop.log"}

        qp.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=90, what="the run to end")

    run_async(qloop, body(), timeout=150)
    outcome = controller.last_outcome
    assert outcome is not None and outcome.status == "finished", window.notifier.history
    assert outcome.answer.startswith("10 documents, ") and not outcome.answer.endswith(" 0 expired-certificate errors")
    assert server.requests_for("coder")[0].api_key in (None, "", "no-key")   # no real key sent
    assert controller.sessions.bar.state == "live"                     # a follow-up is offered


def test_guide_recent_menu_and_the_last_session(studio, qloop, qapp, tmp_path):
    window, controller = studio
    glue = controller.first_run
    controller.keys().set("openai", "sk-first-minute-0123456789")

    async def keys_checked():
        await wait_until(lambda: glue.started, what="the start")
        glue.refresh()
        await wait_until(lambda: glue.keys_task.done(), what="the keychain check")
    run_async(qloop, keys_checked())
    view = glue.view
    assert "openai (keychain)" in view.keys_label.text()
    assert view.model_button.isVisibleTo(window) and view.model_button.text() == "Use gpt-4o-mini"
    view.model_button.click()
    qp = window.question_panel
    assert qp.root_model() == qp.sub_model() == "gpt-4o-mini"
    assert qp.caps()["max_cost_usd"] == 1.0                      # a paid model never runs uncapped
    glue.view.close_button.click()
    assert not glue.view.isVisibleTo(window) and controller.settings.ui["welcome_seen"]
    glue.welcome_action.trigger()
    assert glue.view.isVisibleTo(window)
    glue.hide_welcome()

    guide = glue.open_guide()
    text = guide.text()
    assert "Depth" in text and "Iterations" in text and "Dollar cap" in text
    assert "reliable coder" in text and "cheaper" in text and "max tokens" in text
    guide.reject()

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha beta gamma\n")
    window.sources_pane.paths_added.emit([str(folder)])             # as a drop or Add folder does
    window.question_panel.set_question("What is in the notes?")
    controller.settings.remember_question("An older question?")

    async def read():
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), timeout=60,
                         what="reading")
    run_async(qloop, read(), timeout=90)
    glue.refresh_recent()
    entries = glue.recent_menu.entries()
    assert ("folder", str(folder)) in entries and ("question", "An older question?") in entries

    controller.save_state()                                          # as closing the window does
    saved = controller.settings.ui["last_session"]
    assert saved["roots"] == [str(folder)] and saved["question"] == "What is in the notes?"

    # The next start: the welcome stays closed, the sources and question come back.
    from app.gui import build_window
    second, second_controller = build_window(qapp)
    try:
        second.show()

        async def reopened():
            await wait_until(lambda: second_controller.first_run.started, what="the second start")
            await wait_until(lambda: len(second_controller.documents) == 1, timeout=60, what="re-reading")
        run_async(qloop, reopened(), timeout=90)
        assert not second_controller.first_run.view.isVisibleTo(second)
        assert second.question_panel.question() == "What is in the notes?"
        assert any("Re-opened your last session" in n.message for n in second.notifier.history)
    finally:
        qloop.run_until_complete(second_controller.shutdown(timeout=5))
        second.close()
        second.deleteLater()
