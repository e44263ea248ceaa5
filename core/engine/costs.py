"""The one worst case, and the meter that reserves it before every attempt.

    wc = worst_case(prices, model, messages, max_tokens)       # WorstCase: usd and its parts
    meter = CallMeter(ctx, model, messages, max_tokens, tally=rlm.tally)
    reply = await ctx.llm.complete(model, messages, max_tokens=..., meter=meter)
    meter.cost_usd, meter.input_tokens, meter.output_tokens    # all attempts of this call

`worst_case` is what the cost preview (the first root call), the approval gate (a
batch's slots) and the reservation (every attempt) all use: PriceBook.worst_case_usd
with its parts spelled out, so a call that cannot fit can be explained in numbers.
`first_root_messages` builds the exact messages of an RLM's first root call, for
the preview and for the gate's view of a nested RLM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from core.limits import CAP_NEEDED
from core.llm.pricing import worst_case_input_tokens

MIN_USEFUL_MAX_TOKENS = 256     # below this a root cannot write a cell and a final answer
# The floors a call's max_tokens may be lowered to so it fits under the dollar cap
# (Budget.acquire_call). A sub-call of 256 tokens still answers a question about a chunk
# in a few sentences; a root turn of 1,024 still holds a short cell or a final answer.
# Below its floor a call is refused instead: a reply cut shorter is rarely worth paying for.
SUB_FLOOR_TOKENS = 256
ROOT_FLOOR_TOKENS = 1024
# What sub-calls leave for the top-level root's next turn: that turn's worst case at its
# floor, but never more than this share of what is left of the cap. The worst case counts
# every byte of the feedback as a token (up to max_output_chars per cell: $0.05 of input
# at $2.5/M), which alone can be more than a small cap; the turn itself is reserved (and
# shortened or refused) when it is sent, so the reserve is a share, not a promise.
ROOT_RESERVE_SHARE = 0.5


def root_reserve(need_usd: float, cap_usd: float, spent_usd: float) -> float:
    """The reserve kept for the root's next turn (see ROOT_RESERVE_SHARE)."""
    return min(need_usd, ROOT_RESERVE_SHARE * max(cap_usd - spent_usd, 0.0))


@dataclass(frozen=True)
class WorstCase:
    model: str
    usd: float
    input_tokens: int            # an upper bound (core/llm/pricing.py)
    input_usd: float
    max_tokens: int
    output_usd: float
    input_per_m: float | None    # None: no known price
    output_per_m: float | None


def worst_case(prices: Any, model: str, messages: list[dict], max_tokens: int) -> WorstCase:
    price = prices.price(model)
    tokens = worst_case_input_tokens(messages)
    if price is None:
        return WorstCase(model, 0.0, tokens, 0.0, max_tokens, 0.0, None, None)
    in_usd = tokens * price.input_per_m / 1e6
    out_usd = max_tokens * price.output_per_m / 1e6
    usd = prices.worst_case_usd(model, messages, max_tokens)
    return WorstCase(model, usd, tokens, in_usd, max_tokens, out_usd, price.input_per_m, price.output_per_m)


def first_root_messages(config: Any, question: str, documents: Sequence[tuple[str, int]], prefix: str,
                        *, depth: int = 0) -> list[dict]:
    """The messages of an RLM's first root call (as core/engine/rlm.py sends them)."""
    from core.engine import prompts
    return [
        {"role": "system", "content": prompts.system_prompt(
            can_llm=depth < config.max_depth, can_rlm=depth + 1 < config.max_depth,
            model=config.root_model, user_notes=config.prompt_notes)},
        {"role": "user", "content": prompts.first_turn(question, list(documents), prefix)},
    ]


def sub_messages(prompt: str) -> list[dict]:
    return [{"role": "user", "content": prompt}]


def nested_question(prompt: str, context: str | None, limit: int) -> tuple[str, str]:
    """(question, context text) of a nested RLM started by rlm_query(prompt, context)."""
    if context is not None:
        return prompt, context
    if len(prompt) <= limit:
        return prompt, prompt
    return (f"The task and its material are in `context` ({len(prompt):,} characters). "
            f"It begins:\n{prompt[:limit // 2]}"), prompt


def explain_no_fit(wc: WorstCase, cap: float, spent: float, *, what: str = "the first root call",
                   option: str = "root max tokens") -> str:
    """Why a call cannot fit under the cap, in numbers, and what would make it fit.
    Never the iteration cap: more turns cannot make one call cheaper."""
    left = max(cap - spent, 0.0)
    text = (f"the dollar cap ${cap:.4f} (${left:.4f} left) cannot cover {what}: it could cost up to "
            f"${wc.usd:.4f} = input up to {wc.input_tokens:,} tokens x ${wc.input_per_m or 0:g}/M "
            f"(${wc.input_usd:.4f}) + max tokens {wc.max_tokens:,} x ${wc.output_per_m or 0:g}/M "
            f"(${wc.output_usd:.4f}).")
    fixes = []
    if wc.output_per_m:
        fit = math.floor((left - wc.input_usd) * 1e6 / wc.output_per_m)
        if fit >= MIN_USEFUL_MAX_TOKENS:
            fixes.append(f"a {option} of at most {fit:,}")
    fixes.append(f"{CAP_NEEDED}{math.ceil((spent + wc.usd) * 1e4) / 1e4:.4f}")
    return text + " To fix it, set " + " or ".join(fixes) + "."


class CallMeter:
    """client.AttemptMeter for one model call of the engine: reserves the worst case
    before each attempt (patiently, and shortened to fit: budget.acquire_call), settles
    each attempt at what it used, adds it to the RLM's tally, and sums the call's attempts.
    `shortened_to` is the max_tokens the last attempt was granted when the cap gave it
    fewer than asked (None: as asked); a call that succeeds shortened counts once in
    budget.shortened."""

    def __init__(self, ctx: Any, model: str, messages: list[dict], max_tokens: int, *,
                 tally: Any = None, keep_usd: Callable[[], float] = lambda: 0.0,
                 floor_tokens: int = SUB_FLOOR_TOKENS,
                 on_wait: Callable[[bool, float], None] | None = None) -> None:
        self.ctx = ctx
        self.on_wait = on_wait             # (waiting, worst_usd): it waits for budget, or goes on
        self.model = model
        self.messages = messages
        self.max_tokens = max_tokens
        self.tally = tally
        self.keep_usd = keep_usd
        self.floor_tokens = floor_tokens
        self.shortened_to: int | None = None
        self.cost_usd = 0.0
        self.input_tokens = 0
        self.output_tokens = 0
        self.estimated = False
        self.attempts = 0
        self._reservation: Any = None
        self._worst: float | None = None
        self._input_tokens: int | None = None

    def worst_usd(self) -> float:
        if self.ctx.budget.max_cost_usd is None:
            return 0.0
        if self._worst is None:
            self._worst = self.ctx.prices.worst_case_usd(self.model, self.messages, self.max_tokens)
        return self._worst

    async def begin(self, attempt: int) -> int:
        """Reserve this attempt; returns the max_tokens it may ask for."""
        self.attempts = attempt
        budget = self.ctx.budget
        if budget.max_cost_usd is None:
            self._reservation = budget.reserve(0.0)
            return self.max_tokens
        price = self.ctx.prices.price(self.model)
        if price is None:                  # admission refuses these under a cap; never reached
            self._reservation = await budget.acquire(self.worst_usd(), keep_usd=self.keep_usd())
            return self.max_tokens
        if self._input_tokens is None:
            self._input_tokens = worst_case_input_tokens(self.messages)
        input_usd = self._input_tokens * price.input_per_m / 1e6
        worst = input_usd + self.max_tokens * price.output_per_m / 1e6
        told = self.on_wait
        self._reservation, granted = await budget.acquire_call(
            input_usd, price.output_per_m / 1e6, self.max_tokens, self.floor_tokens,
            keep_usd=self.keep_usd(), on_wait=None if told is None else (lambda waiting: told(waiting, worst)))
        self.shortened_to = granted if granted < self.max_tokens else None
        return granted

    def end(self, usage: Any) -> None:
        reservation, self._reservation = self._reservation, None
        if reservation is None:
            return
        if self.shortened_to is not None and getattr(usage, "outcome", None) == "ok":
            self.ctx.budget.shortened += 1
        cost = self.ctx.prices.cost_usd(self.model, usage.input_tokens, usage.output_tokens)
        if not (usage.input_tokens or usage.output_tokens):
            self.ctx.budget.release(reservation, attempted=getattr(usage, "outcome", None) != "unsent")
            return
        self.ctx.budget.settle(reservation, cost, usage.input_tokens, usage.output_tokens,
                               estimated=usage.estimated)
        self.cost_usd += cost
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.estimated = self.estimated or usage.estimated
        if self.tally is not None:
            self.tally.add(cost, usage.input_tokens, usage.output_tokens)
