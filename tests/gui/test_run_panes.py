"""RunPanes with real widgets offscreen: transcript, tree + detail, signals, big runs."""

from __future__ import annotations

import time

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSplitter

from core import events as ev
from tests.support.event_streams import Stream, big_run
from tests.support.record_runs import PANES_ANSWER, recorded_run
from ui.call_tree_model import NODE_ID_ROLE
from ui.run_panes import RunPanes
from ui.transcript_view import OUTPUT_CHARS, AnswerCard, TurnCard


def full_run():
    """A real engine run with every shape the panes show (tests/support/record_runs.py "panes").
    Hand-typed events (Stream, big_run) stay only for a failed run's card and 5,000 events."""
    return recorded_run("panes", "run-test")


@pytest.fixture
def panes(qtbot):
    widget = RunPanes()
    qtbot.addWidget(widget)
    widget.resize(1200, 800)
    widget.show()
    return widget


def test_streamed_text_shows_before_the_reply_then_markdown(panes, qtbot):
    events = full_run()
    cut = next(i for i, e in enumerate(events) if isinstance(e, ev.RootTokens) and e.call_id == "R.t2") + 6
    for e in events[:cut]:
        panes.apply(e)
    streamed = "".join(e.delta for e in events[:cut] if isinstance(e, ev.RootTokens) and e.call_id == "R.t2")
    qtbot.waitUntil(lambda: streamed in panes.transcript.plain_text(), timeout=2000)  # the ~30 Hz flush
    card = panes.transcript.card("R.t2")
    assert isinstance(card, TurnCard) and not card.replied
    assert "streaming" in card.header.text()
    for e in events[cut:]:
        panes.apply(e)
    panes.flush()
    assert card.replied and "```repl" not in card.prose.property("markdown")   # code shows as cells, not prose
    assert card.prose.property("markdown").startswith("The context is large")
    assert "The context is large" in card.prose.text()
    reply = next(e.text for e in events if isinstance(e, ev.RootReplied) and e.call_id == "R.t2")
    assert card.blocks[0].code_text in reply


def test_cells_errors_and_expandable_output(panes):
    panes.apply_many(full_run())
    t1, t2, t3 = (panes.transcript.card(f"R.t{n}") for n in (1, 2, 3))
    assert [b.error_kind for b in t1.blocks] == [None, "syntax"]
    assert t1.blocks[1].error_text.startswith("Syntax error")
    assert t3.blocks[1].error_kind == "fault" and t3.blocks[1].error_text.startswith("Timeout")
    assert "<span" in t1.blocks[0].code.text()                        # highlighted
    long = t2.blocks[0]
    assert len(long.shown_output) <= OUTPUT_CHARS and not long.expand.isHidden()
    assert "5 sub-calls" in long.calls.text() and "1 refused" in long.calls.text()
    long.expand.click()
    assert long.expanded and long.shown_output == long.output_text.rstrip() == long.output.text().replace('\u200b', '') and len(long.output_text) > 5000
    long.expand.click()
    assert len(long.shown_output) <= OUTPUT_CHARS


def test_final_card_copy_and_export(panes, qtbot):
    panes.apply_many(full_run())
    card = panes.transcript.answer_card
    assert isinstance(card, AnswerCard) and card.answer == PANES_ANSWER
    assert card.title.text() == "Answer"
    assert PANES_ANSWER in panes.transcript.plain_text()
    assert "6 cells" in card.figures.text() and "17% syntax errors" in card.figures.text()
    with qtbot.waitSignal(panes.answer_copied, timeout=1000):
        card.copy_button.click()
    assert QGuiApplication.clipboard().text() == PANES_ANSWER
    with qtbot.waitSignal(panes.export_requested, timeout=1000):
        card.export_button.click()
    kinds = [type(w).__name__ for w in panes.transcript._items]
    assert kinds == ["WrapLabel"] + ["TurnCard"] * 4 + ["AnswerCard"]   # the notice sits in order (first here)


def test_failed_run_shows_the_error(panes):
    s = Stream()
    s.start()
    s.turn("R", 1, "Looking.")
    s.add(ev.RunFailed, "R", status="failed", error="The model is unreachable: check the URL.", answer=None,
          totals={})
    panes.apply_many(s.events)
    card = panes.transcript.answer_card
    assert card.title.text() == "Run failed" and "unreachable" in card.error.text()
    assert not card.copy_button.isEnabled()


def test_selecting_a_node_shows_its_prompt_and_response(panes, qtbot):
    panes.apply_many(full_run())
    with qtbot.waitSignal(panes.node_selected, timeout=1000) as blocker:
        assert panes.tree.select_node("R.s2")
    assert blocker.args == ["R.s2"]
    texts = panes.detail.texts()
    assert list(texts) == ["Prompt", "Response", "Error"]
    assert texts["Prompt"].startswith("List the risks in: chunk 2") and "429" in texts["Error"]
    panes.tree.select_node("R.t1.c1")
    assert list(panes.detail.texts()) == ["Code", "Output"]
    panes.detail.copy_current()
    assert QGuiApplication.clipboard().text() == panes.view.cells["R.t1.c1"].code


def test_selected_call_follows_while_in_flight(panes):
    events = full_run()
    started = next(i for i, e in enumerate(events) if isinstance(e, ev.SubCallStarted))
    panes.apply_many(events[:started + 1])
    panes.tree.select_node("R.s1")
    assert panes.detail.texts()["Response"] == ""
    panes.apply_many(events[started + 1:])
    assert panes.detail.texts()["Response"] == "Supply delays in Q3."


def test_selected_turn_follows_its_stream(panes):
    events = full_run()
    cut = next(i for i, e in enumerate(events) if isinstance(e, ev.RootTokens) and e.call_id == "R.t2") + 3
    panes.apply_many(events[:cut])
    panes.tree.select_node("R.t2")
    first = panes.detail.texts()["Reply (streaming)"]
    panes.apply_many(events[cut:cut + 2])
    assert panes.detail.texts()["Reply (streaming)"].startswith(first)
    assert len(panes.detail.texts()["Reply (streaming)"]) > len(first)


def test_citation_links_are_forwarded(panes, qtbot):
    panes.apply_many(full_run())
    with qtbot.waitSignal(panes.citation_clicked, timeout=1000) as blocker:
        panes.transcript.card("R.t1").prose.linkActivated.emit("doc:a.txt:p3")
    assert blocker.args == ["doc:a.txt:p3"]


def test_splitters_save_and_restore(panes):
    splitters = panes.splitters()
    assert all(isinstance(s, QSplitter) for s in splitters)
    assert [s.objectName() for s in splitters] == ["runMainSplitter", "runSideSplitter"]
    main = splitters[0]
    main.setSizes([300, 900])
    state = main.saveState()
    main.setSizes([900, 300])
    assert main.restoreState(state)
    assert main.sizes()[0] < main.sizes()[1]


def test_reset_starts_over(panes):
    panes.apply_many(recorded_run("export", "r"))         # a real engine run
    panes.reset()
    assert panes.view.status == "idle" and panes.tree_model.rowCount() == 0
    assert panes.transcript.item_count() == 0 and panes.detail.node_id is None


def test_5000_events_stay_responsive(panes, qapp):
    events = big_run(5000)
    longest_apply = longest_flush = 0.0
    started = time.perf_counter()
    for i, event in enumerate(events):
        t = time.perf_counter()
        panes.apply(event)
        longest_apply = max(longest_apply, time.perf_counter() - t)
        if i % 50 == 49:                      # a ~30 Hz flush at 1,500 events/s (the bench does 500/s)
            t = time.perf_counter()
            panes.flush()
            qapp.processEvents()
            longest_flush = max(longest_flush, time.perf_counter() - t)
    panes.flush()
    total = time.perf_counter() - started
    print(f"\n5,000 events live: {total * 1000:.0f} ms; longest apply {longest_apply * 1000:.2f} ms;"
          f" longest flush+paint {longest_flush * 1000:.1f} ms")
    view = panes.view
    assert view.status == "finished" and view.events_applied == 5000
    assert panes.transcript.item_count() == len(view.timeline)
    root = panes.tree_model.index(0, 0)
    assert panes.tree_model.rowCount(root) == view.figures.iterations
    assert panes.meter.cells.text().startswith(f"{view.figures.cells} cells")
    last = panes.tree_model.index(panes.tree_model.rowCount(root) - 1, 0, root)
    assert last.data(NODE_ID_ROLE) == f"R.t{view.figures.iterations}"


def test_signal_emits_keep_the_bool_refcount(panes):
    """PySide6-Essentials 6.12.0 on Python 3.11 drops a reference to True per emit and aborts
    after ~1,000 emits; we pin 6.11.3. This guards against an upgrade that brings it back."""
    import sys
    panes.apply_many(recorded_run("export", "r"))
    before = sys.getrefcount(True)
    for _ in range(3000):
        panes.node_selected.emit("R")
        panes.tree_model.dataChanged.emit(panes.tree_model.index(0, 0), panes.tree_model.index(0, 0))
    assert sys.getrefcount(True) >= before - 50
