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
  the GUI thread, which takes the whole buffer into its backlog and hands it to
  the panes, which fold it for at most BUDGET_MS: what is left waits, in order,
  for the next frame, so a burst of hundreds of events spreads over frames;
  `drain()` applies what is left at the end of a run (the order always holds:
  the signal carries no events, only the wake-up);
- into the engine: `submit(coro)` (asyncio.run_coroutine_threadsafe) and
  `call_soon(fn)` (loop.call_soon_threadsafe), e.g. Stop;
- a callback the engine awaits in the GUI (the approval dialog):
  `on_gui_loop(async_fn, gui_loop)` runs it on the GUI's loop and awaits it here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from typing import Any, Awaitable, Callable, Coroutine

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from core import switch_interval
from core.llm.litellm_import import loaded
import gc

log = logging.getLogger(__name__)

FRAME_MS = 16          # events reach the panes at most once per frame
BUDGET_MS = 6          # ... and each frame folds for at most about this much CPU; the rest waits a frame
SWITCH_INTERVAL_S = 0.001   # how long a thread waiting for the GIL waits before the holder must yield
EXECUTOR_WORKERS = 1       # the engine loop's default executor (see _main)
YOUNG_RATIO = 2            # during a run: generation 1 collected every 2 young collections, so each stays short


class EngineThread:
    """A worker thread running one asyncio loop for the life of the window."""

    def __init__(self, name: str = "rlm-engine") -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        self.start()
        assert self._loop is not None
        return self._loop

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        with self._lock:
            if self.alive:
                return
            # Painting calls back into Python (item models, slots) many times a frame, and each
            # call waits for the GIL while the engine thread computes: at Python's default 5 ms
            # that adds up to whole frames; at 1 ms it does not (tests/bench/bench_window_fanout.py).
            switch_interval.keep_at_most(SWITCH_INTERVAL_S)
            self._ready.clear()
            self._thread = threading.Thread(target=self._main, name=self.name, daemon=True)
            self._thread.start()
        self._ready.wait(10)

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        loop.set_exception_handler(_exception_handler)
        # asyncio.to_thread and run_in_executor(None) on this loop: litellm prepares every
        # call there (acompletion runs its sync setup in the executor), a few ms of Python
        # each. Python's default pool (6 threads here) ran hundreds at once, each thread one
        # more taker of the GIL, and the window's thread waited behind all of them; one
        # worker does the same work in the same time (it is GIL-bound anyway) with one.
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(
            EXECUTOR_WORKERS, thread_name_prefix=f"{self.name}-pool"))
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

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future:
        """Run `coro` on the engine's loop; cancelling the returned future cancels it."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Await `coro` on the engine's loop from another loop (the window's)."""
        return await asyncio.wrap_future(self.submit(coro))

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(fn, *args)

    def on_gui_loop(self, fn: Callable[..., Awaitable[Any]], gui_loop: asyncio.AbstractEventLoop
                    ) -> Callable[..., Awaitable[Any]]:
        """`fn` (a coroutine function of the GUI) as one the engine can await."""
        async def crossed(*args: Any) -> Any:
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(fn(*args), gui_loop))
        return crossed

    async def close(self, timeout: float = 10.0) -> None:
        """Close litellm's clients on this loop, then stop the loop and the thread
        (await it from the window's loop)."""
        if not self.alive or self._loop is None:
            return
        try:
            await asyncio.wait_for(self.run(_close_http_clients()), timeout)
        except (asyncio.TimeoutError, RuntimeError) as exc:
            log.warning("closing the HTTP clients on the engine loop: %s", exc)
        self._loop.call_soon_threadsafe(self._loop.stop)
        thread = self._thread
        if thread is not None:
            await asyncio.to_thread(thread.join, timeout)


async def _close_http_clients() -> None:
    """The connection pools of this loop: ours (core/llm/openai_http.py) and litellm's."""
    # lazy: +3 modules in the window (where it runs)
    from core.llm.openai_http import close_clients
    await close_clients()
    if loaded() is None:          # not imported, or still importing: it made no client here
        return
    try:
        # lazy: +2851 modules in the window (where it runs)
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
        cls = type(self)
        if cls._depth == 0:
            cls._saved = gc.get_threshold()
            gc.set_threshold(cls._saved[0], min(cls._saved[1], YOUNG_RATIO), 1 << 30)
        cls._depth += 1
        return self

    def __exit__(self, *_exc: Any) -> None:
        cls = type(self)
        cls._depth -= 1
        if cls._depth == 0 and cls._saved is not None:
            gc.set_threshold(*cls._saved)
            cls._saved = None


class EventBridge(QObject):
    """Events from the engine thread into Qt: one queued signal per frame at most.

    `consume(events, deadline)` runs on the GUI thread with the events in order and
    returns how many it applied: with a `deadline` (a time.thread_time() value: the GUI
    thread's own CPU time, BUDGET_MS after the frame began; time spent waiting for the GIL
    is not work a smaller batch would save) it may stop early, and the rest stays at the front of
    the backlog for the next frame, so a burst of hundreds of events is applied over
    several frames and the window paints in between. `drain()` applies everything
    (deadline None): the end of a run, before it is reported."""

    wake = Signal()

    def __init__(self, consume: Callable[[list, float | None], int | None], parent: QObject | None = None,
                 frame_ms: int = FRAME_MS, budget_ms: float | None = BUDGET_MS) -> None:
        super().__init__(parent)
        self._consume = consume
        self._buffer: list[Any] = []               # filled by the engine thread (under the lock)
        self._backlog: list[Any] = []              # taken by the GUI thread, not applied yet
        self._lock = threading.Lock()
        self._armed = False
        self._last_drain = 0.0
        self._frame_s = frame_ms / 1000
        self.budget_ms = budget_ms                 # per frame; None: no budget (whole batches)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._frame)
        self.wake.connect(self._on_wake, Qt.ConnectionType.QueuedConnection)
        self.batches = 0                           # how many batches reached `consume` (the benchmark)
        self.carried = 0                           # frames that left events for the next one

    @property
    def pending(self) -> int:
        """Events not applied yet (GUI thread)."""
        with self._lock:
            return len(self._backlog) + len(self._buffer)

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

    def _frame(self) -> None:
        self._apply(None if self.budget_ms is None else self.budget_ms / 1000)

    def drain(self) -> None:
        """Apply everything waiting now, whole (GUI thread)."""
        while self._apply(None):
            pass

    def _apply(self, budget_s: float | None) -> bool:
        """One step (GUI thread); True if it applied events."""
        self._timer.stop()
        with self._lock:
            if self._buffer:
                self._backlog.extend(self._buffer)
                self._buffer = []
            self._armed = False
        self._last_drain = time.perf_counter()
        batch = self._backlog
        if not batch:
            return False
        self.batches += 1
        done = self._consume(batch, None if budget_s is None else time.thread_time() + budget_s)
        done = len(batch) if done is None else max(0, min(done, len(batch)))
        if done == len(batch):
            self._backlog = []
        else:
            del batch[:done]
            if budget_s is not None:
                self.carried += 1
                self._timer.start(int(self._frame_s * 1000))     # the rest in the next frame
        return done > 0
