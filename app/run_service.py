"""The one run path: every run, from the CLI or the window, is a RunRequest
handed to RunService.run (an evaluation's answers too: app/eval_runs.py).

    request = RunRequest.ask(question, documents, config)          # or .follow_up/.fork/.rerun/.rebuild
    outcome = await RunService().run(request, sinks=[printer])     # handle.cancel() stops it

The service does, once for every kind of run: engine hardening (the process
is marked non-dumpable and its key variables moved out before any worker starts:
core.engine_process.prepare_engine_process, the one entry point), the engine's import
(litellm, in a thread), key routing (the one function that says which key a
model's call carries), the engine's preparation of the request (core/engine/prepare.py:
a fork or a rebuild reads the store handed to it), and the run itself with its storage
(app.runner.QuestionRun: engine + EventWriter).

The service is loop-agnostic: the CLI awaits it under `asyncio.run`; the
window awaits it on the engine's own loop in a worker thread
(app/engine_thread.py). Whatever the service creates (the REPL workers,
litellm's clients, kept sessions) belongs to the loop that ran it.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Sequence

from app.key_routing import route_key_for
from core.call_ids import ROOT, CallId
from core.engine.request import RunRequest  # noqa: F401  (the run path's request: app/ imports it here)
from core.engine_process import prepare_engine_process
from core.lifecycle import finish

if TYPE_CHECKING:
    from app.runner import QuestionRun, RunOutcome
    from core.engine.prepare import PreparedRun

log = logging.getLogger(__name__)

IMPORT_LOCK = threading.RLock()    # one first import of litellm at a time: two threads importing pydantic break it


def preload_engine(wait_for_litellm: bool = True) -> Any:
    """Import the runner, the engine and litellm (run this in a thread); returns app.runner.
    Idempotent; the cost preview and the run share the lock. Without `wait_for_litellm`
    litellm is left to the model client (core/llm/client.py): a call through litellm waits
    for its import; a call to the user's own OpenAI-compatible server never needs it
    (core/llm/openai_http.py; token estimates need no tokenizer, core/llm/pricing.py)."""
    with IMPORT_LOCK:
        runner = importlib.import_module("app.runner")
        importlib.import_module("core.engine.run")
        if wait_for_litellm:
            # lazy: free in the window, +63 modules in ask (where it runs)
            from core.llm.litellm_import import litellm
            litellm()
    return runner


def _engine_loaded() -> bool:
    """Whether preload_engine's modules are imported (a grid's 5,000 runs skip a thread hop each)."""
    # lazy: free (sys is always loaded)
    import sys
    return "app.runner" in sys.modules and "core.engine.run" in sys.modules


class RunHandle:
    """One run in progress: cancel() stops it (call it on the loop the run is on);
    after preparing, `prepared` (core.engine.prepare.PreparedRun), `documents` and `config`
    say what runs; `on_prepared` hears of a fork or a rebuild before it goes live;
    `edited_output` is what the root was shown of a fork's edited turn, once it ran."""

    def __init__(self, on_prepared: Callable[[PreparedRun], None] | None = None) -> None:
        self.on_prepared = on_prepared
        self.prepared: PreparedRun | None = None
        self.edited_output: str | None = None
        self.run: QuestionRun | None = None
        self.documents: list[Any] = []
        self.config: Any = None
        self.cancelled = False
        self.preparing: asyncio.Task | None = None   # a fork's or rebuild's preparation (Stop cancels it)

    @property
    def run_id(self) -> str | None:
        return self.run.run_id if self.run is not None else None

    def cancel(self) -> None:
        self.cancelled = True
        if self.preparing is not None and not self.preparing.done():
            self.preparing.cancel()
        if self.run is not None:
            self.run.cancel()


async def _close_prepared(task: asyncio.Task) -> None:
    """A preparation that finished as Stop came: its rebuilt REPL is closed here."""
    await asyncio.wait({task})
    if not task.cancelled() and task.exception() is None:
        await task.result().close()


class RunService:
    """Runs RunRequests. `open_store` gives a RunStore for one run (closed after it), or
    `store` is an open one the caller keeps (default: RunStore.open() per run);
    `keys` and `settings` are callables giving the KeyStore and Settings that
    route keys (defaults: the keychain and the settings file); `writer` an EventWriter every
    run writes through (the caller closes it; default: one per run)."""

    def __init__(self, *, open_store: Callable[[], Any] | None = None, store: Any = None,
                 keys: Callable[[], Any] | None = None, settings: Callable[[], Any] | None = None,
                 worker_command: list[str] | None = None, writer: Any = None) -> None:
        self._open_store = open_store
        self._writer = writer              # one EventWriter for every run of this service (a grid's)
        self._borrowed = store             # an open store lent by the caller (not closed here)
        self._keys = keys
        self._settings = settings
        self._worker_command = worker_command

    def key_for(self, config: Any) -> Callable[[str], str | None]:
        return route_key_for(config, keys=self._keys() if self._keys else None,
                             settings=self._settings() if self._settings else None)

    def _store(self) -> Any:
        if self._borrowed is not None:
            return self._borrowed
        if self._open_store is not None:
            return self._open_store()
        # lazy: free in the window, +191 modules in ask (where it runs)
        from core.store import RunStore
        return RunStore.open()

    async def run(self, request: RunRequest, sinks: Sequence[Callable[[Any], None]] = (),
                  handle: RunHandle | None = None) -> RunOutcome:
        handle = handle or RunHandle()
        prepare_engine_process()            # the one hardening entry point (idempotent; main.py ran it)
        if not _engine_loaded():
            await asyncio.to_thread(preload_engine, False)   # the engine's import off this loop; litellm's
                                                             # goes on beside the run (preload_engine)
        from app.runner import QuestionRun      # the engine's modules: lazy, ~80 ms of CPU before the
                                                # window's first paint otherwise (measured, docs/dev/run-path.md)
        # lazy: loaded already where documents were read
        from core.ingest.bigfile import keep_sidecars
        keep_sidecars(request.documents)        # their sidecars in use before the store's sweep
        # lazy: loaded with the engine above (preload_engine)
        from core.engine.prepare import prepare_run
        store = self._store()
        prepared = None                             # a rebuilt session is this service's until the run has it
        try:
            if request.rebuilds:
                # Re-executing the recorded cells can take minutes: a task of the run, so Stop
                # ends it there (CancelledError from here: no run was started, nothing stored).
                handle.preparing = asyncio.ensure_future(
                    prepare_run(request, runs=store, worker_command=self._worker_command))
                if handle.cancelled:
                    handle.preparing.cancel()
                try:
                    prepared = await handle.preparing
                except asyncio.CancelledError:
                    await finish(_close_prepared(handle.preparing))
                    raise
                finally:
                    handle.preparing = None
            else:
                prepared = await prepare_run(request)
            handle.prepared, handle.documents, handle.config = prepared, list(prepared.documents), prepared.config
            if prepared.rebuilt and handle.on_prepared is not None:
                handle.on_prepared(prepared)
            if prepared.edited:
                sinks = [*sinks, _edited_output_into(handle)]
            handle.run = QuestionRun(prepared.question, documents=prepared.documents, skipped=prepared.skipped,
                                     config=prepared.config, sinks=sinks, store=store,
                                     key_for=self.key_for(prepared.config), parent_run_id=request.parent_run_id,
                                     run_id=request.run_id, worker_command=self._worker_command,
                                     session=prepared.session, follow_up=prepared.follow_up,
                                     keep_session=request.keep_session, evaluation_id=request.evaluation_id,
                                     forked_from=prepared.forked_from, shared_budget=request.shared_budget,
                                     writer=self._writer)
            if handle.cancelled:
                handle.run.cancel()
            return await handle.run.execute()
        finally:
            # A rebuilt session is the run's once its engine has started (it closes or keeps
            # it); a run refused before that (its start check) leaves it to be closed here.
            if prepared is not None and not (handle.run is not None and handle.run.engine_started):
                await finish(prepared.close())
            if store is not self._borrowed:
                store.close()


_EDITED_CELL = CallId.for_cell(CallId.for_turn(ROOT, 1), 1)     # the fork's edited turn is its turn 1


def _edited_output_into(handle: RunHandle) -> Callable[[Any], None]:
    """A sink that keeps what the root was shown of the fork's edited turn (its turn 1's cell)."""
    def sink(event: Any) -> None:
        if event.type == "CellExecuted" and event.call_id == _EDITED_CELL:
            handle.edited_output = event.output_for_model
    return sink
