"""The window's side of the one run path: RunRequests go to the RunService on
the engine thread; the window hears about them through signals.

    runs = WindowRuns(service, consume=panes.apply_many)
    runs.started.connect(...); runs.ended.connect(...); runs.failed.connect(...)
    runs.launch(request)      # an asyncio task on the window's loop, awaiting the engine thread
    runs.stop()               # crosses to the engine loop (call_soon_threadsafe)

Every kind of run (ask, re-run, follow-up, fork, rebuild) comes through
`launch`, so the glue that starts runs (the controller, the trust actions,
the follow-up bar) builds a request and never touches a run's internals.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QObject, Signal

from app.engine_thread import EngineThread, EventBridge, FullCollectionsHeld
from app.run_service import RunHandle, RunRequest, RunService
from dataclasses import replace

if TYPE_CHECKING:
    from core.engine.prepare import PreparedRun

log = logging.getLogger(__name__)


class WindowRuns(QObject):
    started = Signal(object)              # RunRequest, before anything runs
    prepared = Signal(object, object)     # RunRequest, PreparedRun (a fork or rebuild is ready to go live)
    ended = Signal(object, object)        # RunRequest, RunOutcome (a run that began, whatever its end)
    failed = Signal(object, object)       # RunRequest, the exception that kept it from running
    stopped_early = Signal(object)        # RunRequest cancelled before the run began

    def __init__(self, service: RunService, consume: Callable[[list], None], parent: QObject | None = None,
                 engine: EngineThread | None = None) -> None:
        super().__init__(parent)
        self.service = service
        self.engine = engine or EngineThread()
        self.bridge = EventBridge(consume, self)
        self.task: asyncio.Task | None = None
        self.handle: RunHandle | None = None
        self.request: RunRequest | None = None
        self._gui_loop: asyncio.AbstractEventLoop | None = None
        self._closing: set[asyncio.Future] = set()

    # --- state ------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def config(self) -> Any:
        """The config of the run in progress (None when idle)."""
        return self.request.config if self.running and self.request is not None else None

    def documents(self) -> list[Any] | None:
        """The documents the run in progress was given (None when idle or not known yet)."""
        if not self.running or self.handle is None:
            return None
        return list(self.handle.documents) or list(self.request.documents) or None

    @property
    def run_id(self) -> str | None:
        return self.handle.run_id if self.running and self.handle is not None else None

    # --- starting and stopping -------------------------------------------------------
    def launch(self, request: RunRequest) -> asyncio.Task | None:
        """Start `request` (None if a run is in progress)."""
        if self.running:
            return None
        self._gui_loop = asyncio.get_event_loop()
        if request.config is not None and request.config.approver is not None:
            # the approval dialog lives on the window's loop; the engine awaits it from its own
            request = _with_config(request, request.config.replace(
                approver=self.engine.on_gui_loop(request.config.approver, self._gui_loop)))
        self.request = request
        self.handle = RunHandle(on_prepared=self._prepared_in_engine)
        self.started.emit(request)
        self.task = asyncio.ensure_future(self._run(request, self.handle))
        return self.task

    def _prepared_in_engine(self, prepared: PreparedRun) -> None:
        request, loop = self.request, self._gui_loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.prepared.emit, request, prepared)

    async def _run(self, request: RunRequest, handle: RunHandle) -> Any:
        outcome = None
        hold = FullCollectionsHeld().__enter__()
        try:
            outcome = await self.engine.run(self.service.run(request, [self.bridge.sink], handle))
        except asyncio.CancelledError:
            if handle.run is None:
                self.stopped_early.emit(request)
            else:
                raise
        except Exception as exc:  # the run's boundary: whatever kept it from running is reported
            log.warning("a %s could not run: %s", request.kind, exc, exc_info=exc)
            self.bridge.drain()
            self.failed.emit(request, exc)
        else:
            self.bridge.drain()
            self.ended.emit(request, outcome)
        finally:
            hold.__exit__(None, None, None)
            self.bridge.drain()
        return outcome

    def stop(self) -> None:
        """Stop the run in progress: its transcript is kept and stored as cancelled."""
        if not self.running:
            return
        handle = self.handle
        if handle is not None:
            self.engine.call_soon(handle.cancel)

    # --- kept sessions (they belong to the engine's loop) -------------------------------
    def close_session(self, session: Any) -> None:
        if session is None:
            return
        future = asyncio.ensure_future(self._close_session(session))
        self._closing.add(future)
        future.add_done_callback(self._closing.discard)

    async def _close_session(self, session: Any) -> None:
        try:
            await self.engine.run(session.close())
        except (OSError, RuntimeError, ProcessLookupError) as exc:
            log.warning("closing a kept REPL failed: %s", exc)

    async def on_engine(self, coro: Any) -> Any:
        """Await other engine work (e.g. a key test through litellm) on the engine's loop."""
        return await self.engine.run(coro)

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop what runs, give it `timeout` seconds to write its end, close kept
        sessions and litellm's clients, end the engine thread."""
        self.stop()
        if self.running:
            await asyncio.wait([self.task], timeout=timeout)
        if self._closing:
            await asyncio.wait(list(self._closing), timeout=timeout)
        await self.engine.close()


def _with_config(request: RunRequest, config: Any) -> RunRequest:
    return replace(request, config=config)
