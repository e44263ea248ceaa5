"""Whether one plain sub-call may be sent, decided before any of its events are written.

    admission = await admit_sub_call(ctx, requested_model, prompt)
    if admission.refused: ...   # emit Started/Finished with admission.error, answer the slot

In this order:
  1. the model: `model=` may name only the run's root and sub models and the models the
     user enabled for sub-calls (core.routing.sub_call_model) -> "ModelNotAllowed";
  2. the price: under a dollar cap a model without a known price is refused at call time
     (a run checks its root and sub models at start; a model named in `model=` is only
     known now) -> "PriceUnknown";
  3. the window: the prompt must fit the model's context window (RunConfig.context_windows,
     else litellm's model info) with room left for the answer -> "ContextWindowExceeded",
     with the numbers.

Counting tokens of a huge prompt is slow, so the window check first tries two cheap
bounds: more than MAX_CHARS_PER_TOKEN characters per window token proves it cannot fit
(no encoding, no counting), and its UTF-8 bytes (every token covers at least one byte)
prove a prompt fits; only in between are tokens estimated (in a thread when the prompt is
large, off the event loop). A refused prompt is stored clipped (`stored_prompt`: its head
and a digest), so a 300 MB prompt does not go into the run's events.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from core.blocking import run_blocking
from core.llm.pricing import worst_case_input_tokens
from core.routing import NOT_ALLOWED_MARK, ModelNotAllowed, sub_call_model

MAX_CHARS_PER_TOKEN = 32      # no tokenizer packs more than this into one token of real text
STORED_PROMPT_CHARS = 4000    # a refused prompt longer than this is stored as its head + a digest
COUNT_IN_THREAD_CHARS = 200_000
NO_PRICE_MARK = "no price is known for "


@dataclass(frozen=True)
class Admission:
    model: str                    # what the events name: the litellm model, or the name asked for
    prompt: str                   # what the events store
    error_type: str | None = None
    message: str | None = None
    status: str = "ok"            # "ok" | "refused" | "error" (SubCallFinished.status)

    @property
    def refused(self) -> bool:
        return self.error_type is not None

    def slot(self) -> dict[str, Any]:
        return {"error": {"type": self.error_type, "message": self.message}}


def refusal_type(message: str) -> str:
    """The slot error type of a refused sub-call from its recorded message (the events keep
    status and message only): ModelNotAllowed, PriceUnknown, or BudgetExceeded."""
    if NOT_ALLOWED_MARK in message:
        return "ModelNotAllowed"
    if message.startswith(NO_PRICE_MARK):
        return "PriceUnknown"
    return "BudgetExceeded"


def stored_prompt(prompt: str) -> str:
    """The form a refused prompt is stored in: itself when short, else its head and a digest."""
    if len(prompt) <= STORED_PROMPT_CHARS:
        return prompt
    digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()
    return (f"{prompt[:STORED_PROMPT_CHARS]}\n… [not stored: the prompt was refused before it was sent; "
            f"{len(prompt):,} characters in all, sha256 {digest}]")


def context_window(config: Any, prices: Any, model: str) -> int | None:
    """Max input tokens of `model`: the user's override, else litellm's model info."""
    override = (getattr(config, "context_windows", None) or {}).get(model)
    if override:
        return int(override)
    return prices.context_window(model)


async def admit_sub_call(ctx: Any, requested: str | None, prompt: str) -> Admission:
    cfg = ctx.config
    try:
        model = sub_call_model(requested, cfg)
    except ModelNotAllowed as exc:
        return Admission(str(requested)[:200], await _clipped(prompt), "ModelNotAllowed", str(exc), "refused")
    if ctx.budget.max_cost_usd is not None and ctx.prices.price(model) is None:
        msg = (f"{NO_PRICE_MARK}{model} and this run has a dollar cap "
               f"(${ctx.budget.max_cost_usd:g}), so the call was not sent; use the sub model "
               "(llm_query without model=), or the user gives the model a price in Settings")
        return Admission(model, await _clipped(prompt), "PriceUnknown", msg, "refused")
    window = context_window(cfg, ctx.prices, model)
    if window:
        problem = await _too_large(ctx, model, prompt, window, cfg.sub_max_tokens)
        if problem:
            return Admission(model, await _clipped(prompt), "ContextWindowExceeded", problem, "error")
    return Admission(model, prompt)


async def _clipped(prompt: str) -> str:
    """stored_prompt, off the loop for a prompt large enough that hashing it takes a while."""
    if len(prompt) > COUNT_IN_THREAD_CHARS:
        return await run_blocking(stored_prompt, prompt)
    return stored_prompt(prompt)


async def _too_large(ctx: Any, model: str, prompt: str, window: int, max_tokens: int) -> str | None:
    """Why `prompt` does not fit `window` (with room for the answer), or None when it fits."""
    messages = [{"role": "user", "content": prompt}]
    room = min(max_tokens, window // 4)
    if len(prompt) > MAX_CHARS_PER_TOKEN * window:
        need, how = -(-len(prompt) // 4), "estimated at 4 characters per token"
    elif worst_case_input_tokens(messages) + room <= window:
        return None
    else:
        if len(prompt) > COUNT_IN_THREAD_CHARS:
            need = await run_blocking(ctx.prices.estimate_tokens, model, messages)
        else:
            need = ctx.prices.estimate_tokens(model, messages)
        how = "estimated from its characters"
        if need + room <= window:
            return None
    return (f"prompt too large for {model}: {len(prompt):,} characters, about {need:,} tokens ({how}); "
            f"the model accepts {window:,} input tokens and {room:,} are kept for the answer. "
            "Split the text into smaller pieces")
