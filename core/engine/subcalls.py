"""Serving the REPL's sub-calls: llm_query(_batched) and rlm_query(_batched).

The worker sends one `sub_call` per llm_query / batch; each prompt becomes one
call here, run concurrently (bounded by the run's semaphore; nested RLMs by
their own, RunConfig.nested_concurrency), each attempt reserving its worst-case
cost first (core/engine/costs.py). A slot's result is {"ok": text} or
{"error": {"type", "message"}}; the worker turns errors into an exception
(single call) or an "[error: ...]" string (batch).

Every slot handed out is in the record: SubCallStarted, then SubCallFinished with
`error_type` set to the type the REPL saw (None when ok), whether the slot was
served, denied at the approval gate (ApprovalDenied), refused by a cap
(BudgetExceeded), too large for the model (ContextWindowExceeded), switched off
at depth 0 (SubCallsOff), failed (SubCallError) or cancelled (Cancelled). So a
replay serves exactly what the engine handed out, without reading prose.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from typing import Any, Iterator

from core import events as ev
from core.call_ids import CallId
from core.engine.budget import BudgetExceeded, Tally
from core.engine.costs import CallMeter, first_root_messages, nested_question, sub_messages, worst_case
from core.engine.outcome import TextDocument

log = logging.getLogger(__name__)

NESTED_QUESTION_CHARS = 2000
START_SLICE = 32          # sub-calls of one batch started per pass of the event loop


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


def approval_info(ctx: Any, prompts: list[str], nested: bool, model: str | None, parent: str,
                  depth: int, context: str | None = None) -> dict[str, Any]:
    """What the approver is shown: {run_id, parent_id, depth, kind, model, calls, input_chars,
    worst_case_usd, spent_usd, cap_usd}."""
    cfg = ctx.config
    from core.routing import allowed_sub_models
    model = cfg.root_model if nested else allowed_sub_models(cfg).get(model or cfg.sub_model, model)
    worst = sum(slot_worst_case(ctx, p, nested, model, depth, context).usd for p in prompts)
    return {"run_id": ctx.run_id, "parent_id": parent, "depth": depth, "kind": "rlm" if nested else "llm",
            "model": model, "calls": len(prompts), "input_chars": sum(len(p) for p in prompts),
            "worst_case_usd": worst, "spent_usd": ctx.budget.spent_usd, "cap_usd": ctx.budget.max_cost_usd}




def slot_worst_case(ctx: Any, prompt: str, nested: bool, model: str, depth: int,
                    context: str | None = None) -> Any:
    """A slot's worst case (costs.WorstCase): a plain call's, or a nested RLM's first
    root call (the least it will spend; its later calls reserve as they come)."""
    cfg = ctx.config
    if not nested:
        return worst_case(ctx.prices, model, sub_messages(prompt), cfg.sub_max_tokens)
    from core.engine.prompts import PREFIX_CHARS
    question, text = nested_question(prompt, context, NESTED_QUESTION_CHARS)
    prefix = f"=== context ===\n{text[:PREFIX_CHARS]}"[:PREFIX_CHARS]
    messages = first_root_messages(cfg, question, [("context", len(text))], prefix, depth=depth + 1)
    return worst_case(ctx.prices, cfg.root_model, messages, cfg.root_max_tokens)


class SubCaller:
    """The sub-calls of one Rlm (core/engine/rlm.py). A nested RLM is built as another of
    the same class (`type(rlm)`), so this module does not import rlm.py (no import circle)."""

    def __init__(self, rlm: Any) -> None:
        self.rlm = rlm
        self.ctx = rlm.ctx
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task] = set()
        self._batches: set[asyncio.Task] = set()     # handle() calls still starting or awaiting theirs
        # A fork's edited cell (core/engine/edited_turn.py): (its cell id, the stored turn's
        # answers, core.engine.recorded.RecordedSlots).
        self.from_record: tuple[str, Any] | None = None

    @contextlib.contextmanager
    def answering_from(self, cell_id: str, recorded: Any) -> Iterator[None]:
        """While a fork's edited cell `cell_id` runs, its sub-calls whose prompt the stored
        turn asked are answered from `recorded` (None: every sub-call goes live)."""
        self.from_record = (cell_id, recorded) if recorded is not None else None
        try:
            yield
        finally:
            self.from_record = None

    async def handle(self, request: Any) -> list[dict[str, Any]]:
        """ReplClient's on_sub_call: one request, many prompts, results in order. The slots
        belong to the cell that made the request (request.cell, carried from the worker),
        not to whichever cell runs when it arrives."""
        parent = getattr(request, "cell", None) or self.rlm.current_parent
        kind = request.kind
        cfg = self.ctx.config
        prompts = list(request.prompts)
        if not self.rlm.can_llm:
            msg = "sub-calls are switched off in this run (depth 0): solve it with code"
            model = cfg.root_model if kind == "rlm" else (request.model or cfg.sub_model)
            return [self.slot_error(kind, model, p, parent, "error", "SubCallsOff", msg) for p in prompts]
        nested = kind == "rlm" and self.rlm.can_rlm
        if kind == "rlm" and not nested and request.context:
            # At the depth limit rlm_query is a plain llm_query: the sub model must see the context.
            prompts = [f"{p}\n\n{request.context}" for p in prompts]
        recorded = self._recorded(request, prompts, parent, nested)
        if recorded:                   # a fork's edited cell: the stored turn's prompts are not sent again
            live = [i for i in range(len(prompts)) if i not in recorded]
            if not live:
                return [recorded[i] for i in range(len(prompts))]
            answered = iter(await self._live(request, [prompts[i] for i in live], nested, parent))
            return [recorded[i] if i in recorded else next(answered) for i in range(len(prompts))]
        return await self._live(request, prompts, nested, parent)

    def _recorded(self, request: Any, prompts: list[str], parent: str, nested: bool
                  ) -> dict[int, dict[str, Any]]:
        """In a fork's edited cell, the slots the stored turn answered (by position), each
        recorded here as a call answered from the record: no model call, nothing spent."""
        if self.from_record is None or self.from_record[0] != parent:
            return {}
        recorded = self.from_record[1]
        kind = "rlm" if nested else "llm"
        cfg = self.ctx.config
        found: dict[int, dict[str, Any]] = {}
        for index, prompt in enumerate(request.prompts):
            slot = recorded.answer(prompt, request.kind, request.context)
            if slot is None:
                continue
            call_id = CallId.for_sub(self.rlm.rlm_id, next(self._ids))
            model = cfg.root_model if nested else (request.model or cfg.sub_model)
            error = slot.get("error") or {}
            self.ctx.emit(ev.SubCallStarted, call_id=call_id, parent_id=parent, kind=kind, model=model,
                          prompt=prompts[index], depth=self.rlm.depth)
            self.ctx.emit(ev.SubCallFinished, call_id=call_id, parent_id=parent, kind=kind, model=model,
                          status="ok" if "ok" in slot else "error", response=slot.get("ok"),
                          error=error.get("message"), error_type=error.get("type"), input_tokens=0,
                          output_tokens=0, cost_usd=0.0, duration_ms=0, from_record=True)
            found[index] = slot
        return found

    async def _live(self, request: Any, prompts: list[str], nested: bool, parent: str) -> list[dict[str, Any]]:
        """`prompts` sent: the approval gate, then each a concurrent call (or nested RLM)."""
        cfg = self.ctx.config
        try:
            approved = self._model_refused(nested, request.model) or \
                await self._approved(prompts, nested, request.model, parent, request.context)
        except Exception as exc:      # the approver's own failure: every slot is still in the record
            log.exception("the approver failed on a batch of %d sub-call(s)", len(prompts))
            msg = f"the approval of this batch failed ({type(exc).__name__}: {exc}); no call was made"
            kind_of = "rlm" if nested else "llm"
            model = cfg.root_model if nested else (request.model or cfg.sub_model)
            return [self.slot_error(kind_of, model, p, parent, "error", "ApprovalError", msg) for p in prompts]
        if not approved:
            msg = (f"the user did not approve this batch of {len(prompts)} sub-call(s); "
                   "make fewer or smaller calls, or finish with what you have")
            kind_of = "rlm" if nested else "llm"
            model = cfg.root_model if nested else (request.model or cfg.sub_model)
            return [self.slot_error(kind_of, model, p, parent, "refused", "ApprovalDenied", msg)
                    for p in prompts]
        tasks: list[asyncio.Task] = []
        batch = asyncio.current_task()
        if batch is not None:
            self._batches.add(batch)
        try:
            # Started a slice per loop pass: each call's first step (admission, its event, its
            # request being built) runs up to its first wait, so 500 at once held the loop for
            # a second; between slices the loop serves replies, Stop and other threads.
            for start in range(0, len(prompts), START_SLICE):
                if start:
                    await asyncio.sleep(0)
                chunk = [asyncio.ensure_future(self._nested(p, request.context, parent) if nested
                                               else self._llm(p, request.model, parent))
                         for p in prompts[start:start + START_SLICE]]
                tasks.extend(chunk)
                self._tasks.update(chunk)
            return list(await asyncio.gather(*tasks))
        except asyncio.CancelledError:
            for task in tasks:             # cancelled while starting them: the started ones end too
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            self._tasks.difference_update(tasks)
            self._batches.discard(batch)

    def slot_error(self, kind: str, model: str, prompt: str, parent: str, status: str,
                   error_type: str, message: str) -> dict[str, Any]:
        """A slot the engine answers without a model call: recorded like any other."""
        call_id = CallId.for_sub(self.rlm.rlm_id, next(self._ids))
        self.ctx.emit(ev.SubCallStarted, call_id=call_id, parent_id=parent, kind=kind, model=model,
                      prompt=prompt, depth=self.rlm.depth)
        self.ctx.emit(ev.SubCallFinished, call_id=call_id, parent_id=parent, kind=kind, model=model,
                      status=status, response=None, error=message, error_type=error_type,
                      input_tokens=0, output_tokens=0, cost_usd=0.0, duration_ms=0)
        return _error(error_type, message)

    async def cancel_all(self) -> None:
        # the batches first: one still starting its slices starts no more
        me = asyncio.current_task()
        batches = [b for b in self._batches if not b.done() and b is not me]
        for batch in batches:
            batch.cancel()
        tasks = [t for t in self._tasks if not t.done()] + batches
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _approved(self, prompts: list[str], nested: bool, model: str | None, parent: str,
                        context: str | None = None) -> bool:
        """The approval gate (RunConfig.approve_batch_calls / approve_batch_usd / approver)."""
        ctx, cfg = self.ctx, self.ctx.config
        if cfg.approve_batch_calls is None and cfg.approve_batch_usd is None:
            return True
        info = approval_info(ctx, prompts, nested, model, parent, self.rlm.depth, context)
        over_calls = cfg.approve_batch_calls is not None and info["calls"] > cfg.approve_batch_calls
        over_usd = cfg.approve_batch_usd is not None and info["worst_case_usd"] > cfg.approve_batch_usd
        if not (over_calls or over_usd):
            return True
        what = f"a batch of {info['calls']} sub-call(s) (worst case ${info['worst_case_usd']:.4f})"
        ctx.emit(ev.Notice, call_id=parent, parent_id=self.rlm.rlm_id, level="warning",
                 message=f"Waiting for approval: {what}.")
        if cfg.approver is None:
            approved, why = False, "nobody can approve it in this run"
        else:
            approved = bool(await cfg.approver(info))
            why = "approved" if approved else "denied"
        ctx.emit(ev.Notice, call_id=parent, parent_id=self.rlm.rlm_id, level="info" if approved else "warning",
                 message=f"{what[0].upper()}{what[1:]}: {why}.")
        return approved

    def _model_refused(self, nested: bool, model: str | None) -> bool:
        """A model= this run may not call: its slots are refused without asking for approval."""
        from core.routing import allowed_sub_models
        return not nested and model is not None and model not in allowed_sub_models(self.ctx.config)

    # -- one plain sub-call --------------------------------------------------------
    async def _llm(self, prompt: str, model: str | None, parent: str) -> dict[str, Any]:
        from core.engine.admission import admit_sub_call
        ctx, cfg = self.ctx, self.ctx.config
        admission = await admit_sub_call(ctx, model, prompt)   # model, price, window: before any event
        model = admission.model
        call_id = CallId.for_sub(self.rlm.rlm_id, next(self._ids))
        ctx.emit(ev.SubCallStarted, call_id=call_id, parent_id=parent, kind="llm", model=model,
                 prompt=admission.prompt, depth=self.rlm.depth)
        started = time.monotonic()
        messages = sub_messages(prompt)
        meter = CallMeter(ctx, model, messages, cfg.sub_max_tokens, tally=self.rlm.tally,
                          keep_usd=lambda: ctx.root_reserve_usd,
                          on_wait=lambda waiting, worst: ctx.emit(
                              ev.SubCallWaiting, call_id=call_id, parent_id=parent, waiting=waiting,
                              worst_usd=round(worst, 10)))

        def finish(status: str, response: str | None = None, error: str | None = None,
                   error_type: str | None = None, finish_reason: str | None = None) -> dict[str, Any]:
            ctx.emit(ev.SubCallFinished, call_id=call_id, parent_id=parent, kind="llm", model=model,
                     status=status, response=response, error=error, error_type=error_type,
                     input_tokens=meter.input_tokens, output_tokens=meter.output_tokens,
                     cost_usd=meter.cost_usd, duration_ms=int((time.monotonic() - started) * 1000),
                     usage_estimated=meter.estimated, shortened_to=meter.shortened_to,
                     finish_reason=finish_reason)
            return {"ok": response} if error_type is None else _error(error_type, error or status)

        if admission.refused:
            return finish(admission.status, error=admission.message, error_type=admission.error_type)
        try:
            ctx.budget.count_sub_call()
        except BudgetExceeded as exc:
            self._refused(exc)
            return finish("refused", error=str(exc), error_type="BudgetExceeded")
        try:
            async with ctx.sub_semaphore:
                reply = await ctx.llm.complete(model, messages, max_tokens=cfg.sub_max_tokens,
                                               reasoning_effort=cfg.reasoning_effort.get(model), meter=meter)
        except asyncio.CancelledError:
            finish("cancelled", error="cancelled: the cell that made it ended", error_type="Cancelled")
            raise
        except BudgetExceeded as exc:
            self._refused(exc)
            return finish("refused", error=str(exc), error_type="BudgetExceeded")
        except Exception as exc:
            from core.llm.errors import LLMError
            if not isinstance(exc, LLMError):
                log.exception("sub-call %s failed unexpectedly", call_id)
            return finish("error", error=str(exc) or type(exc).__name__, error_type="SubCallError")
        if meter.shortened_to is not None and reply.finish_reason == "length":
            from core.engine.prompts import sub_cut_by_cap
            note = sub_cut_by_cap(meter.shortened_to, cfg.sub_max_tokens)
            self._note_once(note[:24], note)
        return finish("ok", response=reply.text, finish_reason=reply.finish_reason)

    def _note_once(self, mark: str, note: str) -> None:
        if not any(n.startswith(mark) for n in self.rlm.turn_notes):
            self.rlm.turn_notes.append(note)

    def _refused(self, exc: BudgetExceeded) -> None:
        ctx = self.ctx
        ctx.cap_hit = ctx.cap_hit or exc.cap
        from core.engine.prompts import sub_refused
        note = sub_refused(str(exc))
        self._note_once(note[:26], note)

    # -- a nested RLM --------------------------------------------------------------
    async def _nested(self, prompt: str, context: str | None, parent: str) -> dict[str, Any]:
        ctx = self.ctx
        call_id = CallId.for_sub(self.rlm.rlm_id, next(self._ids))
        model = ctx.config.root_model
        ctx.emit(ev.SubCallStarted, call_id=call_id, parent_id=parent, kind="rlm",
                 model=model, prompt=prompt, depth=self.rlm.depth)
        started = time.monotonic()
        tally = Tally(parent=self.rlm.tally)      # this nested RLM's subtree, rolling up to ours

        def finish(status: str, response: str | None, error: str | None,
                   error_type: str | None = None) -> dict[str, Any]:
            ctx.emit(ev.SubCallFinished, call_id=call_id, parent_id=parent, kind="rlm",
                     model=model, status=status, response=response, error=error, error_type=error_type,
                     input_tokens=tally.input_tokens, output_tokens=tally.output_tokens,
                     cost_usd=0.0, subtree_cost_usd=tally.cost_usd,
                     duration_ms=int((time.monotonic() - started) * 1000))
            return {"ok": response} if error_type is None else _error(error_type, error or status)

        try:
            ctx.budget.count_sub_call()
        except BudgetExceeded as exc:
            self._refused(exc)
            return finish("refused", None, str(exc), "BudgetExceeded")
        question, text = nested_question(prompt, context, NESTED_QUESTION_CHARS)
        ctx.nested_waiting += 1
        ctx.budget_changed()
        try:
            waiting = True
            async with ctx.nested_slots:           # nested RLMs have their own limit; more wait here
                waiting = False
                ctx.nested_waiting -= 1
                ctx.nested_running += 1
                ctx.budget_changed()
                try:
                    child = type(self.rlm)(ctx, rlm_id=call_id, parent_id=parent, depth=self.rlm.depth + 1,
                                question=question, documents=[TextDocument("context", text)], tally=tally)
                    outcome = await child.solve()
                finally:
                    ctx.nested_running -= 1
                    ctx.budget_changed()
        except asyncio.CancelledError:
            if waiting:
                ctx.nested_waiting -= 1
                ctx.budget_changed()
            finish("cancelled", None, "cancelled: the cell that made it ended", "Cancelled")
            raise
        except Exception as exc:
            from core.llm.errors import LLMError
            if waiting:
                ctx.nested_waiting -= 1
                ctx.budget_changed()
            if not isinstance(exc, LLMError):
                log.exception("nested RLM %s failed", call_id)
            return finish("error", None, f"nested RLM failed: {exc}", "SubCallError")
        if outcome.answer is None:
            return finish("error", None, f"nested RLM gave no answer: {outcome.error}", "SubCallError")
        return finish("ok", outcome.answer, None)
