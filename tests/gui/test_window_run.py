"""End to end in the real window: drop a folder, run against the scripted
OpenAI-compatible server on 127.0.0.1, watch the panes, stop a run, open the
history, replay it (same tree as live), export it; a refused key is explained."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.gui.test_window_sources import drop_paths
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401

from tests.support.openai_server import Status

KEY = "sk-gui-test-0123456789"


def code(src: str) -> str:
    return f"Let me look.\n```repl\n{src}\n```"


def prepare(window, controller, server, tmp_path, qloop):
    """An endpoint 'lab' served by the scripted server, its key in the test keychain,
    two documents dropped in, the question typed."""
    from app.settings import Endpoint
    controller.settings.endpoints = [Endpoint("lab", server.url, ["root", "sub"], needs_key=True)]
    controller.settings.caps["cell_timeout_s"] = 30
    controller.keys().set("lab", KEY)
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "one.txt").write_text("apples: 3\n")
    (folder / "sub" / "two.md").write_text("# pears\npears: 4\n")

    async def read():
        drop_paths(window.sources_pane.drop_zone, [folder])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(),
                         timeout=60, what="reading")
    run_async(qloop, read(), timeout=90)
    qp = window.question_panel
    qp.set_models("lab/root", "lab/sub")
    qp.set_caps({"max_depth": 1, "max_cost_usd": 0, "max_iterations": 4})
    qp.set_question("Which files are there?")


def test_run_live_then_replay_and_export(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("sub", fn=lambda r: r.prompt.upper())
    server.script("root", replies=[code(
        "paths = sorted(d['path'] for d in documents)\nout = llm_query_batched(paths)\n"
        "print(out)\nFINAL(', '.join(out))")])
    prepare(window, controller, server, tmp_path, qloop)
    panes = window.run_panes

    async def body():
        window.question_panel.question_box.setFocus()
        QTest.keyClick(window.question_panel.question_box, Qt.Key.Key_Return,
                       Qt.KeyboardModifier.ControlModifier)                    # Ctrl+Enter
        await wait_until(lambda: controller.running, what="the run to start")
        assert not window.question_panel.run_button.isEnabled()
        assert window.question_panel.stop_button.isEnabled()
        await wait_until(lambda: not controller.running, timeout=90, what="the run to end")

    run_async(qloop, body(), timeout=120)
    outcome = controller.last_outcome
    assert outcome is not None and outcome.status == "finished", window.notifier.history
    assert outcome.answer == "ONE.TXT, SUB/TWO.MD"
    panes.flush()
    view = panes.view
    assert view.status == "finished"
    kinds = sorted(n.kind for n in view.nodes.values())
    assert kinds.count("llm") == 2 and "cell" in kinds and "turn" in kinds
    assert panes.tree_model.rowCount() > 0
    assert window.question_panel.run_button.isEnabled()
    assert "Finished" in window.question_panel.status_label.text()
    assert server.requests_for("root")[0].headers.get("Authorization") == f"Bearer {KEY}"
    live_nodes = {i: (n.kind, n.status) for i, n in view.nodes.items()}

    # The history has it, selected; replay shows the same tree as the live run.
    rows = {r.id: r for r in window.history_pane.model.rows()}
    assert outcome.run_id in rows and rows[outcome.run_id].status == "finished"
    assert window.history_pane.selected_id() == outcome.run_id
    window.history_pane.open_button.click()
    replayed = {i: (n.kind, n.status) for i, n in panes.view.nodes.items()}
    assert replayed == live_nodes
    assert panes.replay_bar.isVisibleTo(window)
    path = controller.history.export_run(outcome.run_id, "html", str(tmp_path / "run.html"))
    assert "ONE.TXT" in (tmp_path / "run.html").read_text(encoding="utf-8") and path

    # Re-run with the stored documents (the files may be gone) and a smaller cap.
    for p in (tmp_path / "docs").rglob("*.*"):
        p.unlink()
    server.script("root", replies=[code("FINAL(str(len(documents)))")])
    window.history_pane.rerun_button.click()
    assert controller.history.replaying is None and not panes.replay_bar.isVisibleTo(window)
    window.question_panel.set_caps({"max_iterations": 2})

    async def again():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the re-run to start")
        await wait_until(lambda: not controller.running, timeout=60, what="the re-run to end")

    run_async(qloop, again(), timeout=90)
    second = controller.last_outcome
    assert second.run_id != outcome.run_id and second.status == "finished" and second.answer == "2"
    stored = controller.history.store().get_run(second.run_id)
    assert stored["parent_run_id"] == outcome.run_id and stored["max_iterations"] == 2


def test_stop_keeps_the_partial_transcript(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("sub", fn=lambda r: "ok", latency_s=20)
    server.script("root", replies=[code("out = llm_query('slow one')\nFINAL(out)")])
    prepare(window, controller, server, tmp_path, qloop)

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: any(n.kind == "llm" for n in window.run_panes.view.nodes.values()),
                         timeout=60, what="the sub-call to start")
        window.stop_action.trigger()                                            # Esc
        await wait_until(lambda: not controller.running, timeout=30, what="the run to stop")

    run_async(qloop, body(), timeout=120)
    assert controller.last_outcome.status == "cancelled"
    window.run_panes.flush()
    assert any(n.kind == "turn" for n in window.run_panes.view.nodes.values())   # kept
    assert "Stopped" in window.notifier.history[-1].message or \
        any("Stopped" in n.message for n in window.notifier.history)


def test_refused_key_is_explained(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", replies=[Status(401, message="Incorrect API key provided")] * 5)
    prepare(window, controller, server, tmp_path, qloop)

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=60, what="the run to end")

    run_async(qloop, body(), timeout=90)
    errors = [n for n in window.notifier.history if n.level == "error"]
    assert errors, window.notifier.history
    assert "Settings > Keys" in errors[-1].advice
    assert window.banner.isVisibleTo(window) and window.banner.action_button.isVisibleTo(window)
