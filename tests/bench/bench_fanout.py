"""Benchmark 1, fan-out: N sub-calls through llm_query_batched at 0.5 s latency,
against a raw asyncio.gather of the same litellm.acompletion calls.

    .venv/bin/python tests/bench/bench_fanout.py [--quick] [--json OUT]

The scripted server runs in its own process (tests/bench/server_proc.py).
Engine wall time is the cell as the engine sees it: CellStarted -> CellExecuted
(code sent to the worker, the worker's sub_call, N concurrent calls through
ModelClient with budget and events, results back, the cell's end). The raw
bound is `await asyncio.gather(*(litellm.acompletion(...) for _ in range(N)))`.
The two alternate (raw first, then engine first, ...) and repeat 3 times; the
table shows medians and the ratio of medians.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.engine_setup import Doc, cfg, code, events_of, key_for, raw_call  # noqa: E402
from tests.bench.report import load1, median, row, standalone  # noqa: E402
from tests.bench.server_proc import ServerProcess  # noqa: E402

LATENCY_S = 0.5
GOAL_RATIO = 1.2


async def raw_gather(server: ServerProcess, n: int) -> dict:
    server.stats()
    t0 = time.perf_counter()
    await asyncio.gather(*(raw_call(server.url, "openai/sub", [{"role": "user", "content": f"p{i}"}])
                           for i in range(n)))
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "in_flight": server.stats()["max_in_flight"], "load1": load1()}


async def engine_batch(server: ServerProcess, n: int, concurrency: int) -> dict:
    from core.engine.run import Engine
    server.script("root", replies=[code(f"out = llm_query_batched([f'p{{i}}' for i in range({n})])"),
                                   code("FINAL(str(len(out)))")])
    events: list = []
    engine = Engine(cfg(server.url, concurrency=concurrency, sub_max_tokens=16), emit=events.append,
                    key_for=key_for)
    server.stats()
    result = await engine.run("fan out", [Doc("a.txt", "x")])
    stats = server.stats()
    assert result.answer == str(n), result
    started = events_of(events, "CellStarted")[0].ts
    executed = events_of(events, "CellExecuted")[0]
    subs = events_of(events, "SubCallStarted")
    done = events_of(events, "SubCallFinished")
    assert len(done) == n and all(e.status == "ok" for e in done), "sub-calls failed"
    return {"wall_s": executed.ts - started, "worker_cell_s": executed.duration_ms / 1000,
            "batch_span_s": done[-1].ts - subs[0].ts, "in_flight": stats["max_in_flight"],
            "load1": load1()}


async def warm_up(server: ServerProcess) -> None:
    """litellm's import, its HTTP clients and a first worker start are not measured."""
    await asyncio.gather(*(raw_call(server.url, "openai/sub", [{"role": "user", "content": "w"}])
                           for _ in range(8)))
    await engine_batch(server, 8, 32)


async def measure(quick: bool) -> dict:
    sizes = [64] if quick else [64, 512]
    reps = 2 if quick else 3
    details: dict = {"latency_s": LATENCY_S, "repeats": reps, "sizes": {}}
    rows = []
    with ServerProcess() as server:
        server.script("sub", fn="ok", latency_s=LATENCY_S)
        await warm_up(server)
        for n in sizes:
            await raw_gather(server, n)             # open the connections both sides will reuse
            await engine_batch(server, n, concurrency=n)
            raws, engines = [], []
            for rep in range(reps):
                order = ("raw", "engine") if rep % 2 == 0 else ("engine", "raw")
                for side in order:
                    if side == "raw":
                        raws.append(await raw_gather(server, n))
                    else:
                        engines.append(await engine_batch(server, n, concurrency=n))
            raw = median([r["wall_s"] for r in raws])
            eng = median([e["wall_s"] for e in engines])
            load = round(median([r["load1"] for r in raws + engines]), 2)
            details["sizes"][n] = {"raw": raws, "engine": engines, "raw_median_s": raw,
                                   "engine_median_s": eng, "ratio": eng / raw}
            goal = f"<= {GOAL_RATIO}x raw" if n == 64 else ""
            rows.append(row(f"{n} sub-calls: raw asyncio.gather", raw, "s",
                            bound=f"latency {LATENCY_S} s", ratio=raw / LATENCY_S,
                            load=load))
            rows.append(row(f"{n} sub-calls: engine (llm_query_batched)", eng, "s",
                            bound=f"raw gather {raw:.3f} s", ratio=eng / raw, goal=goal,
                            met=(eng / raw <= GOAL_RATIO) if n == 64 else None, load=load))
            rows.append(row(f"{n} sub-calls: in flight at once (engine / raw)",
                            f"{max(e['in_flight'] for e in engines)} / {max(r['in_flight'] for r in raws)}",
                            load=load))
            rows.append(row(f"{n} sub-calls: first start -> last finish (engine)",
                            median([e["batch_span_s"] for e in engines]), "s", load=load))
        # what a user gets with the default concurrency cap (32): two waves
        from core.config import RunConfig
        default = RunConfig.__dataclass_fields__["concurrency"].default
        capped = await engine_batch(server, 64, concurrency=default)
        details["default_concurrency"] = {"concurrency": default, **capped}
        rows.append(row(f"64 sub-calls at the default concurrency cap ({default})", capped["wall_s"], "s",
                        bound=f"{-(-64 // default)} waves x {LATENCY_S} s",
                        ratio=capped["wall_s"] / (-(-64 // default) * LATENCY_S), load=capped["load1"],
                        note="by design: the run's concurrency cap bounds the calls in flight"))
    return {"name": "1. fan-out", "rows": rows, "details": details}


def run(quick: bool = False) -> dict:
    return asyncio.run(measure(quick))


if __name__ == "__main__":
    standalone("1. fan-out", run)
