"""Replay: the bar steps, scrubs and plays; replay to k equals folding events[:k].

The run replayed is a recording of a real engine run (tests/support/record_runs.py,
`export`: depth 2 with a nested RLM, a syntax error, a retried turn, ~20 s of engine time).
Only the 5,000-event test keeps a generated stream: it is about volume, which no small
recording has."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QModelIndex

from core.runview import RunView, fold
from tests.support.event_streams import big_run
from tests.support.record_runs import recorded_run
from ui.call_tree_model import NODE_ID_ROLE, STATUS_ROLE, CallTreeModel
from ui.run_panes import RunPanes


def full_run():
    return recorded_run("export", "run-test")


def index_of(events, type_: str, call_id: str) -> int:
    return next(i for i, e in enumerate(events) if e.type == type_ and e.call_id == call_id)


@pytest.fixture
def panes(qtbot):
    widget = RunPanes()
    qtbot.addWidget(widget)
    widget.resize(1200, 800)
    widget.show()
    return widget


def shown_tree(model: CallTreeModel, parent: QModelIndex = QModelIndex()) -> list[tuple[str, str, int]]:
    out = []
    for r in range(model.rowCount(parent)):
        index = model.index(r, 0, parent)
        out.append((index.data(NODE_ID_ROLE), index.data(STATUS_ROLE), model.rowCount(index)))
        out.extend(shown_tree(model, index))
    return out


def folded_tree(view: RunView) -> list[tuple[str, str, int]]:
    def visit(node):
        yield (node.id, node.status, len(node.children))
        for child in node.children:
            yield from visit(child)
    return list(visit(view.root)) if view.root else []


def test_replay_to_k_equals_the_fold_of_the_first_k_events(panes):
    events = full_run()
    panes.load_replay(events)
    bar = panes.replay_bar
    assert bar.isVisible() and bar.position == len(events)
    assert shown_tree(panes.tree_model) == folded_tree(fold(events))
    nested = index_of(events, "SubCallStarted", "R.s3")         # the nested RLM starts here
    for k in (len(events) - 1, nested, nested + 1, 17, 0, len(events) // 2, len(events)):
        bar.seek(k)
        assert bar.position == k
        assert shown_tree(panes.tree_model) == folded_tree(fold(events[:k])), k
        assert panes.view.events_applied == k
    assert not panes.live


def test_replayed_run_looks_like_the_live_one(panes, qtbot):
    events = full_run()
    live = RunPanes()
    qtbot.addWidget(live)
    for e in events:
        live.apply(e)
    live.flush()
    panes.load_replay(events)
    assert shown_tree(panes.tree_model) == shown_tree(live.tree_model)
    assert panes.transcript.plain_text() == live.transcript.plain_text()
    assert panes.meter.cost.text() == live.meter.cost.text()


def test_step_buttons_and_slider(panes, qtbot):
    events = full_run()
    panes.load_replay(events, position=10)
    bar = panes.replay_bar
    moves = []
    bar.position_changed.connect(lambda k, n: moves.append((k, n)))
    bar.forward_button.click()
    bar.back_button.click()
    bar.back_button.click()
    assert moves == [(11, len(events)), (10, len(events)), (9, len(events))]
    assert bar.label.text() == f"9 / {len(events)}"
    bar.slider.setValue(50)                               # a drag is coalesced, then applied
    qtbot.waitUntil(lambda: bar.position == 50, timeout=2000)
    assert panes.view.events_applied == 50
    bar.seek(0)
    assert not bar.back_button.isEnabled() and panes.tree_model.rowCount() == 0


def test_play_runs_to_the_end_and_instant_jumps(panes, qtbot):
    events = full_run()                                   # ~20 s of recorded time, ~1.2 s at 16x
    panes.load_replay(events, position=0)
    bar = panes.replay_bar
    bar.set_speed(16)
    with qtbot.waitSignal(bar.playing_changed, timeout=1000):
        bar.play_button.click()
    assert bar.playing and bar.play_button.accessibleName() == "Pause"
    qtbot.waitUntil(lambda: bar.position == len(events), timeout=5000)
    qtbot.waitUntil(lambda: not bar.playing, timeout=1000)
    assert panes.view.status == "finished"
    bar.seek(5)
    bar.set_speed(None)
    bar.play()
    assert bar.position == len(events) and not bar.playing
    with pytest.raises(ValueError):
        bar.set_speed(3)


def test_selection_survives_scrubbing(panes):
    events = full_run()
    panes.load_replay(events)
    panes.tree.select_node("R.s2")
    panes.replay_bar.seek(index_of(events, "SubCallFinished", "R.s2") + 1)
    assert panes.tree.selected_id() == "R.s2" and panes.detail.node_id == "R.s2"
    assert panes.tree.isExpanded(panes.tree_model.index_for("R.t1.c1"))   # sub-calls of top cells show


def test_restyle_rebuilds_the_same_transcript(panes):
    panes.load_replay(full_run())
    before = panes.transcript.plain_text()
    panes.restyle()
    assert panes.transcript.plain_text() == before and panes.transcript.answer_card is not None


def test_live_reset_hides_the_replay_bar(panes):
    panes.load_replay(full_run())
    panes.reset()
    assert panes.replay_bar.isHidden() and panes.live


def test_open_and_scrub_a_5000_event_replay(panes, qapp):
    events = big_run(5000)
    t = time.perf_counter()
    panes.load_replay(events)
    qapp.processEvents()
    opened = time.perf_counter() - t
    t = time.perf_counter()
    panes.replay_bar.seek(2500)
    qapp.processEvents()
    back = time.perf_counter() - t
    print(f"\nopen a 5,000-event replay: {opened * 1000:.0f} ms; seek back to 2,500: {back * 1000:.0f} ms")
    assert shown_tree(panes.tree_model) == folded_tree(fold(events[:2500]))
