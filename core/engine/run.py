"""Engine: runs one question over documents as an RLM and reports everything as events.

    engine = Engine(config, emit=sink, key_for=keys.key_for_model)
    result = await engine.run(question, documents)     # engine.cancel() from any callback

The Engine owns the per-run state (one `RunContext`, shared by the whole
recursion tree and only touched from the event loop), starts the top-level
`Rlm`, enforces the wall-clock cap and turns cancellation into a clean
`RunFailed(status="cancelled")` that keeps everything already emitted.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from core import events as ev
from core.config import RunConfig
from core.engine.budget import Budget
from core.engine.context import Counters, EventSink, RunContext  # noqa: F401  (named here before)
from core.engine.outcome import RlmOutcome
from core.engine.prepare import ConfigError, check_config, run_models  # noqa: F401  (ConfigError: named here before)
from core.engine.shared_budget import run_budget
from core.engine.rlm import Rlm
from core.repl.context_file import chars_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunResult:
    run_id: str
    status: str                  # finished | capped | failed | cancelled
    answer: str | None
    error: str | None
    totals: dict[str, Any]
    started_at: float
    finished_at: float
    session: Any = None          # rlm.Session when the engine was asked to keep it
    store_error: str | None = None   # set by whoever stored the run when its record is incomplete


class Engine:
    def __init__(self, config: RunConfig, *, emit: EventSink, key_for: Callable[[str], str | None],
                 run_id: str | None = None, llm: Any = None, worker_command: list[str] | None = None,
                 version: str = "", parent_run_id: str | None = None,
                 keep_session: bool = False, evaluation_id: str | None = None,
                 forked_from: dict[str, Any] | None = None, shared_budget: Budget | None = None) -> None:
        self.config = config
        self._shared_budget = shared_budget   # a grid's budget every call also reserves from
        self.run_id = run_id or uuid.uuid4().hex
        self._emit = emit
        self._key_for = key_for
        self._llm = llm
        self._worker_command = worker_command
        self._version = version
        self._parent_run_id = parent_run_id
        self._forked_from = forked_from
        self._evaluation_id = evaluation_id
        self._keep_session = keep_session
        self._task: asyncio.Task | None = None
        self._cancel_requested = False

    def unpriced(self, prices: Any) -> list[str]:
        """The run's models that have no known price: their cost is unknown, never $0."""
        return sorted(m for m in run_models(self.config) if prices.price(m) is None)

    @property
    def budget(self) -> Budget | None:
        """The live budget of the run in progress (None before it starts)."""
        ctx = getattr(self, "_ctx", None)
        return ctx.budget if ctx is not None else None

    def notice(self, level: str, message: str) -> None:
        """Tell the run something from outside the engine (a sink that failed): a Notice
        event, emitted on the loop after the event being delivered now."""
        ctx = getattr(self, "_ctx", None)
        if ctx is None:
            log.warning("%s", message)
            return
        try:
            asyncio.get_running_loop().call_soon(
                lambda: ctx.emit(ev.Notice, call_id="R", level=level, message=message))
        except RuntimeError:
            log.warning("%s", message)

    def cancel(self) -> None:
        """Stop the run: in-flight calls are cancelled, workers killed, the transcript kept."""
        self._cancel_requested = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def run(self, question: str, documents: Sequence[Any], *, session: Any = None,
                  follow_up: bool = False) -> RunResult:
        """Answer `question`. With `session` (rlm.Session) the top-level RLM continues in
        that live REPL and conversation: `follow_up=True` asks a new question there; without
        it the conversation goes on as it stands (a fork)."""
        prices = check_config(self.config, None if session is not None else list(documents))
        if self._llm is None:
            from core.llm.client import ModelClient
            self._llm = ModelClient(key_for=self._key_for, api_base_for=self.config.api_base_for,
                                    max_retries=self.config.max_retries,
                                    timeout_s=self.config.request_timeout_s)
        started = time.monotonic()
        ctx = RunContext(
            run_id=self.run_id, config=self.config, emit_event=self._emit, llm=self._llm, prices=prices,
            budget=run_budget(self.config, self._shared_budget),
            sub_semaphore=asyncio.Semaphore(self.config.concurrency),
            nested_slots=asyncio.Semaphore(self.config.nested_limit()),
            deadline=(started + self.config.max_wall_seconds) if self.config.max_wall_seconds else None,
            worker_command=self._worker_command)
        ctx.unpriced = self.unpriced(prices)
        ctx.budget._on_change = ctx.budget_changed
        from core.support import SupportCorpus
        ctx.support = SupportCorpus(question, getattr(session, "messages", None) or ())
        ctx.budget.on_first = ctx.budget_notice
        self._ctx = ctx
        docs = list(documents)
        ctx.emit(ev.RunStarted, call_id="R", question=question, root_model=self.config.root_model,
                 sub_model=self.config.sub_model, config=self.config.public_dict(),
                 documents=[{"path": d.path, "chars": chars_of(d)} for d in docs],
                 total_chars=sum(map(chars_of, docs)), version=self._version,
                 parent_run_id=self._parent_run_id, unpriced_models=ctx.unpriced,
                 evaluation_id=self._evaluation_id, forked_from=self._forked_from)
        started_at = time.time()
        root = Rlm(ctx, rlm_id="R", parent_id=None, depth=0, question=question, documents=docs,
                   session=session, follow_up=follow_up, keep_repl=self._keep_session)
        from core.engine import mode
        # The mode is chosen inside the run's task: asking the server for the model's window
        # (about 1 s at most) is then cut short by a Stop like any other step.
        choice = mode.Chosen(mode.ModeChoice("rlm", "the RLM (stopped before the mode was chosen)"))

        async def work() -> Any:
            choice.value = await mode.choose_with_server(self.config, prices, question, docs, session=session)
            if choice.value.mode == "direct" or (self.config.mode == "auto" and session is None):
                ctx.emit(ev.Notice, call_id="R", level="info", message=choice.value.sentence())   # which, and why
            if choice.value.mode == "rlm":
                return await root.solve()
            return await mode.run_direct(ctx, choice.value, question, docs)
        self._task = asyncio.ensure_future(self._guarded(ctx, root, work))
        if self._cancel_requested:
            self._task.cancel()
        # The ending (the run's task awaited, nested workers closed, RunFinished/RunFailed
        # emitted, a session closed) is one task that no cancel cuts short: a cancel of our
        # caller (Ctrl+C in asyncio.run) or a second Stop only cancels the run's own task,
        # and the caller's cancellation goes on once the run is recorded.
        ending = asyncio.ensure_future(self._end(ctx, root, started, started_at, choice, docs))
        caller_cancelled = False
        while not ending.done():
            try:
                await asyncio.wait({ending})
            except asyncio.CancelledError:
                caller_cancelled = caller_cancelled or not self._cancel_requested
                if not self._task.done():
                    self._task.cancel()
        result = ending.result()
        if caller_cancelled:
            raise asyncio.CancelledError
        return result

    async def _end(self, ctx: RunContext, root: Rlm, started: float, started_at: float, choice: Any,
                   docs: Sequence[Any]) -> RunResult:
        assert self._task is not None
        outcome: RlmOutcome | None = None
        error: str | None = None
        status: str
        try:
            outcome = await self._task
            status = outcome.status
            error = outcome.error
        except asyncio.CancelledError:
            status, error = "cancelled", "cancelled by the user"
        except Exception as exc:
            from core.llm.errors import LLMError
            from core.repl.client import ReplError
            if isinstance(exc, LLMError):      # the root model could not be reached or refused us
                status, error = "failed", str(exc)
            elif isinstance(exc, ReplError):   # no worker could be started at all
                status, error = "failed", f"the REPL worker could not run: {exc}"
            else:                              # an engine bug: a failed run, the transcript kept
                log.exception("run %s failed", self.run_id)
                status, error = "failed", f"internal error: {type(exc).__name__}: {exc}"
        answer = outcome.answer if outcome else None
        if ctx.closing:
            await asyncio.gather(*ctx.closing, return_exceptions=True)
        if ctx._budget_pending:
            ctx._emit_budget()
        totals = ctx.totals(started)
        totals["mode"], totals["mode_reason"] = choice.value.mode, choice.value.reason
        self._check_support(ctx, answer, docs, totals)
        # What the run read (its prompts and outputs: its largest texts) is needed no more; the
        # run's objects may wait for the cyclic collector, its texts do not (a grid runs thousands).
        ctx.support = None
        if status in ("finished", "capped"):
            ctx.emit(ev.RunFinished, call_id="R", status=status, answer=answer, totals=totals)
        else:
            ctx.emit(ev.RunFailed, call_id="R", status=status, error=error or status, answer=answer,
                     totals=totals)
        kept = root.session() if self._keep_session and status != "cancelled" else None
        if self._keep_session and kept is None and root.repl is not None:
            await root._close_repl()
        return RunResult(run_id=self.run_id, status=status, answer=answer, error=error, totals=totals,
                         started_at=started_at, finished_at=time.time(), session=kept)

    @staticmethod
    def _check_support(ctx: RunContext, answer: str | None, docs: Sequence[Any], totals: dict) -> None:
        """totals["unsupported"]: the values the answer states that nothing the run read holds
        (core/support.py), told in a warning; [] when all are supported."""
        if not answer or not answer.strip():
            return
        from core.ingest.citations import cited_passages
        from core.support import describe
        try:
            support = ctx.support.check(answer, cited_passages(answer, docs))
        except Exception:                 # a checker bug must not cost the run its answer
            log.exception("checking the answer of run %s failed", ctx.run_id)
            return
        totals["support_values"] = len(support.values)
        totals["unsupported"] = list(support.unsupported)
        if support.unsupported:
            ctx.emit(ev.Notice, call_id="R", level="warning",
                     message=f"The answer states {describe(support.unsupported)}.")

    async def _guarded(self, ctx: RunContext, root: Rlm, work: Callable[[], Any]) -> RlmOutcome:
        left = ctx.time_left()
        if left is None:
            return await work()
        try:
            return await asyncio.wait_for(work(), timeout=max(left, 0.0))
        except asyncio.TimeoutError:
            ctx.cap_hit = ctx.cap_hit or "wall_time"
            return RlmOutcome(answer=root.answer_at_cap(), status="capped",
                              error=f"wall-clock cap reached ({self.config.max_wall_seconds:g} s)")
