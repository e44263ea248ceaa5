"""The engine thread and the event bridge on their own (app/engine_thread.py), and
what a RunRequest refuses (app/run_service.py)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.support.gui_app import flush_qt, qloop, run_async, wait_until  # noqa: F401


@pytest.fixture
def owner(qapp):
    """A QObject on the GUI thread that owns what a test makes (deleted there after it)."""
    from PySide6.QtCore import QObject
    obj = QObject()
    yield obj
    obj.deleteLater()
    flush_qt(qapp)


@pytest.fixture
def bridges(qapp):
    """EventBridges made by a test, deleted (and Qt's queue emptied) before the next test."""
    from app.engine_thread import EventBridge
    made: list = []

    def make(consume):
        made.append(EventBridge(consume))
        return made[-1]
    yield make
    for bridge in made:
        bridge.deleteLater()
    flush_qt(qapp)


def test_events_from_another_thread_arrive_in_order_in_few_batches(qapp, qloop, bridges, owner):
    from app.engine_thread import EngineThread
    got: list[list[int]] = []
    threads: set[bool] = set()

    def consume(batch: list[int]) -> None:
        threads.add(threading.current_thread() is threading.main_thread())
        got.append(batch)
    bridge = bridges(consume)
    engine = EngineThread("test-engine", owner)

    async def emit_all() -> str:
        for i in range(5000):
            bridge.sink(i)
            if i % 500 == 0:
                await asyncio.sleep(0.005)
        return threading.current_thread().name

    async def body():
        name = await engine.run(emit_all())
        await wait_until(lambda: sum(map(len, got)) == 5000, what="every event")
        await engine.close()
        return name
    assert run_async(qloop, body()) == "test-engine"
    assert [i for batch in got for i in batch] == list(range(5000))     # in order, none lost or doubled
    assert threads == {True}                                            # consumed on the GUI thread only
    assert len(got) < 500                                               # coalesced, not one per event
    assert not engine.alive


def test_drain_takes_what_is_waiting_and_a_late_wake_up_finds_nothing(qapp, qloop, bridges):
    got: list[list[str]] = []
    bridge = bridges(got.append)
    bridge.sink("a")
    bridge.sink("b")
    bridge.drain()                                  # the end of a run: before the queued wake-up arrives
    assert got == [["a", "b"]]
    run_async(qloop, asyncio.sleep(0.1))            # the wake-up and the frame timer come and go
    assert got == [["a", "b"]]
    bridge.sink("c")
    run_async(qloop, wait_until(lambda: len(got) == 2, what="the next batch"))
    assert got[1] == ["c"]


def test_cancel_crosses_to_the_engine_loop_and_gui_callbacks_are_awaited(qapp, qloop, owner):
    from app.engine_thread import EngineThread
    engine = EngineThread("test-engine", owner)
    asked: list[str] = []

    async def ask_in_gui(what: str) -> bool:         # like the approval dialog: runs on the window's loop
        asked.append(threading.current_thread().name)
        await asyncio.sleep(0.01)
        return what == "yes"

    async def on_engine(crossed) -> tuple:
        answer = await crossed("yes")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            return answer, "cancelled on " + threading.current_thread().name
        return answer, "not cancelled"

    async def body():
        crossed = engine.on_gui_loop(ask_in_gui, asyncio.get_running_loop())
        waiting = asyncio.ensure_future(engine.run(on_engine(crossed)))
        await wait_until(lambda: asked, what="the GUI callback")
        await asyncio.sleep(0.05)
        task = next(t for t in asyncio.all_tasks(engine.loop))
        engine.call_soon(task.cancel)                 # what Stop does with the run's handle
        result = await waiting
        await engine.close()
        return result
    assert run_async(qloop, body()) == (True, "cancelled on test-engine")
    assert asked == ["MainThread"]


@pytest.mark.parametrize("fields, message", [
    (dict(kind="guess"), "unknown run kind"),
    (dict(kind="follow-up", parent_run_id="r1", question="q"), "live session"),
    (dict(kind="fork", parent_run_id="r1"), "turn to fork from"),
    (dict(kind="re-run", question="q"), "needs the run it comes from"),
    (dict(kind="ask", question="  "), "the question is empty"),
    (dict(kind="ask", question="q"), "no readable documents"),
])
def test_a_request_that_cannot_run_says_why(fields, message):
    from app.run_service import RunRequest
    with pytest.raises(ValueError, match=message):
        RunRequest(**fields)
