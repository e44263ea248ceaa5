"""The transcript ends on the answer card: after every fresh run, a follow-up and a
replay, the card's top is in view, and stays there while the layout settles, until
the user scrolls. An answer taller than the pane is the hard case: scrolling to the
bottom (what following the stream does) puts its top out of view."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QAbstractSlider

from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401

LONG_ANSWER = ("FINAL(\"\"\"## Web shop outage, 14 August 2024\n\n**Card payments failed from 09:42 to 12:52**"
               " [doc:one.txt:line 1].\n\n| what | value |\n|---|---|\n| first failure | 09:42 |\n\n"
               + "".join(f"- point {i} of the answer, long enough to wrap in the transcript pane\n"
                         for i in range(30)) + "\"\"\")")
TURN_1 = code("for i in range(40):\n    print('line', i)\n"
              "out = llm_query_batched(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'])\nprint(out)")


def answer_top(transcript) -> int:
    card = transcript.answer_card
    return card.mapTo(transcript.viewport(), card.rect().topLeft()).y()


async def run_to_end(window, controller, start) -> None:
    start()
    await wait_until(lambda: controller.running, what="the run to start")
    await wait_until(lambda: not controller.running, timeout=60, what="the run to end")
    await asyncio.sleep(0.4)                 # the layout settles: late heights, the range grows


def test_every_run_ends_with_the_answer_card_in_view(studio, qloop, qapp, server, tmp_path):
    window, controller = studio
    controller.first_run.hide_welcome()
    server.script("sub", fn=lambda r: "yes: " + r.prompt * 3)
    server.script("root", replies=[TURN_1, code(LONG_ANSWER)] * 6)
    prepare(window, controller, server, tmp_path, qloop)
    window.resize(1366, 768)
    transcript = window.run_panes.transcript
    tops = []
    for i in range(5):                                   # fresh runs
        window.question_panel.set_question(f"When did card payments fail? ({i})")
        run_async(qloop, run_to_end(window, controller, window.question_panel.run_button.click), 90)
        assert transcript.answer_card.height() > transcript.viewport().height()      # the hard case
        tops.append(answer_top(transcript))
    view_h = transcript.viewport().height()
    assert all(0 <= top < view_h // 3 for top in tops), (tops, view_h)

    # A follow-up in the live REPL ends on its answer too.
    window.question_panel.set_question("And the cause?")
    run_async(qloop, run_to_end(window, controller, controller.sessions.ask_follow_up), 90)
    assert controller.last_outcome.status == "finished"
    assert 0 <= answer_top(transcript) < view_h // 3, answer_top(transcript)

    # The user scrolls away: the view stays where they put it.
    bar = transcript.verticalScrollBar()
    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMinimum)
    transcript.answer_card.adjustSize()
    qapp.processEvents()
    assert bar.value() == 0

    # A replay ends on the answer.
    async def replay():
        controller.history.open_run(controller.last_outcome.run_id)
        await asyncio.sleep(0.4)
    run_async(qloop, replay())
    assert 0 <= answer_top(transcript) < view_h // 3, answer_top(transcript)


def test_a_fork_ends_with_its_answer_card_in_view(studio, qloop, qapp, openai_server):
    """A fork (continued live from turn 2 of a stored run) ends on its answer too."""
    from core.store import RunStore
    from tests.support.trust_gui import setup_lab
    from tests.support.trust_runs import stored_run
    window, controller = studio
    controller.first_run.hide_welcome()
    window.resize(1366, 768)
    setup_lab(window, controller, openai_server, "What was Q3 revenue?")
    openai_server.script("root", replies=[code("lines = context.splitlines()\nprint(len(lines), 'lines')"),
                                          TURN_1, code("FINAL('done')")])
    openai_server.script("sub", fn=lambda r: "yes: " + r.prompt * 3)
    with RunStore.open() as store:
        parent = run_async(qloop, stored_run(openai_server, store))
    assert parent.status == "finished"
    actions = controller.trust.actions
    dialog = actions.fork_dialog_for(parent.run_id, 2, show=False)
    openai_server.script("root", replies=[TURN_1, code(LONG_ANSWER)])

    async def fork():
        actions.start_fork(parent.run_id, dialog.values(), dialog.original_models)
        await wait_until(lambda: controller.running, what="the fork to start")
        await wait_until(lambda: not controller.running, timeout=90, what="the fork to end")
        await asyncio.sleep(0.4)
    run_async(qloop, fork(), timeout=120)
    assert controller.last_outcome.status == "finished", window.notifier.history
    transcript = window.run_panes.transcript
    assert transcript.answer_card.height() > transcript.viewport().height()
    assert 0 <= answer_top(transcript) < transcript.viewport().height() // 3, answer_top(transcript)
