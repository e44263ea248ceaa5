"""Follow-up questions in the real window, against the scripted server:
the second run reuses a variable the first run built in its live REPL and is
stored as a linked run; when the REPL is gone (the run opened from History)
the window says so, and the follow-up starts fresh or is rebuilt by re-execution."""

from __future__ import annotations


from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401

def code(src: str) -> str:
    return f"Let me look.\n```repl\n{src}\n```"


def prepare(window, controller, server, tmp_path, qloop):
    from app.settings import Endpoint
    controller.first_run.hide_welcome()
    controller.settings.endpoints = [Endpoint("lab", server.url, ["root"])]
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha beta gamma")

    async def read():
        controller.add_paths([str(folder)])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), timeout=60,
                         what="reading")
    run_async(qloop, read(), timeout=90)
    qp = window.question_panel
    qp.set_models("lab/root", "lab/root")
    qp.set_caps({"max_depth": 1, "max_cost_usd": 0, "max_iterations": 4})


def run_and_wait(qloop, controller, start) -> None:
    async def body():
        start()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=60, what="the run to end")
    run_async(qloop, body(), timeout=90)


def test_follow_up_reuses_the_variables_and_is_linked(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", replies=[
        code("words = context.split()\nFINAL(str(len(words)))"),
        code("FINAL(words[-1])"),                 # `words` exists only in the first run's REPL
    ])
    prepare(window, controller, server, tmp_path, qloop)
    qp, bar = window.question_panel, controller.sessions.bar
    assert bar.state == "hidden"
    qp.set_question("How many words?")
    run_and_wait(qloop, controller, qp.run_button.click)
    first = controller.last_outcome
    assert first.status == "finished" and first.answer == "6"   # "=== a.txt ===" + 3 words
    assert bar.state == "live" and bar.isVisibleTo(window) and bar.button.isEnabled()
    repl = controller.sessions.session.repl
    assert repl.alive                                           # kept while the window is open

    assert bar.button.isEnabled()
    bar.button.click()                                          # same question: refused, said why
    assert not controller.running and "Type the follow-up question" in window.notifier.last.message

    qp.set_question("And the last one?")
    run_and_wait(qloop, controller, bar.button.click)
    second = controller.last_outcome
    assert second.status == "finished" and second.answer == "gamma", window.notifier.history
    stored = controller.history.store().get_run(second.run_id)
    assert stored["parent_run_id"] == first.run_id
    sent = server.requests_for("root")[1].messages
    assert sent[-1]["content"].endswith("Follow-up question: And the last one?")
    assert any(m["role"] == "assistant" and "words = context.split()" in m["content"] for m in sent)
    assert controller.sessions.session.repl is repl and repl.alive      # the same REPL goes on
    assert controller.parent_run_id is None                             # only that run was linked
    transcript = window.run_panes.transcript
    window.run_panes.flush()
    assert "**Question 1**" in transcript.earlier_text() and "How many words?" in transcript.earlier_text()
    controller.history.open_run(first.run_id)                           # a replay, then Back to live
    assert transcript.earlier_text() == ""
    window.leave_replay_requested.emit()
    window.run_panes.flush()
    assert "**Question 1**" in transcript.earlier_text(), "Back to live lost the follow-up's header"

    # New sources close the kept REPL, and the bar says so.
    extra = tmp_path / "more.txt"
    extra.write_text("delta")

    async def add():
        controller.add_paths([str(extra)])
        await wait_until(lambda: not repl.alive, timeout=20, what="the kept REPL to close")
    run_async(qloop, add(), timeout=60)
    assert bar.state == "gone" and "sources changed" in bar.text()

    # Plain Run starts over: no session is passed, nothing is linked.
    server.script("root", replies=[code("FINAL(str('words' in globals()))")])
    qp.set_question("Fresh?")
    run_and_wait(qloop, controller, qp.run_button.click)
    assert controller.last_outcome.answer == "False"
    assert controller.history.store().get_run(controller.last_outcome.run_id)["parent_run_id"] is None


def test_worker_gone_start_fresh_or_rebuild(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", replies=[code("words = context.split()\nFINAL(str(len(words)))")])
    prepare(window, controller, server, tmp_path, qloop)
    qp, bar, sessions = window.question_panel, controller.sessions.bar, controller.sessions
    qp.set_question("How many words?")
    run_and_wait(qloop, controller, qp.run_button.click)
    first = controller.last_outcome
    assert first.status == "finished"
    first_repl = controller.sessions.session.repl

    # Replayed while its REPL still runs: the follow-up can use it.
    window.history_pane.open_requested.emit(first.run_id)
    assert bar.state == "live"
    window.leave_replay_requested.emit()

    # A fresh run closes that REPL.
    server.script("root", replies=[code("FINAL('other')")])
    qp.set_question("Something else?")
    run_and_wait(qloop, controller, qp.run_button.click)
    run_async(qloop, wait_until(lambda: not first_repl.alive, what="the first REPL to close"))

    # Opened from History: the REPL that run used is gone, and the bar says so.
    window.history_pane.open_requested.emit(first.run_id)
    assert controller.history.replaying == first.run_id
    assert bar.state == "gone" and "opened from History" in bar.text()
    qp.set_question("And the last one?")
    assert sessions.ask_follow_up() == "asked"
    box = sessions.gone_dialog
    assert box is not None and "is gone" in box.text()
    labels = {b.text(): b for b in box.buttons()}
    assert "Start fresh" in labels

    # Start fresh: the earlier question and answer are written into the question.
    # (a number: the question now carries "How many words?", and the answer-kind check wants one)
    server.script("root", replies=[code("FINAL(str(int('words' in globals())))")])
    run_and_wait(qloop, controller, labels["Start fresh"].click)
    fresh = controller.last_outcome
    assert fresh.answer == "0"                                   # an empty REPL, as the dialog said
    asked = server.requests_for("root")[-1].messages[-1]["content"]
    assert "Earlier question about these documents: How many words?" in asked
    assert "Earlier answer: 6" in asked and "Follow-up question: And the last one?" in asked
    assert controller.history.store().get_run(fresh.run_id)["parent_run_id"] == first.run_id

    # Rebuild by re-execution (where this build has it): the variable is back.
    from core.follow_up import rebuild_available
    if not rebuild_available():
        assert "Rebuild and ask" not in labels
        return
    assert "Rebuild and ask" in labels
    window.history_pane.open_requested.emit(first.run_id)
    qp.set_question("And the last one?")
    assert sessions.ask_follow_up() == "asked"
    rebuild = next(b for b in sessions.gone_dialog.buttons() if b.text() == "Rebuild and ask")
    server.script("root", replies=[code("FINAL(words[-1])")])
    root_calls = len(server.requests_for("root"))
    run_and_wait(qloop, controller, rebuild.click)
    rebuilt = controller.last_outcome
    assert rebuilt.status == "finished" and rebuilt.answer == "gamma", window.notifier.history
    assert len(server.requests_for("root")) == root_calls + 1    # the rebuild itself called no model
    assert controller.history.store().get_run(rebuilt.run_id)["parent_run_id"] == first.run_id
    assert any("Rebuilt the REPL" in n.message for n in window.notifier.history)


def test_the_earlier_answer_keeps_its_citations_as_links(studio, qloop, server, tmp_path):
    """A follow-up shows the earlier answer above its turns with its `[doc:…]` citations as
    links (never the raw brackets) that open the cited passage, and Back to live from a
    replay brings that header back with its links."""
    from urllib.parse import unquote

    from PySide6.QtWidgets import QLabel

    from tests.support.trust_gui import hrefs
    window, controller = studio
    prepare(window, controller, server, tmp_path, qloop)
    path = next(iter(controller.documents.values())).path
    server.script("root", replies=[code(f"FINAL('The last word is gamma [doc:{path}:line 1].')"),
                                   code("FINAL('alpha')")])
    qp = window.question_panel
    qp.set_question("What is the last word?")
    run_and_wait(qloop, controller, qp.run_button.click)
    first = controller.last_outcome
    assert first.status == "finished" and f"[doc:{path}:line 1]" in first.answer
    qp.set_question("And the first one?")
    run_and_wait(qloop, controller, controller.sessions.bar.button.click)
    assert controller.last_outcome.answer == "alpha", window.notifier.history
    window.run_panes.flush()
    transcript = window.run_panes.transcript

    def shown_as_links() -> QLabel:
        earlier = transcript.widget().findChild(QLabel, "earlierQuestions")   # the shown column's
        assert earlier.isVisibleTo(window) and "What is the last word?" in transcript.earlier_text()
        assert [unquote(h) for h in hrefs(earlier)] == [f"doc:{path}:line 1"], earlier.text()
        assert "[doc:" not in earlier.text()
        return earlier
    earlier = shown_as_links()
    earlier.linkActivated.emit(hrefs(earlier)[0])             # a click on it: the passage opens
    viewer = controller.trust.viewer
    assert viewer is not None and viewer.isVisible() and "gamma" in viewer.selected_text()
    viewer.close()
    controller.history.open_run(first.run_id)                 # a replay of the first run
    assert transcript.earlier_text() == ""
    window.leave_replay_requested.emit()                      # Back to live
    window.run_panes.flush()
    shown_as_links()
