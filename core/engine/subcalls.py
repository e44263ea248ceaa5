"""Serving the REPL's sub-calls: llm_query(_batched) and rlm_query(_batched).

The worker sends one `sub_call` per llm_query / batch; each prompt becomes one
call here, run concurrently (bounded by the run's semaphore), each reserving
its worst-case cost first. A slot's result is {"ok": text} or
{"error": {"type", "message"}}; the worker turns errors into an exception
(single call) or an "[error: ...]" string (batch).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import TYPE_CHECKING, Any

from core import events as ev
from core.engine.budget import BudgetExceeded

if TYPE_CHECKING:
    from core.engine.rlm import Rlm

log = logging.getLogger(__name__)

NESTED_QUESTION_CHARS = 2000


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


def approval_info(ctx: Any, prompts: list[str], nested: bool, model: str | None, parent: str,
                  depth: int) -> dict[str, Any]:
    """What the approver is shown: {run_id, parent_id, depth, kind, model, calls, input_chars,
    worst_case_usd, spent_usd, cap_usd}."""
    cfg = ctx.config
    from core.routing import allowed_sub_models
    model = cfg.root_model if nested else allowed_sub_models(cfg).get(model or cfg.sub_model, model)
    max_tokens = cfg.root_max_tokens if nested else cfg.sub_max_tokens
    worst = sum(ctx.prices.worst_case_usd(model, [{"role": "user", "content": p}], max_tokens) for p in prompts)
    return {"run_id": ctx.run_id, "parent_id": parent, "depth": depth, "kind": "rlm" if nested else "llm",
            "model": model, "calls": len(prompts), "input_chars": sum(len(p) for p in prompts),
            "worst_case_usd": worst, "spent_usd": ctx.budget.spent_usd, "cap_usd": ctx.budget.max_cost_usd}


class SubCaller:
    def __init__(self, rlm: "Rlm") -> None:
        self.rlm = rlm
        self.ctx = rlm.ctx
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task] = set()

    async def handle(self, request: Any) -> list[dict[str, Any]]:
        """ReplClient's on_sub_call: one request, many prompts, results in order."""
        parent = self.rlm.current_parent
        kind = request.kind
        if not self.rlm.can_llm:
            msg = "sub-calls are switched off in this run (depth 0): solve it with code"
            return [_error("SubCallError", msg) for _ in request.prompts]
        nested = kind == "rlm" and self.rlm.can_rlm
        prompts = list(request.prompts)
        if kind == "rlm" and not nested and request.context:
            # At the depth limit rlm_query is a plain llm_query: the sub model must see the context.
            prompts = [f"{p}\n\n{request.context}" for p in prompts]
        if not self._model_refused(nested, request.model) and \
                not await self._approved(prompts, nested, request.model, parent):
            msg = (f"the user did not approve this batch of {len(prompts)} sub-call(s); "
                   "make fewer or smaller calls, or finish with what you have")
            return [_error("ApprovalDenied", msg) for _ in prompts]
        coros = [self._nested(p, request.context, parent) if nested
                 else self._llm(p, request.model, parent) for p in prompts]
        tasks = [asyncio.ensure_future(c) for c in coros]
        self._tasks.update(tasks)
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            self._tasks.difference_update(tasks)

    async def cancel_all(self) -> None:
        tasks = [t for t in self._tasks if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _approved(self, prompts: list[str], nested: bool, model: str | None, parent: str) -> bool:
        """The approval gate (RunConfig.approve_batch_calls / approve_batch_usd / approver)."""
        ctx, cfg = self.ctx, self.ctx.config
        if cfg.approve_batch_calls is None and cfg.approve_batch_usd is None:
            return True
        info = approval_info(ctx, prompts, nested, model, parent, self.rlm.depth)
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
        call_id = f"{self.rlm.rlm_id}.s{next(self._ids)}"
        ctx.emit(ev.SubCallStarted, call_id=call_id, parent_id=parent, kind="llm", model=model,
                 prompt=admission.prompt, depth=self.rlm.depth)
        started = time.monotonic()

        def finish(status: str, response: str | None = None, error: str | None = None,
                   tokens: tuple[int, int] = (0, 0), cost: float = 0.0) -> None:
            ctx.emit(ev.SubCallFinished, call_id=call_id, parent_id=parent, kind="llm", model=model,
                     status=status, response=response, error=error, input_tokens=tokens[0],
                     output_tokens=tokens[1], cost_usd=cost,
                     duration_ms=int((time.monotonic() - started) * 1000))

        if admission.refused:
            finish(admission.status, error=admission.message)
            return admission.slot()
        messages = [{"role": "user", "content": prompt}]
        try:
            ctx.budget.count_sub_call()
            worst = ctx.prices.worst_case_usd(model, messages, cfg.sub_max_tokens) \
                if ctx.budget.max_cost_usd is not None else 0.0
            reservation = await ctx.budget.acquire(worst, keep_usd=ctx.root_reserve_usd)
        except BudgetExceeded as exc:
            self._refused(exc)
            finish("refused", error=str(exc))
            return _error("BudgetExceeded", str(exc))
        try:
            async with ctx.sub_semaphore:
                reply = await ctx.llm.complete(model, messages, max_tokens=cfg.sub_max_tokens,
                                               reasoning_effort=cfg.reasoning_effort.get(model))
        except asyncio.CancelledError:
            ctx.budget.release(reservation)
            finish("cancelled", error="cancelled")
            raise
        except Exception as exc:
            ctx.budget.release(reservation)
            from core.llm.errors import LLMError
            if not isinstance(exc, LLMError):
                log.exception("sub-call %s failed unexpectedly", call_id)
            msg = str(exc) or type(exc).__name__
            finish("error", error=msg)
            return _error("SubCallError", msg)
        cost = ctx.prices.cost_usd(model, reply.input_tokens, reply.output_tokens)
        ctx.budget.settle(reservation, cost, reply.input_tokens, reply.output_tokens)
        finish("ok", response=reply.text, tokens=(reply.input_tokens, reply.output_tokens), cost=cost)
        return {"ok": reply.text}

    def _refused(self, exc: BudgetExceeded) -> None:
        ctx = self.ctx
        ctx.cap_hit = ctx.cap_hit or exc.cap
        note = (f"Some sub-calls were refused: {exc}. Stop making sub-calls and finish now with "
                "FINAL(...) or FINAL_VAR(...) using what you have.")
        if not any(n.startswith("Some sub-calls were refused") for n in self.rlm.turn_notes):
            self.rlm.turn_notes.append(note)

    # -- a nested RLM --------------------------------------------------------------
    async def _nested(self, prompt: str, context: str | None, parent: str) -> dict[str, Any]:
        from core.engine.rlm import Rlm, TextDocument
        ctx = self.ctx
        call_id = f"{self.rlm.rlm_id}.s{next(self._ids)}"
        ctx.emit(ev.SubCallStarted, call_id=call_id, parent_id=parent, kind="rlm",
                 model=ctx.config.root_model, prompt=prompt, depth=self.rlm.depth)
        started = time.monotonic()
        spent_before = ctx.budget.spent_usd
        tokens_before = (ctx.budget.input_tokens, ctx.budget.output_tokens)

        def finish(status: str, response: str | None, error: str | None) -> None:
            b = ctx.budget
            ctx.emit(ev.SubCallFinished, call_id=call_id, parent_id=parent, kind="rlm",
                     model=ctx.config.root_model, status=status, response=response, error=error,
                     input_tokens=b.input_tokens - tokens_before[0],
                     output_tokens=b.output_tokens - tokens_before[1],
                     cost_usd=b.spent_usd - spent_before,
                     duration_ms=int((time.monotonic() - started) * 1000))

        try:
            ctx.budget.count_sub_call()
        except BudgetExceeded as exc:
            self._refused(exc)
            finish("refused", None, str(exc))
            return _error("BudgetExceeded", str(exc))
        if context is None:
            text = prompt
            question = prompt if len(prompt) <= NESTED_QUESTION_CHARS else (
                f"The task and its material are in `context` ({len(prompt):,} characters). "
                f"It begins:\n{prompt[:NESTED_QUESTION_CHARS // 2]}")
        else:
            text, question = context, prompt
        child = Rlm(ctx, rlm_id=call_id, parent_id=parent, depth=self.rlm.depth + 1,
                    question=question, documents=[TextDocument("context", text)])
        try:
            outcome = await child.solve()
        except asyncio.CancelledError:
            finish("cancelled", None, "cancelled")
            raise
        except Exception as exc:
            from core.llm.errors import LLMError
            if not isinstance(exc, LLMError):
                log.exception("nested RLM %s failed", call_id)
            finish("error", None, str(exc))
            return _error("SubCallError", f"nested RLM failed: {exc}")
        if outcome.answer is None:
            finish("error", None, outcome.error or "no answer")
            return _error("SubCallError", f"nested RLM gave no answer: {outcome.error}")
        finish("ok", outcome.answer, None)
        return {"ok": outcome.answer}
