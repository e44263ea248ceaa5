"""A run's budget that also reserves from a budget shared by many runs (a grid's).

    grid = Budget(max_cost_usd=5.0, max_sub_calls=None)          # one for the whole grid
    engine = Engine(config, ..., shared_budget=grid)               # each cell's run

Every call of the run reserves from the shared budget first, through the shared
budget's own `acquire_call` (the one reservation function: patient while other runs'
calls hold the room, shortened to fit, refused with the numbers when even the input
cannot be paid), then books the same amount in the run's own Budget, which keeps the
run's totals (its cost, tokens, refusals) as for any run. Settling and releasing go
to both. So no scheduling of runs can pass the shared cap: every attempt of every
run holds its worst case in the one shared budget before it is sent.
"""

from __future__ import annotations

from typing import Any

from core.engine.budget import Budget, Reservation


class SharedBudget(Budget):
    def __init__(self, shared: Budget, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.shared = shared

    async def acquire_call(self, input_usd: float, per_token_usd: float, want_tokens: int,
                           floor_tokens: int, *, keep_usd: float = 0.0,
                           on_wait: Any = None) -> tuple[Reservation, int]:
        """The grid's budget reserves (and makes the call wait for room, told through `on_wait`
        as a wait of the run's own budget would be); this run books the same amount."""
        try:
            outer, granted = await self.shared.acquire_call(input_usd, per_token_usd, want_tokens,
                                                            floor_tokens, keep_usd=keep_usd, on_wait=on_wait)
        except Exception:
            self.refusals += 1
            raise
        return self._book(outer), granted

    async def acquire(self, usd: float, *, keep_usd: float = 0.0) -> Reservation:
        return self._book(await self.shared.acquire(usd, keep_usd=keep_usd))

    def reserve(self, usd: float, *, keep_usd: float = 0.0) -> Reservation:
        try:
            outer = self.shared.reserve(usd, keep_usd=keep_usd)
        except Exception:
            self.refusals += 1
            raise
        return self._book(outer)

    def _book(self, outer: Reservation) -> Reservation:
        """The run's own reservation of what the shared budget granted (never refused: the
        run's spend is part of the shared spend, so what fits there fits here)."""
        inner = Budget.reserve(self, 0.0) if self.max_cost_usd is None else \
            Reservation(outer.usd, capped=outer.capped)
        if self.max_cost_usd is not None:
            self.reserved_usd += outer.usd
            self.in_flight += 1
            self._on_change()
        inner.outer = outer            # type: ignore[attr-defined]
        return inner

    def settle(self, reservation: Reservation, usd: float, input_tokens: int, output_tokens: int,
               *, estimated: bool = False) -> None:
        outer = getattr(reservation, "outer", None)
        if outer is not None:
            self.shared.settle(outer, usd, input_tokens, output_tokens, estimated=estimated)
        super().settle(reservation, usd, input_tokens, output_tokens, estimated=estimated)

    def release(self, reservation: Reservation) -> None:
        outer = getattr(reservation, "outer", None)
        if outer is not None:
            self.shared.release(outer)
        super().release(reservation)


def run_budget(config: Any, shared: Budget | None) -> Budget:
    """The Budget of one run: its own, or one that reserves from `shared` too."""
    if shared is None:
        return Budget(max_cost_usd=config.max_cost_usd, max_sub_calls=config.max_sub_calls)
    # Without a cap of its own the run still reserves every call's worst case: the shared cap's.
    cap = config.max_cost_usd if config.max_cost_usd is not None else shared.max_cost_usd
    return SharedBudget(shared, max_cost_usd=cap, max_sub_calls=config.max_sub_calls)
