"""The window's engine runs on its own asyncio loop in a worker thread.

Hundreds of concurrent litellm calls cost CPU (JSON, SSL, aiohttp); on the
window's loop that stalls painting. So the window hands every run, fork,
follow-up and rebuild to EngineThread, whose loop owns what they create: the
REPL workers and kept sessions (ReplClient), and litellm's HTTP clients
(litellm caches them per running loop, so they are made, used and closed on
this loop; the window's loop never calls litellm).

Crossings, and the only ones:
- into Qt: events go through EventBridge: the engine thread appends to a
  buffer under a lock and, once per frame (FRAME_MS), one queued signal wakes
  the GUI thread, which takes the whole buffer and hands it to the panes;
  `drain()` takes what is left at the end of a run (the order always holds:
  the signal carries no events, only the wake-up);
- into the engine: `submit(coro)` (asyncio.run_coroutine_threadsafe) and
  `call_soon(fn)` (loop.call_soon_threadsafe), e.g. Stop;
- back from the engine, anything else (a result the window awaits with `run`,
  "the fork is prepared", a callback the engine awaits in the GUI such as the
  approval dialog: `on_gui_loop(async_fn, gui_loop)`) goes through GuiInbox: a
  locked queue of callables and one argument-less queued signal (not qasync's
  call_soon_threadsafe, whose signal carries Python objects across threads).

The engine thread is a QThread, not a threading.Thread: it emits Qt signals, and
Qt "adopts" a plain Python thread that does so and tears that adoption down when
the thread ends; with plain threads, a test process that started and stopped
engine threads crashed (SIGSEGV) in a later test in about half the runs (2 of 4,
then 0 of 4 with the QThread). Its QObjects (the inbox, the bridge) have Qt
parents on the GUI thread, so the garbage collector never frees one elsewhere.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import sys
import threading
import time
from collections import deque
from typing import Any, Awaitable, Callable, Coroutine

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal

log = logging.getLogger(__name__)

FRAME_MS = 16          # events reach the panes at most once per frame
SWITCH_INTERVAL_S = 0.001   # how long a thread waiting for the GIL waits before the holder must yield
YOUNG_RATIO = 2            # during a run: generation 1 collected every 2 young collections, so each stays short


class GuiInbox(QObject):
    """Callables from any thread, run on the GUI thread in the order posted. The wake-up
    signal carries nothing; the callables wait in a locked queue."""

    wake = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._calls: deque[Callable[[], Any]] = deque()
        self._lock = threading.Lock()
        self._armed = False
        self.wake.connect(self._run, Qt.ConnectionType.QueuedConnection)

    def post(self, fn: Callable[[], Any]) -> None:
        with self._lock:
            self._calls.append(fn)
            if self._armed:
                return
            self._armed = True
        self.wake.emit()

    def _run(self) -> None:
        with self._lock:
            calls = list(self._calls)
            self._calls.clear()
            self._armed = False
        for fn in calls:
            try:
                fn()
            except Exception:  # one failing callback must not drop the others
                log.exception("a call from the engine thread failed")


def _settle(source: Any, target: asyncio.Future) -> None:
    """Copy a finished future's outcome (concurrent or asyncio) into `target`."""
    if target.done():
        return
    if source.cancelled():
        target.cancel()
    elif source.exception() is not None:
        target.set_exception(source.exception())
    else:
        target.set_result(source.result())


class _LoopThread(QThread):
    def __init__(self, target: Callable[[], None]) -> None:
        super().__init__()
        self._target = target

    def run(self) -> None:
        self._target()


class EngineThread:
    """A worker thread running one asyncio loop for the life of the window. Make it on
    the GUI thread with a `parent` QObject there: its inbox is a child of it, so Qt
    deletes the inbox on the GUI thread (left to Python, the garbage collector may free
    a QObject on any thread, and Qt then crashes later)."""

    def __init__(self, name: str = "rlm-engine", parent: QObject | None = None) -> None:
        self.name = name
        self.inbox = GuiInbox(parent)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: QThread | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._ident: int | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        self.start()
        assert self._loop is not None
        return self._loop

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.isRunning()

    def start(self) -> None:
        with self._lock:
            if self.alive:
                return
            # Painting calls back into Python (item models, slots) many times a frame, and each
            # call waits for the GIL while the engine thread computes: at Python's default 5 ms
            # that adds up to whole frames; at 1 ms it does not (tests/bench/bench_window_fanout.py).
            sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
            self._ready.clear()
            # A QThread, not a threading.Thread: the engine thread emits Qt signals, and a
            # plain Python thread would be adopted by Qt and torn down behind its back.
            self._thread = _LoopThread(self._main)
            self._thread.setObjectName(self.name)
            self._thread.start()
        self._ready.wait(10)

    def _main(self) -> None:
        threading.current_thread().name = self.name
        self._ident = threading.get_ident()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        loop.set_exception_handler(_exception_handler)
        self._loop = loop
        self._ready.set()
        try:
            loop.run_forever()
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
            asyncio.set_event_loop(None)

    def in_engine(self) -> bool:
        return threading.get_ident() == self._ident

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future:
        """Run `coro` on the engine's loop; cancelling the returned future cancels it."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Await `coro` on the engine's loop from the window's loop; cancelling the
        awaiting task cancels `coro`. The result comes back through the inbox."""
        result = asyncio.get_running_loop().create_future()
        future = self.submit(coro)
        future.add_done_callback(lambda done: self.inbox.post(lambda: _settle(done, result)))
        try:
            return await result
        except asyncio.CancelledError:
            future.cancel()
            raise

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(fn, *args)

    def on_gui_loop(self, fn: Callable[..., Awaitable[Any]], gui_loop: asyncio.AbstractEventLoop
                    ) -> Callable[..., Awaitable[Any]]:
        """`fn` (a coroutine function of the GUI) as one the engine can await."""
        async def crossed(*args: Any) -> Any:
            engine_loop = asyncio.get_running_loop()
            answer = engine_loop.create_future()
            tasks: list[asyncio.Task] = []

            def start() -> None:          # on the GUI thread
                task = gui_loop.create_task(fn(*args))
                task.add_done_callback(lambda t: engine_loop.call_soon_threadsafe(_settle, t, answer))
                tasks.append(task)
            self.inbox.post(start)
            try:
                return await answer
            except asyncio.CancelledError:
                self.inbox.post(lambda: [t.cancel() for t in tasks])
                raise
        return crossed

    async def close(self, timeout: float = 10.0) -> None:
        """Close litellm's clients on this loop, then stop the loop and the thread
        (await it from the window's loop)."""
        if not self.alive or self._loop is None:
            return
        try:
            await asyncio.wait_for(self.run(_close_litellm_clients()), timeout)
        except (asyncio.TimeoutError, RuntimeError) as exc:
            log.warning("closing litellm's clients on the engine loop: %s", exc)
        self._loop.call_soon_threadsafe(self._loop.stop)
        thread = self._thread
        deadline = time.monotonic() + timeout
        while thread is not None and thread.isRunning() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)                   # (the window's loop keeps running meanwhile)
        if thread is not None:
            thread.wait(1000)
            if not thread.isRunning():
                self._thread = None                     # dropped here, on the GUI thread


async def _close_litellm_clients() -> None:
    if "litellm" not in sys.modules:
        return
    try:
        from litellm.llms.custom_httpx.async_client_cleanup import close_litellm_async_clients
    except ImportError:
        return
    await close_litellm_async_clients()


def _exception_handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    exc = context.get("exception")
    if exc is not None:
        log.error("engine loop: %s", context.get("message"), exc_info=exc)
    else:
        log.error("engine loop: %s", context.get("message"))


class FullCollectionsHeld:
    """While a run streams, Python's full (generation 2) garbage collections wait: one
    holds the GIL for hundreds of ms with a 512-call run's objects alive, stalling the
    window. Young generations are still collected; the held full collection runs at the
    next collection after the run ends. Nested holds count."""

    _depth = 0
    _saved: tuple[int, int, int] | None = None

    def __enter__(self) -> "FullCollectionsHeld":
        import gc
        cls = type(self)
        if cls._depth == 0:
            cls._saved = gc.get_threshold()
            gc.set_threshold(cls._saved[0], min(cls._saved[1], YOUNG_RATIO), 1 << 30)
        cls._depth += 1
        return self

    def __exit__(self, *_exc: Any) -> None:
        import gc
        cls = type(self)
        cls._depth -= 1
        if cls._depth == 0 and cls._saved is not None:
            gc.set_threshold(*cls._saved)
            cls._saved = None


class EventBridge(QObject):
    """Events from the engine thread into Qt: one queued signal per frame at most.
    `consume(batch)` runs on the GUI thread with the events in order."""

    wake = Signal()

    def __init__(self, consume: Callable[[list], None], parent: QObject | None = None,
                 frame_ms: int = FRAME_MS) -> None:
        super().__init__(parent)
        self._consume = consume
        self._buffer: list[Any] = []
        self._lock = threading.Lock()
        self._armed = False
        self._last_drain = 0.0
        self._frame_s = frame_ms / 1000
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self.drain)
        self.wake.connect(self._on_wake, Qt.ConnectionType.QueuedConnection)
        self.batches = 0                           # how many batches reached `consume` (the benchmark)

    def sink(self, event: Any) -> None:
        """The run's event sink (any thread)."""
        with self._lock:
            self._buffer.append(event)
            if self._armed:
                return
            self._armed = True
        self.wake.emit()

    def _on_wake(self) -> None:
        if self._timer.isActive():
            return
        wait_ms = max(0, int((self._last_drain + self._frame_s - time.perf_counter()) * 1000))
        self._timer.start(wait_ms)

    def drain(self) -> None:
        """Hand everything waiting to `consume` now (GUI thread)."""
        self._timer.stop()
        with self._lock:
            batch, self._buffer = self._buffer, []
            self._armed = False
        self._last_drain = time.perf_counter()
        if batch:
            self.batches += 1
            self._consume(batch)
