"""The grid's one budget on a Ray cluster: a Ray actor holds the core Budget, and every
cell's run on every node reserves from it before each call (core/engine/shared_budget.py,
through RemoteBudget), so no schedule of tasks across nodes can pass the grid's cap.

    actor = budget_actor(ray, cap_usd=5.0, spent_usd=0.0)       # on the desktop, once per grid
    shared = RemoteBudget(actor)                                # in each task: Engine(shared_budget=shared)

The actor runs the Budget on its own event loop (an async actor), so its patient waits
(a call that fits once others settle) work across tasks as they do across local runs.
A reservation crosses as an id; settle and release are sent in order (Ray keeps the
order of one caller's actor calls). A task that dies leaves its reservations held:
the room stays spoken for, so a lost node can make the grid stop early, never overspend.
"""

from __future__ import annotations

import uuid
from typing import Any

from core.engine.budget import Budget, BudgetExceeded, Reservation


class BudgetHolder:
    """The actor's body (wrapped with ray.remote by budget_actor)."""

    def __init__(self, cap_usd: float | None, spent_usd: float = 0.0) -> None:
        self.budget = Budget(max_cost_usd=cap_usd, max_sub_calls=None)
        self.budget.spent_usd = spent_usd
        self.held: dict[str, Reservation] = {}

    def _keep(self, reservation: Reservation) -> str:
        rid = uuid.uuid4().hex
        self.held[rid] = reservation
        return rid

    async def acquire_call(self, input_usd: float, per_token_usd: float, want: int, floor: int,
                           keep_usd: float) -> dict:
        try:
            res, granted = await self.budget.acquire_call(input_usd, per_token_usd, want, floor, keep_usd=keep_usd)
        except BudgetExceeded as exc:
            return {"refused": str(exc), "cap": exc.cap}
        return {"id": self._keep(res), "usd": res.usd, "capped": res.capped, "granted": granted}

    async def acquire(self, usd: float, keep_usd: float) -> dict:
        res = await self.budget.acquire(usd, keep_usd=keep_usd)
        return {"id": self._keep(res), "usd": res.usd, "capped": res.capped}

    async def reserve(self, usd: float, keep_usd: float) -> dict:
        try:
            res = self.budget.reserve(usd, keep_usd=keep_usd)
        except BudgetExceeded as exc:
            return {"refused": str(exc), "cap": exc.cap}
        return {"id": self._keep(res), "usd": res.usd, "capped": res.capped}

    async def settle(self, rid: str, usd: float, input_tokens: int, output_tokens: int, estimated: bool) -> None:
        res = self.held.pop(rid, None)
        if res is not None:
            self.budget.settle(res, usd, input_tokens, output_tokens, estimated=estimated)

    async def release(self, rid: str) -> None:
        res = self.held.pop(rid, None)
        if res is not None:
            self.budget.release(res)

    async def state(self) -> dict:
        b = self.budget
        return {"spent_usd": b.spent_usd, "reserved_usd": b.reserved_usd, "in_flight": b.in_flight,
                "held": len(self.held), "refusals": b.refusals, "overrun_usd": b.overrun_usd}


def budget_actor(ray: Any, *, cap_usd: float | None, spent_usd: float = 0.0) -> Any:
    return ray.remote(num_cpus=0)(BudgetHolder).remote(cap_usd, spent_usd)


class RemoteBudget:
    """What SharedBudget needs of its shared budget, answered by the actor. `max_cost_usd`
    is the grid's cap (the run reserves every call's worst case against it)."""

    def __init__(self, actor: Any, max_cost_usd: float | None) -> None:
        self.actor = actor
        self.max_cost_usd = max_cost_usd

    @staticmethod
    def _reservation(answer: dict) -> Reservation:
        if "refused" in answer:
            raise BudgetExceeded(answer["refused"], cap=answer.get("cap", "cost"))
        res = Reservation(answer["usd"], capped=answer["capped"])
        res.remote_id = answer["id"]          # type: ignore[attr-defined]
        return res

    async def acquire_call(self, input_usd: float, per_token_usd: float, want_tokens: int, floor_tokens: int,
                           *, keep_usd: float = 0.0, on_wait: Any = None) -> tuple[Reservation, int]:
        # `on_wait` is not told here: the wait happens in the actor, on another machine
        answer = await self.actor.acquire_call.remote(input_usd, per_token_usd, want_tokens, floor_tokens, keep_usd)
        return self._reservation(answer), answer.get("granted", want_tokens)

    async def acquire(self, usd: float, *, keep_usd: float = 0.0) -> Reservation:
        return self._reservation(await self.actor.acquire.remote(usd, keep_usd))

    def reserve(self, usd: float, *, keep_usd: float = 0.0) -> Reservation:
        import ray
        return self._reservation(ray.get(self.actor.reserve.remote(usd, keep_usd)))

    def settle(self, reservation: Reservation, usd: float, input_tokens: int, output_tokens: int,
               *, estimated: bool = False) -> None:
        self.actor.settle.remote(reservation.remote_id, usd, input_tokens, output_tokens, estimated)  # type: ignore[attr-defined]

    def release(self, reservation: Reservation) -> None:
        self.actor.release.remote(reservation.remote_id)   # type: ignore[attr-defined]
