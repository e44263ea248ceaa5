"""What the RLMs of one run share: the RunContext (config, event sink, model client,
prices, budget, semaphores, counters), owned by the event loop of the run.

Apart from core/engine/run.py so that the Rlm (core/engine/rlm.py) and the sub-call
code (core/engine/subcalls.py) can name it without importing the Engine.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from core import events as ev
from core.config import RunConfig
from core.engine.budget import Budget
from core.limits import Limits

log = logging.getLogger(__name__)

EventSink = Callable[[ev.Event], None]


@dataclass
class Counters:
    iterations: int = 0          # root turns of the top-level RLM
    cells: int = 0
    syntax_errors: int = 0
    runtime_errors: int = 0
    faults: int = 0
    refused_cells: int = 0       # blocks not run: copied feedback, a rebound `context` (engine/screen.py)
    stated_finals: int = 0       # replies that said "Final answer: ..." without FINAL (the root was told)
    cut_replies: int = 0         # root replies read only as far as useful (engine/reply_reader.py)


@dataclass
class RunContext:
    """Everything the RLMs of one run share."""
    run_id: str
    config: RunConfig
    emit_event: EventSink
    llm: Any                     # core.llm.client.ModelClient
    prices: Any                  # core.llm.pricing.PriceBook
    budget: Budget
    sub_semaphore: asyncio.Semaphore
    deadline: float | None       # time.monotonic() deadline from max_wall_seconds
    worker_command: list[str] | None = None
    counters: Counters = field(default_factory=Counters)
    cap_hit: str | None = None   # first cap that stopped work: "iterations"|"cost"|"sub_calls"|"wall_time"
    root_reserve_usd: float = 0.0  # kept free by sub-calls for the top-level root's next turn (costs.root_reserve)
    nested_slots: Any = None     # asyncio.Semaphore: nested RLMs running at once
    nested_running: int = 0
    nested_waiting: int = 0
    nested_peak: int = 0         # most nested RLMs that ran at once
    closing: list = field(default_factory=list)   # nested RLMs' workers shutting down
    limits: Limits = field(default_factory=Limits)  # what caps and limits changed (core/limits.py)
    unpriced: list = field(default_factory=list)    # models without a known price (cost unknown)
    support: Any = None          # core.support.SupportCorpus: what the run read and wrote
    _seq: Any = field(default_factory=lambda: itertools.count(1))
    _budget_pending: bool = False

    def emit(self, cls: type[ev.Event], *, call_id: str | None = None,
             parent_id: str | None = None, **fields: Any) -> ev.Event:
        event = cls(run_id=self.run_id, seq=next(self._seq), ts=time.time(),
                    call_id=call_id, parent_id=parent_id, **fields)
        self.limits.observe(event)     # counted from the events themselves, as replay does
        if cls is ev.SubCallFinished and (fields.get("input_tokens") or fields.get("output_tokens")) \
                and fields.get("model") not in self.unpriced and self.prices.price(fields.get("model")) is None:
            self.unpriced.append(fields["model"])     # a model= call at no known price: cost unknown
        if self.support is not None:
            self.support.observe(event)
        try:
            self.emit_event(event)
        except Exception:  # a broken sink must not end the run; it is logged
            log.exception("event sink failed on %s", event.type)
        return event

    def budget_changed(self) -> None:
        """Coalesce bursts of budget changes into one event per loop iteration."""
        if self._budget_pending:
            return
        self._budget_pending = True
        asyncio.get_running_loop().call_soon(self._emit_budget)

    def _emit_budget(self) -> None:
        self._budget_pending = False
        b = self.budget
        self.nested_peak = max(self.nested_peak, self.nested_running)
        self.emit(ev.BudgetChanged, spent_usd=round(b.spent_usd, 10), reserved_usd=round(b.reserved_usd, 10),
                  cap_usd=b.max_cost_usd, input_tokens=b.input_tokens, output_tokens=b.output_tokens,
                  sub_calls=b.sub_calls, in_flight=b.in_flight, overrun_usd=round(b.overrun_usd, 10),
                  estimated_usage_calls=b.estimated_calls, estimated_usd=round(b.estimated_usd, 10),
                  nested_running=self.nested_running, nested_waiting=self.nested_waiting,
                  waiting_for_budget=b.waiting, waiting_worst_usd=round(b.waiting_worst_usd, 10))

    def budget_notice(self, what: str) -> None:
        """Budget.on_first: the first overrun / estimated usage of the run is told, once."""
        # Words for the user: no field names (the totals and the meter's tooltip have the figures).
        if what == "overrun":
            level = "warning"
            message = ("A call cost more than the worst case reserved for it (the provider billed more "
                       "than its price list, or sent a longer reply than asked for): the dollar cap cannot "
                       "cover that difference. The meter's tooltip says by how much.")
        else:
            level = "info"
            message = ("A call ended without a token count from the provider (it was cut, stopped, or the "
                       "provider sends none): its cost is estimated from the length of its text.")
        self.emit(ev.Notice, call_id="R", level=level, message=message)

    def time_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def totals(self, started: float) -> dict[str, Any]:
        b, c = self.budget, self.counters
        return {"cost_usd": round(b.spent_usd, 10), "input_tokens": b.input_tokens,
                "output_tokens": b.output_tokens, "iterations": c.iterations, "sub_calls": b.sub_calls,
                "cells": c.cells, "syntax_errors": c.syntax_errors, "runtime_errors": c.runtime_errors,
                "faults": c.faults, "refused_calls": b.refusals, "refused_cells": c.refused_cells,
                "cut_replies": c.cut_replies, "stated_finals": c.stated_finals,
                "overrun_usd": round(b.overrun_usd, 10), "overruns": b.overruns,
                "estimated_usage_calls": b.estimated_calls, "estimated_usd": round(b.estimated_usd, 10),
                "attempts": b.attempts, "nested_peak": self.nested_peak, "cap_hit": self.cap_hit,
                "limited": self.limits.as_dict(), "unpriced_models": list(self.unpriced),
                "wall_ms": int((time.monotonic() - started) * 1000)}
