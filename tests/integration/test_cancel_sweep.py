"""Stop at any moment: a run cancelled at 37 points over its whole life leaves nothing.

Each point runs a real run (RunService -> QuestionRun -> Engine, a real sandboxed REPL
worker, a real SQLite store, the scripted model server on 127.0.0.1) and presses Stop
(RunHandle.cancel, what the window's Stop and the CLI's Ctrl+C call) at one moment:
during the worker's start and handshake, the context's write and load, a cell, a
batch of sub-calls, a nested RLM's start, a cell-timeout restart, a fork's
preparation, the run's end; some press Stop twice (the second during the cleanup).
The moment is reached by a tripwire on the real method (it presses Stop, then lets
the method run); nothing is mocked. After each point:

- no worker process of this test process is left (found by command line in /proc),
- no `rlm-repl-*` directory is left,
- the run is stored as cancelled with exactly the events it emitted,
- no reservation is left in its budget,
- and the next run in the same process works.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools

import pytest

from app.run_service import RunHandle, RunRequest, RunService
from core.config import Price
from core.repl import client as repl_client
from core.repl.connection import WorkerConnection
from core.store import RunStore
from tests.support import leaks
from tests.support.trust_runs import DOCS, ROOT, SUB, code, config

PRICES = {ROOT: Price(1.0, 2.0), SUB: Price(0.5, 1.0)}
BIG = [dataclasses.replace(DOCS[0], path="big.txt", text="line of text\n" * 400_000, chars=13 * 400_000,
                           sha256="sha-big")]

PLAIN = [code("import time\ntime.sleep(0.4)\nprint(len(context))"), code("FINAL('done')")]
BATCH = [code("r = llm_query_batched(['p%d' % i for i in range(6)])\nprint(r)"), code("FINAL('done')")]
NESTED = [code("print(rlm_query('inner question', context[:200]))"), code("FINAL('inner')"),
          code("FINAL('done')")]
STUCK = [code("import time\nwhile True:\n    try:\n        time.sleep(5)\n    except KeyboardInterrupt:\n"
              "        pass"), code("FINAL('done')")]


class Trips:
    """Presses Stop on `handle` when a tripwire fires (after `delay` s, on the loop)."""

    def __init__(self) -> None:
        self.handle: RunHandle | None = None
        self.fired: list[str] = []

    def stop(self, what: str, delay: float) -> None:
        handle = self.handle
        assert handle is not None
        self.fired.append(what)
        loop = asyncio.get_running_loop()
        if delay:
            loop.call_later(delay, handle.cancel)
        else:
            handle.cancel()

    def on_method(self, monkeypatch, owner, name: str, *, nth: int = 1, delay: float = 0.0,
                  classmethod_: bool = False) -> None:
        original = getattr(owner, name)
        calls = [0]
        trips = self

        async def wrapped(*args, **kwargs):
            calls[0] += 1
            if calls[0] == nth:
                trips.stop(f"{name}#{nth}", delay)
            return await original(*args, **kwargs)

        if classmethod_:
            monkeypatch.setattr(owner, name, staticmethod(functools.wraps(original)(wrapped)))
        else:
            monkeypatch.setattr(owner, name, functools.wraps(original)(wrapped))

    def on_thread_call(self, monkeypatch, module, name: str, *, delay: float = 0.0) -> None:
        """A function the client runs in a thread (write_context): Stop as it starts."""
        original = getattr(module, name)
        loop = asyncio.get_event_loop()
        trips = self

        def wrapped(*args, **kwargs):
            loop.call_soon_threadsafe(trips.stop, name, delay)
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapped)

    def on_reply(self, monkeypatch, type_: str, *, nth: int = 1) -> None:
        """Stop in the very loop pass in which the worker's reply of `type_` is delivered."""
        original = WorkerConnection._dispatch
        seen = [0]
        trips = self

        def wrapped(conn, msg):
            original(conn, msg)
            if msg.get("type") == type_:
                seen[0] += 1
                if seen[0] == nth:
                    trips.stop(f"{type_}#{nth}", 0.0)

        monkeypatch.setattr(WorkerConnection, "_dispatch", wrapped)

    def on_event(self, sink_events: list, type_: str, *, nth: int = 1, delay: float = 0.0, **match):
        def sink(event):
            sink_events.append(event)
            if event.type != type_ or any(getattr(event, k, None) != v for k, v in match.items()):
                return
            seen = getattr(sink, "seen", 0) + 1
            sink.seen = seen
            if seen == nth:
                self.stop(f"{type_}#{nth}", delay)
        return sink


# (id, script, config overrides, documents, how Stop is pressed)
POINTS = [
    ("spawn-at-once", PLAIN, {}, None, ("method", "spawn", 1, 0.0)),
    ("spawn-5ms", PLAIN, {}, None, ("method", "spawn", 1, 0.005)),
    ("spawn-40ms", PLAIN, {}, None, ("method", "spawn", 1, 0.04)),
    ("handshake", PLAIN, {}, None, ("method", "request", 1, 0.0)),
    ("handshake-20ms", PLAIN, {}, None, ("method", "request", 1, 0.02)),
    ("context-write", PLAIN, {}, BIG, ("thread", "write_context", 0, 0.0)),
    ("context-write-30ms", PLAIN, {}, BIG, ("thread", "write_context", 0, 0.03)),
    ("context-load", PLAIN, {}, BIG, ("method", "request", 2, 0.0)),
    ("context-load-20ms", PLAIN, {}, BIG, ("method", "request", 2, 0.02)),
    ("root-call", PLAIN, {}, None, ("event", "RootTurnStarted", 1, 0.0)),
    # The context loads beside the root's first call (ReplClient.begin_loading): Stop then.
    ("root-call-while-loading", PLAIN, {}, BIG, ("event", "RootTurnStarted", 1, 0.0)),
    ("root-call-while-loading-5ms", PLAIN, {}, BIG, ("event", "RootTurnStarted", 1, 0.005)),
    ("cell-waiting-for-the-load", PLAIN, {}, BIG, ("event", "CellStarted", 1, 0.0)),
    ("root-stream", PLAIN, {}, None, ("event", "RootTokens", 1, 0.0)),
    ("cell-start", PLAIN, {}, None, ("event", "CellStarted", 1, 0.0)),
    ("cell-running", PLAIN, {}, None, ("event", "CellStarted", 1, 0.15)),
    ("batch-first", BATCH, {}, None, ("event", "SubCallStarted", 1, 0.0)),
    ("batch-third", BATCH, {}, None, ("event", "SubCallStarted", 3, 0.0)),
    ("batch-in-flight", BATCH, {}, None, ("event", "SubCallStarted", 6, 0.05)),
    ("nested-start", NESTED, {"max_depth": 2}, None, ("event", "SubCallStarted", 1, 0.0)),
    ("nested-spawn", NESTED, {"max_depth": 2}, None, ("method", "spawn", 2, 0.0)),
    ("nested-spawn-20ms", NESTED, {"max_depth": 2}, None, ("method", "spawn", 2, 0.02)),
    ("nested-handshake", NESTED, {"max_depth": 2}, None, ("method", "request", 3, 0.0)),
    ("nested-load", NESTED, {"max_depth": 2}, None, ("method", "request", 4, 0.0)),
    ("timeout-restart", STUCK, {"cell_timeout_s": 0.3}, None, ("method", "spawn", 2, 0.0)),
    ("timeout-restart-20ms", STUCK, {"cell_timeout_s": 0.3}, None, ("method", "spawn", 2, 0.02)),
    ("handshake-reply", PLAIN, {}, None, ("reply", "hello_ok", 1, 0.0)),
    ("load-reply", PLAIN, {}, BIG, ("reply", "context_loaded", 1, 0.0)),
    ("cell-result", PLAIN, {}, None, ("reply", "exec_result", 1, 0.0)),
    ("run-end", PLAIN, {}, None, ("event", "RootReplied", 2, 0.0)),
    ("closing", PLAIN, {}, None, ("method", "close", 1, 0.0)),
]


def _script(server, script):
    server.script("root", replies=list(script))
    server.script("sub", fn=lambda r: f"answer to {r.prompt}", latency_s=0.2)


def _arm(trips, monkeypatch, events, how):
    kind, name, nth, delay = how
    if kind == "method" and name == "spawn":
        trips.on_method(monkeypatch, WorkerConnection, "spawn", nth=nth, delay=delay, classmethod_=True)
    elif kind == "method" and name == "request":
        trips.on_method(monkeypatch, WorkerConnection, "request", nth=nth, delay=delay)
    elif kind == "method" and name == "close":
        trips.on_method(monkeypatch, repl_client.ReplClient, "close", nth=nth, delay=delay)
    elif kind == "reply":
        trips.on_reply(monkeypatch, name, nth=nth)
    elif kind == "thread":
        trips.on_thread_call(monkeypatch, repl_client, name, delay=delay)
    elif kind == "event":
        return trips.on_event(events, name, nth=nth, delay=delay)
    return events.append


async def _check_after(store, outcome, events, handle, *, allow_finished=False):
    left_dirs = leaks.repl_dirs()                 # at once: close() removes it before the run returns
    left_procs = await asyncio.to_thread(leaks.settle, 2.0)
    leaked = leaks.clean_up()
    assert not left_procs and not left_dirs, f"left behind: processes {left_procs}, directories {left_dirs}"
    del leaked
    allowed = {"cancelled", "finished"} if allow_finished else {"cancelled"}
    assert outcome.status in allowed, (outcome.status, outcome.error)
    assert outcome.store_error is None
    run = store.get_run(outcome.run_id)
    assert run is not None and run["status"] == outcome.status
    emitted = [e for e in events if e.run_id == outcome.run_id]
    stored = list(store.event_dicts(outcome.run_id))
    assert len(stored) == len([e for e in emitted if e.type != "RootTokens"]) + \
        len({e.call_id for e in emitted if e.type == "RootTokens"}), "stored events differ from emitted ones"
    assert [e["seq"] for e in stored if e["type"] != "RootTokens"] == \
        [e.seq for e in emitted if e.type != "RootTokens"]
    budget = handle.run._engine.budget
    assert budget.reserved_usd == pytest.approx(0.0, abs=1e-12) and budget.in_flight == 0


async def _next_run_works(server, store):
    server.script("root", replies=[code("FINAL('next ' + str(len(context)))")])
    outcome = await RunService(store=store).run(RunRequest.ask("q", DOCS, config(server)))
    assert outcome.status == "finished" and outcome.answer.startswith("next ")
    assert not await asyncio.to_thread(leaks.settle, 2.0) and not leaks.repl_dirs()


@pytest.fixture
def store():
    leaks.clean_up()
    with RunStore.open() as s:
        yield s


@pytest.mark.parametrize("name,script,overrides,docs,how", POINTS, ids=[p[0] for p in POINTS])
async def test_stop_at_any_point_leaves_nothing(openai_server, store, monkeypatch, name, script, overrides,
                                                docs, how):
    _script(openai_server, script)
    trips = Trips()
    events: list = []
    sink = _arm(trips, monkeypatch, events, how)
    cfg = config(openai_server, prices=PRICES, max_cost_usd=5.0, **overrides)
    handle = trips.handle = RunHandle()
    outcome = await asyncio.wait_for(
        RunService(store=store).run(RunRequest.ask("q", docs or DOCS, cfg), [sink], handle), 60)
    assert trips.fired, "the tripwire never fired"
    await _check_after(store, outcome, events, handle, allow_finished=name in ("run-end", "closing"))
    monkeypatch.undo()
    await _next_run_works(openai_server, store)


@pytest.mark.parametrize("second", ["cleanup-close", "cleanup-cancel-all"])
async def test_a_second_stop_during_the_cleanup_still_closes_everything(openai_server, store, monkeypatch,
                                                                        second):
    """Stop in a cell, then Stop again while the engine cleans up (closing the REPL, or
    cancelling the cell's sub-calls): the REPL is still closed, the run still stored."""
    _script(openai_server, BATCH)
    trips = Trips()
    events: list = []
    sink = trips.on_event(events, "SubCallStarted", nth=6, delay=0.02)
    if second == "cleanup-close":
        trips.on_method(monkeypatch, repl_client.ReplClient, "close", nth=1, delay=0.0)
    else:
        from core.engine import subcalls
        trips.on_method(monkeypatch, subcalls.SubCaller, "cancel_all", nth=1, delay=0.0)
    handle = trips.handle = RunHandle()
    cfg = config(openai_server, prices=PRICES, max_cost_usd=5.0)
    outcome = await asyncio.wait_for(
        RunService(store=store).run(RunRequest.ask("q", DOCS, cfg), [sink], handle), 60)
    assert len(trips.fired) == 2
    await _check_after(store, outcome, events, handle)
    monkeypatch.undo()
    await _next_run_works(openai_server, store)


async def _stored_parent(server, store):
    server.script("root", replies=[code("x = len(context)\nprint(x)"), code("y = x * 2\nprint(y)"),
                                   code("FINAL(str(y))")])
    outcome = await RunService(store=store).run(RunRequest.ask("q", DOCS, config(server)))
    assert outcome.status == "finished"
    return outcome.run_id


@pytest.mark.parametrize("where", ["fork-spawn", "fork-replay", "fork-replay-late", "rebuild-replay"])
async def test_stop_while_a_fork_or_rebuild_is_prepared(openai_server, store, monkeypatch, where):
    """Preparing a fork or a rebuilt follow-up re-executes the recorded cells: Stop ends it
    there (a task of the run), closes the rebuilt REPL and starts no run."""
    parent = await _stored_parent(openai_server, store)
    _script(openai_server, PLAIN)
    trips = Trips()
    handle = trips.handle = RunHandle()
    if where == "fork-spawn":
        trips.on_method(monkeypatch, WorkerConnection, "spawn", nth=1, delay=0.0, classmethod_=True)
    else:
        trips.on_method(monkeypatch, repl_client.ReplClient, "execute", nth=2 if where.endswith("late") else 1,
                        delay=0.0)
    if where.startswith("rebuild"):
        request = RunRequest.rebuild(parent, "and now?", config(openai_server))
    else:
        request = RunRequest.fork(parent, 3, config=config(openai_server))
    runs_before = len(store.list_runs())
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(RunService(store=store).run(request, [], handle), 60)
    assert trips.fired and handle.run is None
    assert not leaks.repl_dirs() and not await asyncio.to_thread(leaks.settle, 2.0)
    assert len(store.list_runs()) == runs_before       # nothing half-made in the record
    monkeypatch.undo()
    await _next_run_works(openai_server, store)


@pytest.mark.parametrize("when", ["before-preparing", "after-preparing"])
async def test_a_fork_refused_at_its_start_check_leaves_no_worker(openai_server, store, when):
    """An unpriced model under a dollar cap: refused before the re-execution when the
    request names its config, else after it; either way its rebuilt REPL is closed."""
    from core.engine.run import ConfigError
    parent = await _stored_parent(openai_server, store)
    runs_before = len(store.list_runs())
    if when == "before-preparing":
        request = RunRequest.fork(parent, 3, config=config(openai_server, max_cost_usd=1.0))
    else:
        request = RunRequest.fork(parent, 3, fork_overrides={"max_cost_usd": 1.0})
    with pytest.raises(ConfigError, match="No price"):
        await RunService(store=store).run(request, [])
    assert not leaks.repl_dirs() and not await asyncio.to_thread(leaks.settle, 2.0)
    assert len(store.list_runs()) == runs_before


@pytest.mark.parametrize("where", ["sources", "writer-close"])
async def test_the_awaiting_task_cancelled_again_while_the_record_closes_still_stores_the_run(
        openai_server, store, monkeypatch, where):
    """A grid's Stop cancels a cell's task more than once: the first cancel ends the run, the
    next arrives while its record is closed (waiting for the sources, or for the writer's
    last rows). The run is still stored as cancelled before the task ends."""
    import threading
    from core.store import writer as writer_mod
    _script(openai_server, PLAIN)
    loop = asyncio.get_running_loop()
    task_box: list = []
    second = threading.Event()

    def cancel_again() -> None:
        second.set()
        task_box[0].cancel()
    if where == "writer-close":
        original = writer_mod.EventWriter.close

        def close(self, *a, **kw):
            loop.call_soon_threadsafe(cancel_again)
            second.wait(5)
            import time
            time.sleep(0.2)                      # the task has been cancelled again by now
            return original(self, *a, **kw)
        monkeypatch.setattr(writer_mod.EventWriter, "close", close)
    else:
        from core import background
        original_hurry = background.LowPriorityWork.hurry

        def hurry(self):
            loop.call_soon(cancel_again)
            return original_hurry(self)
        monkeypatch.setattr(background.LowPriorityWork, "hurry", hurry)
    events: list = []
    handle = RunHandle()

    def sink(event):
        events.append(event)
        if event.type == "CellStarted":
            loop.call_soon(task_box[0].cancel)
    cfg = config(openai_server, prices=PRICES, max_cost_usd=5.0)
    task = asyncio.ensure_future(RunService(store=store).run(RunRequest.ask("q", BIG, cfg), [sink], handle))
    task_box.append(task)
    with pytest.raises(asyncio.CancelledError):
        await task
    assert second.is_set(), "the second cancel never came"
    run_id = handle.run.run_id
    run = store.get_run(run_id)
    assert run is not None and run["status"] == "cancelled", run and run["status"]
    assert not leaks.repl_dirs() and not await asyncio.to_thread(leaks.settle, 2.0)
    monkeypatch.undo()
    await _next_run_works(openai_server, store)
