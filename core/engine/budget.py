"""The run's budget: one object for the whole recursion tree.

The dollar cap is a hard promise. Before a model call the engine reserves the
call's worst case (every input token at the input price plus max_tokens at the
output price). After the call the reservation is settled to the real cost. So
spent + reserved never exceeds the cap, however many calls run at once. All of
this runs on the event loop thread: no locks needed, none taken.

A call whose worst case does not fit is shortened rather than refused
(`acquire_call`): its max_tokens is lowered to what the room left affords, down to
a floor that still gives a useful reply (core/engine/costs.py: SUB_FLOOR_TOKENS,
ROOT_FLOOR_TOKENS). Only a call whose input plus that floor cannot be paid is
refused. `shortened` counts the calls that were granted fewer tokens.

Reservations are per attempt: a model call's meter (CallMeter) reserves before
each attempt and settles it when the attempt is over, so a retry reserves again
and a failed or cancelled attempt is settled at what it used (see
core/llm/client.py, attempt_usage). What the cap cannot cover is reported, never
only counted: `overrun_usd` (settled above the reservation: a provider billing more
than its price list or a server sending more than max_tokens) and the usage
settled on an estimate (`estimated_calls`, `estimated_usd`: the provider sent no
usage). Each RLM node keeps a Tally of its own subtree's spend that rolls up to
its parent's, so a nested RLM's cost is its calls', not the run's in its lifetime.

`acquire_call` is also patient: when a call does not fit only because of other
calls' reservations, it waits for them to settle (their real cost is usually far
below their worst case) instead of being shortened or refused.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Callable


class BudgetExceeded(Exception):
    """A call was refused because a cap would be crossed."""

    def __init__(self, message: str, *, cap: str) -> None:
        super().__init__(message)
        self.cap = cap          # "cost" | "sub_calls"


@dataclass
class Reservation:
    usd: float
    open: bool = True
    capped: bool = True       # reserved against a dollar cap (an overrun is measured against it)


@dataclass
class Tally:
    """What one RLM node's subtree spent; every addition rolls up to the parents."""
    parent: "Tally | None" = None
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, usd: float, input_tokens: int, output_tokens: int) -> None:
        node: Tally | None = self
        while node is not None:
            node.cost_usd += usd
            node.input_tokens += input_tokens
            node.output_tokens += output_tokens
            node = node.parent


class Budget:
    def __init__(self, *, max_cost_usd: float | None, max_sub_calls: int | None,
                 on_change: Callable[[], None] = lambda: None) -> None:
        self.max_cost_usd = max_cost_usd
        self.max_sub_calls = max_sub_calls
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.input_tokens = 0
        self.output_tokens = 0
        self.sub_calls = 0
        self.in_flight = 0
        self.refusals = 0
        self.shortened = 0      # calls granted fewer output tokens than asked, to fit the cap
        self.overruns = 0       # attempts whose real cost exceeded their reservation
        self.overrun_usd = 0.0  # by how much, in all
        self.estimated_calls = 0  # attempts settled on an estimate (no usage from the provider)
        self.estimated_usd = 0.0
        self.attempts = 0       # model-call attempts settled or released (not those never sent)
        self.waiting = 0        # calls waiting in acquire_call for calls in flight to settle
        self.waiting_worst_usd = 0.0   # the largest worst case among them
        self._on_change = on_change
        self.on_first: Callable[[str], None] = lambda what: None   # "overrun" | "estimated", once each
        self._settled: asyncio.Event | None = None

    async def acquire_call(self, input_usd: float, per_token_usd: float, want_tokens: int,
                           floor_tokens: int, *, keep_usd: float = 0.0,
                           on_wait: Callable[[bool], None] | None = None) -> tuple[Reservation, int]:
        """Reserve one call attempt: its input at worst plus up to `want_tokens` of output,
        fewer (down to `floor_tokens`) when the cap leaves less room. Returns the reservation
        and the max_tokens granted. Waits while calls in flight hold the room it needs: such
        a call is counted in `waiting` and told with `on_wait(True)`, then `on_wait(False)`
        when it goes on, is refused or is cancelled. Raises BudgetExceeded when even the
        input and the floor cannot be paid."""
        floor_tokens = max(1, min(floor_tokens, want_tokens))
        waiting = False
        try:
            while True:
                cap = self.max_cost_usd
                if cap is None:
                    return self.reserve(0.0), want_tokens
                full = input_usd + want_tokens * per_token_usd
                if self._fits(full, keep_usd, with_reserved=True):
                    return self.reserve(full, keep_usd=keep_usd), want_tokens
                now = self._affordable(input_usd, per_token_usd, want_tokens, keep_usd, with_reserved=True)
                alone = self._affordable(input_usd, per_token_usd, want_tokens, keep_usd, with_reserved=False)
                # the whole call fits once others settle; or, shortened, at least its floor does
                if self.in_flight and (self._fits(full, keep_usd, with_reserved=False)
                                       or (now < floor_tokens and alone >= floor_tokens)):
                    if not waiting:
                        waiting = True
                        self._begin_wait(full, on_wait)
                    await self._wait_settled()
                    continue
                if now >= floor_tokens:
                    return self.reserve(input_usd + now * per_token_usd, keep_usd=keep_usd), now
                self.refusals += 1
                kept = f", kept for the root's answer ${keep_usd:.4f}" if keep_usd else ""
                raise BudgetExceeded(
                    f"dollar cap ${cap:.4f}: spent ${self.spent_usd:.4f}, reserved for calls in flight "
                    f"${self.reserved_usd:.4f}{kept}; this call's input could cost up to ${input_usd:.4f} "
                    f"and even its shortest useful reply ({floor_tokens:,} tokens, "
                    f"${floor_tokens * per_token_usd:.4f}) does not fit", cap="cost")
        finally:
            if waiting:
                self._end_wait(on_wait)

    def _begin_wait(self, worst_usd: float, on_wait: Callable[[bool], None] | None) -> None:
        self.waiting += 1
        self.waiting_worst_usd = max(self.waiting_worst_usd, worst_usd)
        self._on_change()
        if on_wait is not None:
            on_wait(True)

    def _end_wait(self, on_wait: Callable[[bool], None] | None) -> None:
        self.waiting -= 1
        if not self.waiting:
            self.waiting_worst_usd = 0.0
        self._on_change()
        if on_wait is not None:
            on_wait(False)

    def _fits(self, usd: float, keep_usd: float, *, with_reserved: bool) -> bool:
        held = self.spent_usd + (self.reserved_usd if with_reserved else 0.0)
        return held + usd + keep_usd <= (self.max_cost_usd or 0.0) + 1e-12

    def _affordable(self, input_usd: float, per_token_usd: float, want: int, keep_usd: float,
                    *, with_reserved: bool) -> int:
        """The most output tokens a call can be granted now (-1: not even its input)."""
        held = self.spent_usd + (self.reserved_usd if with_reserved else 0.0)
        room = (self.max_cost_usd or 0.0) - held - keep_usd - input_usd
        if room < -1e-12:
            return -1
        if per_token_usd <= 0:
            return want
        return min(want, math.floor((room + 1e-12) / per_token_usd))

    async def _wait_settled(self) -> None:
        if self._settled is None:
            self._settled = asyncio.Event()
        self._settled.clear()
        await self._settled.wait()

    async def acquire(self, usd: float, *, keep_usd: float = 0.0) -> Reservation:
        """Reserve `usd`, waiting while calls in flight hold the room it needs.
        `keep_usd` stays untouched for someone else (the root's next turn)."""
        while True:
            cap = self.max_cost_usd
            if cap is None:
                return self.reserve(usd)
            fits_now = self.spent_usd + self.reserved_usd + usd + keep_usd <= cap + 1e-12
            hopeless = self.spent_usd + usd + keep_usd > cap + 1e-12
            if fits_now or hopeless or self.in_flight == 0:
                return self.reserve(usd, keep_usd=keep_usd)
            await self._wait_settled()

    def _wake(self) -> None:
        if self._settled is not None:
            self._settled.set()

    def count_sub_call(self) -> None:
        if self.max_sub_calls is not None and self.sub_calls >= self.max_sub_calls:
            self.refusals += 1
            raise BudgetExceeded(
                f"sub-call cap reached: {self.sub_calls} of {self.max_sub_calls} sub-calls used",
                cap="sub_calls")
        self.sub_calls += 1
        self._on_change()

    def reserve(self, usd: float, *, keep_usd: float = 0.0) -> Reservation:
        usd = max(usd, 0.0)
        cap = self.max_cost_usd
        if cap is None:
            self.in_flight += 1
            self._on_change()
            return Reservation(0.0, capped=False)
        if cap is not None and self.spent_usd + self.reserved_usd + usd + keep_usd > cap + 1e-12:
            self.refusals += 1
            kept = f", kept for the root's answer ${keep_usd:.4f}" if keep_usd else ""
            raise BudgetExceeded(
                f"dollar cap ${cap:.4f}: spent ${self.spent_usd:.4f}, reserved for calls in flight "
                f"${self.reserved_usd:.4f}{kept}, this call could cost up to ${usd:.4f}",
                cap="cost")
        self.reserved_usd += usd
        self.in_flight += 1
        self._on_change()
        return Reservation(usd)

    def settle(self, reservation: Reservation, usd: float, input_tokens: int, output_tokens: int,
               *, estimated: bool = False) -> None:
        if reservation.open:
            reservation.open = False
            self.reserved_usd = max(self.reserved_usd - reservation.usd, 0.0)
            self.in_flight -= 1
            self.attempts += 1
        if reservation.capped and usd > reservation.usd + 1e-12:
            self.overruns += 1
            self.overrun_usd += usd - reservation.usd
            if self.overruns == 1:
                self.on_first("overrun")
        if estimated:
            self.estimated_calls += 1
            self.estimated_usd += usd
            if self.estimated_calls == 1:
                self.on_first("estimated")
        self.spent_usd += usd
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self._on_change()
        self._wake()

    def release(self, reservation: Reservation, *, attempted: bool = True) -> None:
        """The call did not happen (error before any usage, or cancelled); `attempted=False`:
        its request never reached the provider, so it is no attempt either."""
        if reservation.open:
            reservation.open = False
            self.reserved_usd = max(self.reserved_usd - reservation.usd, 0.0)
            self.in_flight -= 1
            self.attempts += 1 if attempted else 0
            self._on_change()
            self._wake()

    def nearly_exhausted(self, fraction: float = 0.9) -> bool:
        return self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd * fraction
