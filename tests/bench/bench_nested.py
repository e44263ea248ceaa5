"""Benchmark 4, nested recursion: depth 2, the root starts 8 child RLMs in one
rlm_query_batched; each child runs a batch of 16 sub-calls and answers; the
root then answers. Every model call takes LATENCY_S (scripted server in its
own process, replies keyed on the request content: server_proc.nested_root).

    .venv/bin/python tests/bench/bench_nested.py [--quick] [--json OUT]

The bound is the critical path: the sum of the scripted latencies along the
longest chain of dependent model calls,
    root turn 1 -> child root turn -> child's batch of sub-calls -> root turn 2,
i.e. 4 x LATENCY_S. Wall time is RunStarted -> RunFinished on the engine's
clock; what exceeds the bound is the engine's own cost on that path (one REPL
worker process per RLM: 1 + 8 started here, context loads, prompts, events).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.engine_setup import Doc, cfg, events_of, key_for, raw_call  # noqa: E402
from tests.bench.report import load1, median, row, standalone  # noqa: E402
from tests.bench.server_proc import NESTED_BATCH, NESTED_CHILDREN, ServerProcess  # noqa: E402

LATENCY_S = 0.3
CHAIN = (("root turn 1", "root"), ("child root turn", "root"), ("child batch of 16", "sub"),
         ("root turn 2", "root"))


def critical_path_s(latency: dict[str, float]) -> float:
    return sum(latency[model] for _, model in CHAIN)


async def one_run(server: ServerProcess) -> dict:
    from core.engine.run import Engine
    events: list = []
    config = cfg(server.url, max_depth=2, concurrency=NESTED_CHILDREN * NESTED_BATCH)
    server.stats()
    result = await Engine(config, emit=events.append, key_for=key_for).run(
        "NESTED-TOP: count the items of every child", [Doc("a.txt", "items " * 100)])
    stats = server.stats()
    assert result.status == "finished" and result.answer == "done", result
    nested = [e for e in events_of(events, "SubCallFinished") if e.kind == "rlm"]
    subs = [e for e in events_of(events, "SubCallFinished") if e.kind == "llm"]
    assert len(nested) == NESTED_CHILDREN and all(e.status == "ok" for e in nested), nested
    assert len(subs) == NESTED_CHILDREN * NESTED_BATCH and all(e.status == "ok" for e in subs)
    started = {e.call_id: e.ts for e in events_of(events, "SubCallStarted") if e.kind == "rlm"}
    first_turn = {}
    for e in events_of(events, "RootTurnStarted"):
        if e.parent_id in started and e.iteration == 1:
            first_turn[e.parent_id] = e.ts
    child_start = [first_turn[c] - started[c] for c in started]       # worker spawn + context load
    last_cell = {}
    for e in events_of(events, "CellExecuted"):
        rlm_id = e.call_id.rsplit(".t", 1)[0]
        if rlm_id in started:
            last_cell[rlm_id] = e.ts
    finished = {e.call_id: e.ts for e in nested}
    child_close = [finished[c] - last_cell[c] for c in started]       # the child's worker shut down
    ts = {(e.type, e.call_id): e.ts for e in events}
    first_child = min(started.values())
    slowest = max(started, key=lambda c: first_turn[c])
    segments = {
        "top worker start + context": ts[("RootTurnStarted", "R.t1")] - ts[("RunStarted", "R")],
        "root turn 1 model call": ts[("RootReplied", "R.t1")] - ts[("RootTurnStarted", "R.t1")],
        "reply -> nested RLMs started": first_child - ts[("RootReplied", "R.t1")],
        "slowest child worker start + context": first_turn[slowest] - started[slowest],
        "slowest child: turn, batch, close": finished[slowest] - first_turn[slowest],
        "last child done -> root turn 2 -> end": ts[("RunFinished", "R")] - max(finished.values()),
    }
    wall = events_of(events, "RunFinished")[0].ts - events_of(events, "RunStarted")[0].ts
    return {"wall_s": wall, "segments": segments, "child_close_s_max": max(child_close),
            "child_start_s_median": median(child_start), "child_start_s_max": max(child_start),
            "nested_s_max": max(e.duration_ms for e in nested) / 1000, "model_calls": stats["requests"],
            "max_in_flight": stats["max_in_flight"], "events": len(events), "load1": load1()}


async def raw_batch(server: ServerProcess, n: int) -> float:
    """All the children's sub-calls at once, straight through litellm (no engine)."""
    t = time.perf_counter()
    await asyncio.gather(*(raw_call(server.url, "openai/sub", [{"role": "user", "content": f"item {i}"}])
                           for i in range(n)))
    return time.perf_counter() - t


async def measure(quick: bool) -> dict:
    latency = {"root": LATENCY_S, "sub": LATENCY_S}
    bound = critical_path_s(latency)
    with ServerProcess() as server:
        server.script("root", fn="nested_root", latency_s=latency["root"])
        server.script("sub", fn="ok", latency_s=latency["sub"])
        await one_run(server)                         # warm: imports, clients, page cache
        runs, raws = [], []
        for _ in range(1 if quick else 3):
            runs.append(await one_run(server))
            raws.append(await raw_batch(server, NESTED_CHILDREN * NESTED_BATCH))
    raw = median(raws)
    bound_client = bound - latency["sub"] + raw
    wall = median([r["wall_s"] for r in runs])
    load = round(median([r["load1"] for r in runs]), 2)
    mid = sorted(runs, key=lambda r: r["wall_s"])[len(runs) // 2]
    rows = [
        row("depth 2, 8 child RLMs x 16 sub-calls: wall", wall, "s",
            bound=f"critical path {bound:.2f} s (4 x {LATENCY_S} s)", ratio=wall / bound, load=load),
        row("  the same, against the critical path with litellm's own cost", wall, "s",
            bound=f"{bound_client:.2f} s (batch step = raw gather of 128: {raw:.2f} s)",
            ratio=wall / bound_client, load=load,
            note="128 concurrent litellm calls cost CPU on one event loop whoever makes them"),
        row("  engine cost on the critical path", wall - bound, "s", load=load),
        row("  child RLM start (worker spawn + context), median / max",
            f"{mid['child_start_s_median'] * 1000:.0f} / {mid['child_start_s_max'] * 1000:.0f}", "ms",
            load=load, note="8 REPL worker processes start at once on this machine's CPUs"),
        *[row(f"  path: {name}", seconds * 1000, "ms", load=load) for name, seconds in mid["segments"].items()],
        row("  child worker shut-down before its answer returns (max)", mid["child_close_s_max"] * 1000, "ms",
            load=load),
        row("  model calls / peak in flight", f"{mid['model_calls']} / {mid['max_in_flight']}", load=load),
    ]
    return {"name": "4. nested recursion", "rows": rows,
            "details": {"latency_s": latency, "critical_path_s": bound, "raw_gather_128_s": raws,
                        "critical_path_with_client_s": bound_client, "chain": CHAIN, "runs": runs}}


def run(quick: bool = False) -> dict:
    return asyncio.run(measure(quick))


if __name__ == "__main__":
    standalone("4. nested recursion", run)
