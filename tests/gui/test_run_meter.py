"""CostMeter: colour state against the cap, figures, elapsed clock."""

from __future__ import annotations

import time

import pytest

from core import events as ev
from core.runview import RunView
from tests.support.event_streams import Stream
from tests.support.record_runs import recorded_run
from ui.cost_meter import CostMeter, clock, level_for
from ui.run_panes import RunPanes


def budget(spent: float, cap: float | None = 1.0, in_flight: int = 0) -> ev.BudgetChanged:
    return ev.BudgetChanged(run_id="r", spent_usd=spent, reserved_usd=0.01, cap_usd=cap, input_tokens=12_345,
                            output_tokens=678, sub_calls=3, in_flight=in_flight)


@pytest.mark.parametrize("spent, level", [(0.5, "normal"), (0.85, "warning"), (1.0, "error"), (0.0, "normal")])
def test_meter_level_at_50_85_100_percent(qtbot, spent, level):
    meter = CostMeter()
    qtbot.addWidget(meter)
    view = RunView()
    view.apply_many(recorded_run("export", "r")[:1])        # a recorded engine run's start
    view.apply(budget(spent, in_flight=2))
    meter.refresh(view)
    assert meter.level == level and meter.property("level") == level
    assert meter.bar.value() == int(spent * 1000)
    assert meter.cost.text() == f"${spent:,.4f} / $1.00" if spent < 1 else meter.cost.text() == "$1.00 / $1.00"
    assert meter.tokens.text() == "12k in / 678 out"
    assert meter.in_flight.text() == "2 in flight"
    assert meter.bar.accessibleName() and meter.cost.accessibleName()


def test_level_thresholds():
    assert [level_for(f) for f in (None, 0.0, 0.79, 0.8, 0.99, 1.0, 1.5)] == \
        ["normal", "normal", "normal", "warning", "warning", "error", "error"]


def test_no_cap(qtbot):
    meter = CostMeter()
    qtbot.addWidget(meter)
    s = Stream()
    s.start(cap=None)
    view = RunView()
    view.apply_many(s.events)
    view.apply(budget(3.0, cap=None))
    meter.refresh(view)
    assert meter.level == "normal" and "no cap" in meter.cost.text()


def test_iteration_cells_and_elapsed(qtbot):
    events = recorded_run("export", "r")      # a real engine run: 2 turns, 4 cells, one a syntax error
    view = RunView()
    view.apply_many(events)
    meter = CostMeter()
    qtbot.addWidget(meter)
    meter.refresh(view)
    assert meter.iteration.text() == "iteration 2 of 4"
    assert meter.cells.text() == "4 cells · 25% syntax errors"
    assert meter.elapsed.text() == clock(events[-1].ts - events[0].ts)
    assert meter.status.text() == "finished"


def test_elapsed_ticks_while_live(qtbot):
    panes = RunPanes()
    qtbot.addWidget(panes)
    s = Stream()
    s.start()
    started = ev.from_dict({**s.events[0].to_dict(), "ts": time.time() - 65})   # began 65 s ago
    panes.reset()
    panes.apply(started)
    panes.flush()
    assert panes.meter.elapsed.text() in ("1:05", "1:06")
    assert panes._clock.isActive()                      # the clock ticks until the run ends
    panes.apply(ev.RunFinished(run_id="r", ts=time.time(), status="finished", answer="a", totals={}))
    panes.flush()
    assert not panes._clock.isActive()
