"""The budget under random pressure, through the real engine over real HTTP.

Each schedule is one seeded run at depth 2 (a batch of sub-calls and a batch of
nested RLMs, each with its own batch) against its own scripted server, with random
latencies and failures (429, 500, cut streams for the streamed root calls, hangs
past the request timeout for sub-calls), retries, and in some schedules a sub-call
that outlives its cell (cell timeout) or the run (engine.cancel()). After every
event: spent + reserved <= cap (calls that do not fit whole are shortened to fewer
max_tokens). At the end: nothing reserved or in flight, spend
within the cap, every settled dollar attributed to exactly one call of the tree,
and the settled total equal to what the server billed by the engine's documented
rule (tests/support/billing.py): exact where the usage reached the engine, the
engine's estimate elsewhere.

A hang outlives the request timeout (4 s), so only "hang" schedules have them: a
shorter timeout would also fire on streams the server finished but a loaded machine
had not read yet, which the server would bill in full and the engine estimate.

RLM_HAMMER_SCHEDULES=N runs N schedules (default 10, at most five at a time);
RLM_HAMMER_SEED picks the first seed (default 1).
"""

import asyncio
import os
import random
import threading
import time

from core.config import Price, RunConfig
from core.engine.run import Engine
from core.llm.client import ModelClient
from core.llm.pricing import PriceBook
from tests.integration.engine_helpers import Doc, code
from tests.support.billing import reconcile
from tests.support.openai_server import CutStream, Delay, Hang, ScriptedOpenAI, Status

SCHEDULES = int(os.environ.get("RLM_HAMMER_SCHEDULES", "10"))
FIRST_SEED = int(os.environ.get("RLM_HAMMER_SEED", "1"))
AT_ONCE = 5
ROOT, SUB = "openai/root", "openai/sub"
PRICES = {ROOT: Price(1.0, 4.0), SUB: Price(0.5, 2.0)}
REQUEST_TIMEOUT_S = 4.0
SLOW_S = 12.0


class Schedule:
    """What one seed decides: the shape of the run and every reply's fate."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        r = self.rng
        self.llm_batch = r.randint(2, 12)
        self.nested = r.randint(1, 3)
        self.nested_batch = r.randint(1, 6)
        self.cap = round(r.uniform(0.012, 0.04), 4)
        self.variant = ("plain", "timeout", "cancel", "hang", "plain")[seed % 5]   # each kind, in turn
        self.fail_p = r.uniform(0.05, 0.3)
        self.slow_arrived: float | None = None

    def pick(self, fn):
        with self.lock:
            return fn(self.rng)

    def root(self, req) -> object:
        first = next((m["content"] for m in req.messages if m["role"] == "user"), "")
        turn = sum(m["role"] == "assistant" for m in req.messages) + 1
        fate = self.pick(lambda r: (r.random(), r.choice([429, 500, "cut"]), r.randint(1, 60), r.uniform(0, 0.12)))
        if fate[0] < self.fail_p:
            return CutStream(fate[2]) if fate[1] == "cut" else Status(fate[1])
        if "NESTED-" in first:
            text = code(f"r = llm_query_batched(['n{turn}-' + str(i) for i in range({self.nested_batch})])\n"
                        "FINAL(str(len(r)))")
        elif turn == 1:
            text = code(f"a = llm_query_batched([f'q{{i}}' for i in range({self.llm_batch})])\n"
                        f"b = rlm_query_batched([f'NESTED-{{i}} count' for i in range({self.nested})])\n"
                        "print(len(a), len(b))")
        elif turn == 2 and self.variant in ("timeout", "cancel"):
            text = code("s = llm_query('SLOW please')\nprint(s)")
        else:
            text = code("FINAL('done')")
        return Delay(fate[3], text)

    def sub(self, req) -> object:
        if req.prompt.startswith("SLOW"):
            self.slow_arrived = time.monotonic()
            return Delay(SLOW_S, "late")
        kinds = [429, 500, "hang"] if self.variant == "hang" else [429, 500]
        fate = self.pick(lambda r: (r.random(), r.choice(kinds), r.uniform(0, 0.12)))
        if fate[0] < self.fail_p:
            return Hang(REQUEST_TIMEOUT_S * 2) if fate[1] == "hang" else Status(fate[1])
        return Delay(fate[2], f"answer to {req.prompt}")


async def _one(seed: int) -> dict:
    s = Schedule(seed)
    server = ScriptedOpenAI().start()
    try:
        server.price("root", 1.0, 4.0)
        server.price("sub", 0.5, 2.0)
        server.script("root", fn=s.root)
        server.script("sub", fn=s.sub)
        config = RunConfig(root_model=ROOT, sub_model=SUB, api_base=server.url, max_depth=2, max_iterations=4,
                           max_cost_usd=s.cap, prices=PRICES, root_max_tokens=300, sub_max_tokens=4000,
                           cell_timeout_s=3.0 if s.variant == "timeout" else 30.0, nested_concurrency=2,
                           max_retries=2, request_timeout_s=REQUEST_TIMEOUT_S, memory_limit_mb=1024,
                           max_output_chars=2000)
        llm = ModelClient(key_for=lambda m: "k", api_base_for=config.api_base_for, max_retries=2,
                          timeout_s=REQUEST_TIMEOUT_S, backoff_base_s=0.02, backoff_max_s=0.1)
        violations: list[str] = []
        peak = [0.0]
        events: list = []
        engine: Engine

        def sink(event) -> None:
            events.append(event)
            b = engine.budget
            if b is not None:
                peak[0] = max(peak[0], (b.spent_usd + b.reserved_usd) / s.cap)
            if b is not None and b.spent_usd + b.reserved_usd > s.cap + 1e-12:
                violations.append(f"{event.type} seq {event.seq}: spent {b.spent_usd} + reserved "
                                  f"{b.reserved_usd} > cap {s.cap}")
            if event.type == "BudgetChanged" and event.spent_usd + event.reserved_usd > s.cap + 1e-9:
                violations.append(f"BudgetChanged seq {event.seq} over the cap")

        engine = Engine(config, emit=sink, key_for=lambda m: "k", llm=llm)

        async def cancel_when_slow() -> None:
            while s.slow_arrived is None:
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)
            engine.cancel()

        canceller = asyncio.ensure_future(cancel_when_slow()) if s.variant == "cancel" else None
        try:
            result = await engine.run("HAMMER-TOP: count things", [Doc("a.txt", "alpha beta gamma " * 20)])
        finally:
            if canceller is not None:
                canceller.cancel()
        await asyncio.sleep(0.05)            # the server logs a disconnect a moment after the client
        b = engine.budget
        assert not violations, violations[:3]
        assert abs(b.reserved_usd) < 1e-12 and b.in_flight == 0, (seed, b.reserved_usd, b.in_flight)
        assert b.spent_usd <= s.cap + 1e-12 and b.overruns == 0
        # Every settled dollar belongs to exactly one call of the tree, and nested subtrees add up.
        leaves = {e.call_id: e.cost_usd for e in events
                  if e.type in ("RootReplied", "RootCallFailed") or (e.type == "SubCallFinished" and e.kind == "llm")}
        assert abs(sum(leaves.values()) - b.spent_usd) < 1e-9, seed
        for e in events:
            if e.type == "SubCallFinished" and e.kind == "rlm":
                below = sum(c for i, c in leaves.items() if i.startswith(e.call_id + "."))
                assert e.cost_usd == 0.0, (seed, e.call_id)          # a nested RLM makes no call itself
                assert abs(below - e.subtree_cost_usd) < 1e-9, (seed, e.call_id, below, e.subtree_cost_usd)
        # What the server billed, by the engine's rule.
        rec = reconcile(server, PriceBook(PRICES))
        assert b.attempts == rec.requests, (seed, b.attempts, rec.requests)
        # Replies the server sent in full but a loaded client did not read before its own timeout
        # are settled on estimates: usually none; each can move the total by at most late_delta_usd.
        late = b.estimated_calls - rec.estimated_attempts
        assert late >= 0, (seed, b.estimated_calls, rec.estimated_attempts)
        swing = late * rec.late_delta_usd
        assert rec.expected_usd - swing - 1e-9 <= b.spent_usd <= rec.expected_usd + rec.slack_usd + swing + 1e-9, \
            (seed, b.spent_usd, rec.expected_usd, rec.slack_usd, late)
        assert result.totals["estimated_usage_calls"] == b.estimated_calls
        return {"seed": seed, "status": result.status, "variant": s.variant, "requests": rec.requests,
                "estimated": rec.estimated_attempts, "spent": b.spent_usd, "server": rec.server_usd,
                "cancelled": sum(e.type == "SubCallFinished" and e.status == "cancelled" for e in events),
                "refused": b.refusals, "late": late,
                "shortened": result.totals["limited"]["shortened_calls"], "exact": late == 0 and rec.slack_usd == 0
                and abs(b.spent_usd - rec.expected_usd) < 1e-9, "peak": peak[0], "events": len(events), "nested": sum(e.type == "SubCallFinished" and e.kind == "rlm" for e in events)}
    finally:
        server.stop()


async def test_random_schedules_keep_the_cap_and_settle_what_the_server_billed():
    started = time.monotonic()
    done = []
    seeds = list(range(FIRST_SEED, FIRST_SEED + SCHEDULES))
    slots = asyncio.Semaphore(AT_ONCE)          # the next schedule starts as soon as one ends

    async def in_a_slot(seed: int) -> dict:
        async with slots:
            return await _one(seed)

    done += await asyncio.gather(*(in_a_slot(seed) for seed in seeds))
    took = time.monotonic() - started
    variants = {v: sum(d["variant"] == v for d in done) for v in ("plain", "timeout", "cancel", "hang")}
    gap = sum(abs(d["spent"] - d["server"]) for d in done)
    print(f"\nbudget hammer: {len(done)} schedules in {took:.1f} s; {sum(d['requests'] for d in done)} requests, "
          f"{sum(d['estimated'] for d in done)} settled on estimates, {sum(d['cancelled'] for d in done)} "
          f"sub-calls cancelled, {sum(d['refused'] for d in done)} refused by the cap, "
          f"{sum(d['shortened'] for d in done)} calls shortened to fit, "
          f"{sum(d['nested'] for d in done)} nested RLMs, {sum(d['events'] for d in done)} events checked; "
          f"highest (spent + reserved) / cap {max(d['peak'] for d in done):.2f}; variants {variants}; "
          f"settled exactly as billed in {sum(d['exact'] for d in done)}, replies read too late "
          f"{sum(d['late'] for d in done)}; "
          f"|settled - server's own count| = ${gap:.6f}")
    assert len(done) == SCHEDULES
    assert any(d["estimated"] for d in done)              # cuts and cancellations really happened
    assert sum(d["shortened"] for d in done) > 0          # calls were shortened to fit, not refused
