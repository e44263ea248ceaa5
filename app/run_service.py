"""The one run path: every run, from the CLI or the window, is a RunRequest
handed to RunService.run (an evaluation's answers too: app/eval_runs.py).

    request = RunRequest.ask(question, documents, config)          # or .follow_up/.fork/.rerun/.rebuild
    outcome = await RunService().run(request, sinks=[printer])     # handle.cancel() stops it

The service does, once for every kind of run: engine hardening (the process
is marked non-dumpable and its key variables moved out before any worker starts:
core.engine_process.prepare_engine_process, the one entry point), the engine's import
(litellm, in a thread), key routing (the one function that says which key a
model's call carries), preparing a fork or a rebuilt REPL from the store, and
the run itself with its storage (app.runner.QuestionRun: engine + EventWriter).

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from app.key_routing import route_key_for
from core.call_ids import ROOT, CallId
from core.engine_process import prepare_engine_process
from core.lifecycle import finish
from core.follow_up import rebuild_session

if TYPE_CHECKING:
    from app.runner import QuestionRun, RunOutcome

log = logging.getLogger(__name__)

KINDS = ("ask", "follow-up", "fork", "re-run", "rebuild")

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


@dataclass(frozen=True)
class RunRequest:
    """What to run. `kind` says where the REPL and conversation come from:
    ask / re-run: a fresh REPL over `documents` (re-run: linked to `parent_run_id`);
    follow-up: the live `session` of run `parent_run_id`, a new question in it;
    fork: run `parent_run_id` rebuilt up to root turn `fork_turn` by re-execution
    (`edited_code` run by the engine as the fork's turn 1, its new sub-calls the fork's own), then live;
    rebuild: the REPL of run `parent_run_id` rebuilt by re-execution, then `question`
    asked in it as a follow-up. Fork and rebuild take question and documents from the store."""
    kind: str
    question: str = ""
    documents: tuple = ()
    skipped: tuple = ()
    config: Any = None                 # core.config.RunConfig (fork: None = the parent's)
    session: Any = None                # core.engine.rlm.Session (follow-up)
    parent_run_id: str | None = None
    fork_turn: int | None = None
    edited_code: str | None = None
    fork_overrides: dict = field(default_factory=dict)   # fork without `config`: changes to the parent's
    keep_session: bool = False         # keep the REPL alive after the run (the window's follow-ups)
    run_id: str | None = None
    evaluation_id: str | None = None   # an evaluation's question (core/evaluation): tagged, kept out of History
    shared_budget: Any = None          # a Budget many runs reserve from (a grid's: core/grid)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown run kind {self.kind!r} (one of {', '.join(KINDS)})")
        if self.kind in ("follow-up", "fork", "re-run", "rebuild") and not self.parent_run_id:
            raise ValueError(f"a {self.kind} needs the run it comes from")
        if self.kind == "follow-up" and self.session is None:
            raise ValueError("a follow-up needs the live session of the run it follows")
        if self.kind == "fork" and self.fork_turn is None:
            raise ValueError("a fork needs the turn to fork from")
        if self.kind != "fork" and not self.question.strip():
            raise ValueError("the question is empty")
        if self.kind in ("ask", "re-run", "follow-up") and not self.documents:
            raise ValueError("there are no readable documents to ask about")

    @classmethod
    def ask(cls, question: str, documents: Sequence[Any], config: Any, *, skipped: Sequence[Any] = (),
            **more: Any) -> "RunRequest":
        return cls("ask", question, tuple(documents), tuple(skipped), config, **more)

    @classmethod
    def rerun(cls, parent_run_id: str, question: str, documents: Sequence[Any], config: Any, *,
              skipped: Sequence[Any] = (), **more: Any) -> "RunRequest":
        return cls("re-run", question, tuple(documents), tuple(skipped), config,
                   parent_run_id=parent_run_id, **more)

    @classmethod
    def follow_up(cls, parent_run_id: str, session: Any, question: str, documents: Sequence[Any],
                  config: Any, *, skipped: Sequence[Any] = (), **more: Any) -> "RunRequest":
        return cls("follow-up", question, tuple(documents), tuple(skipped), config, session=session,
                   parent_run_id=parent_run_id, **more)

    @classmethod
    def fork(cls, parent_run_id: str, turn: int, *, config: Any = None, edited_code: str | None = None,
             **more: Any) -> "RunRequest":
        return cls("fork", config=config, parent_run_id=parent_run_id, fork_turn=turn,
                   edited_code=edited_code, **more)

    @classmethod
    def rebuild(cls, parent_run_id: str, question: str, config: Any, **more: Any) -> "RunRequest":
        return cls("rebuild", question, config=config, parent_run_id=parent_run_id, **more)


@dataclass
class Prepared:
    """What preparing a fork or a rebuild did (shown before the run goes live)."""
    kind: str
    parent_run_id: str
    turn: int | None = None
    replayed_cells: int = 0
    unmatched: list[str] = field(default_factory=list)
    edited_output: str | None = None   # what the root was shown of an edited turn (set once it ran)


class RunHandle:
    """One run in progress: cancel() stops it (call it on the loop the run is on);
    after preparing, `prepared`, `documents` and `config` say what runs."""

    def __init__(self, on_prepared: Callable[[Prepared], None] | None = None) -> None:
        self.on_prepared = on_prepared
        self.prepared: Prepared | None = None
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
        await task.result()[0].close()


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
        store = self._store()
        session = None                                # a rebuilt session this service owns until the run has it
        try:
            question, documents, skipped = request.question, list(request.documents), list(request.skipped)
            config, session_in, follow_up = request.config, request.session, request.kind == "follow-up"
            if request.kind in ("fork", "rebuild") and config is not None:
                # lazy: +21 modules in the window, +109 modules in ask (where it runs)
                from core.engine.run import Engine      # refused at the start check: before minutes of re-execution
                Engine(config, emit=lambda _e: None, key_for=lambda _m: None).check()
            if request.kind in ("fork", "rebuild"):
                # Re-executing the recorded cells can take minutes: a task of the run, so Stop
                # ends it there (CancelledError from here: no run was started, nothing stored).
                handle.preparing = asyncio.ensure_future(self._prepare(store, request, config))
                if handle.cancelled:
                    handle.preparing.cancel()
                try:
                    prepared = await handle.preparing
                except asyncio.CancelledError:
                    await finish(_close_prepared(handle.preparing))
                    raise
                finally:
                    handle.preparing = None
                session, (question, documents, skipped, config, follow_up, handle.prepared) = prepared
                session_in = session
            handle.documents, handle.config = documents, config
            if handle.prepared is not None and handle.on_prepared is not None:
                handle.on_prepared(handle.prepared)
            if getattr(session_in, "edit", None) is not None and handle.prepared is not None:
                sinks = [*sinks, _edited_output_into(handle.prepared)]
            handle.run = QuestionRun(question, documents=documents, skipped=skipped, config=config,
                                     sinks=sinks, store=store, key_for=self.key_for(config),
                                     parent_run_id=request.parent_run_id, run_id=request.run_id,
                                     worker_command=self._worker_command, session=session_in,
                                     follow_up=follow_up, keep_session=request.keep_session,
                                     evaluation_id=request.evaluation_id,
                                     forked_from=_forked_from(store, request),
                                     shared_budget=request.shared_budget, writer=self._writer)
            if handle.cancelled:
                handle.run.cancel()
            return await handle.run.execute()
        finally:
            # A rebuilt session is the run's once its engine has started (it closes or keeps
            # it); a run refused before that (its start check) leaves it to be closed here.
            if session is not None and not (handle.run is not None and handle.run.engine_started):
                await finish(session.close())
            if store is not self._borrowed:
                store.close()

    async def _prepare(self, store: Any, request: RunRequest, config: Any) -> tuple[Any, tuple]:
        """A fork's plan or a rebuilt session: (session, (question, documents, skipped,
        config, follow_up, Prepared))."""
        if request.kind == "fork":
            plan = await self._prepare_fork(store, request)
            return plan.session, (plan.question, plan.documents, plan.skipped, plan.config, False,
                                  Prepared("fork", request.parent_run_id, request.fork_turn,
                                           plan.replayed_cells, plan.unmatched))
        rebuilt = await rebuild_session(store, request.parent_run_id, memory_limit_mb=config.memory_limit_mb,
                                        worker_command=self._worker_command,
                                        require_full_sandbox=config.require_full_sandbox)
        return rebuilt.session, (request.question, rebuilt.documents, rebuilt.skipped, config, True,
                                 Prepared("rebuild", request.parent_run_id, None, rebuilt.cells,
                                          rebuilt.unmatched))

    async def _prepare_fork(self, store: Any, request: RunRequest) -> Any:
        """The fork's plan: the REPL rebuilt up to the turn (an edited turn is run by the
        engine as the fork's first turn, its new sub-calls under the fork's own caps)."""
        # lazy: +10 modules in the window, +89 modules in ask (where it runs)
        from core.trust.fork import fork_config, prepare_fork
        # lazy: free here, core.trust.fork (above) imports it
        from core.trust.rebuild import load_record
        config = request.config
        if config is None:
            config = fork_config(load_record(store, request.parent_run_id), **request.fork_overrides)
        return await prepare_fork(store, request.parent_run_id, request.fork_turn, config=config,
                                  edited_code=request.edited_code, worker_command=self._worker_command)


_EDITED_CELL = CallId.for_cell(CallId.for_turn(ROOT, 1), 1)     # the fork's edited turn is its turn 1


def _forked_from(store: Any, request: RunRequest) -> dict | None:
    """What a fork's record says of its parent: its id, the turn, and its run name."""
    if request.kind != "fork":
        return None
    # lazy: free in the window, free in ask (where it runs)
    from core.run_names import title_of
    return {"run_id": request.parent_run_id, "turn": request.fork_turn,
            "title": title_of(store, request.parent_run_id)}


def _edited_output_into(prepared: Prepared) -> Callable[[Any], None]:
    """A sink that keeps what the root was shown of the fork's edited turn (its turn 1's cell)."""
    def sink(event: Any) -> None:
        if event.type == "CellExecuted" and event.call_id == _EDITED_CELL:
            prepared.edited_output = event.output_for_model
    return sink
