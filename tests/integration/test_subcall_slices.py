"""A batch larger than one start slice (core/engine/subcalls.py, START_SLICE): its calls
start over several passes of the event loop, and still keep the prompts' order, the
concurrency cap, one SubCallFinished per SubCallStarted and the accounting; a cancel that
lands while the calls are being started ends every started one and frees its reservation.
Real engine, real REPL worker, litellm over HTTP to the scripted server."""

from __future__ import annotations

import asyncio

from core.engine import subcalls
from core.engine.run import Engine
from tests.integration.engine_helpers import KEY, PRICED, Doc, code, config, of_type
from tests.support.openai_server import Delay

N = subcalls.START_SLICE * 3 + 5
N_CANCEL = subcalls.START_SLICE * 10
DOCS = [Doc("a.txt", "alpha beta gamma")]


class Passes:
    """Counts the passes of the event loop (a task that wakes once per pass)."""

    def __init__(self) -> None:
        self.n = 0
        self._task = asyncio.ensure_future(self._count())

    async def _count(self) -> None:
        while True:
            self.n += 1
            await asyncio.sleep(0)

    def stop(self) -> None:
        self._task.cancel()


async def test_a_big_batch_starts_in_slices_in_order_within_the_cap_and_settles(server):
    server.script("sub", fn=lambda r: f"ok {r.prompt}")
    server.script("root", replies=[code(f"out = llm_query_batched([f'p{{i}}' for i in range({N})])\n"
                                        "FINAL('|'.join(out))")])
    passes = Passes()
    events, started_in_pass = [], []
    engine: Engine

    def sink(event) -> None:
        events.append(event)
        if event.type == "SubCallStarted":
            started_in_pass.append(passes.n)

    engine = Engine(config(server, concurrency=8, max_cost_usd=5.0, prices=PRICED), emit=sink,
                    key_for=lambda m: KEY)
    try:
        result = await engine.run("q", DOCS)
    finally:
        passes.stop()
    assert result.answer == "|".join(f"ok p{i}" for i in range(N)), result.error
    started = of_type(events, "SubCallStarted")
    assert [e.prompt for e in started] == [f"p{i}" for i in range(N)]          # the prompts' order
    assert [int(e.call_id.rsplit(".s", 1)[1]) for e in started] == list(range(1, N + 1))
    assert len(set(started_in_pass)) >= -(-N // subcalls.START_SLICE)       # over several loop passes
    finished = of_type(events, "SubCallFinished")
    assert sorted(e.call_id for e in finished) == sorted(e.call_id for e in started)
    assert all(e.status == "ok" for e in finished)
    assert server.max_in_flight <= 8                                          # the cap held
    b = engine.budget
    assert abs(b.reserved_usd) < 1e-12 and b.in_flight == 0 and b.overruns == 0
    leaves = [e.cost_usd for e in events if e.type in ("RootReplied", "SubCallFinished")]
    assert abs(sum(leaves) - b.spent_usd) < 1e-9 and b.spent_usd > 0


async def test_a_cancel_while_the_calls_are_being_started_ends_every_started_one(server):
    server.script("sub", fn=lambda r: Delay(30.0, "late"))
    server.script("root", replies=[code(f"print(llm_query_batched([f'p{{i}}' for i in range({N_CANCEL})]))")])
    events = []
    engine: Engine
    loop = asyncio.get_running_loop()

    def sink(event) -> None:
        events.append(event)
        if event.type == "SubCallStarted" and sum(e.type == "SubCallStarted" for e in events) == 1:
            loop.call_soon(engine.cancel)              # lands while the later slices are still to start

    engine = Engine(config(server, concurrency=N_CANCEL, max_cost_usd=5.0, prices=PRICED), emit=sink,
                    key_for=lambda m: KEY)
    result = await asyncio.wait_for(engine.run("q", DOCS), 60)
    assert result.status == "cancelled"
    started = of_type(events, "SubCallStarted")
    finished = of_type(events, "SubCallFinished")
    assert 0 < len(started) < N_CANCEL, len(started)                              # the rest never started
    assert sorted(e.call_id for e in finished) == sorted(e.call_id for e in started)
    assert all(e.status == "cancelled" and e.error_type == "Cancelled" for e in finished)
    await asyncio.sleep(0.1)
    assert len(server.requests_for("sub")) <= len(started)
    assert all(r.disconnected for r in server.requests_for("sub"))
    b = engine.budget
    assert abs(b.reserved_usd) < 1e-12 and b.in_flight == 0
