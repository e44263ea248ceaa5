"""Engine benchmarks: fan-out vs a raw asyncio.gather, per-turn overhead, big contexts.

    .venv/bin/python tests/bench/bench_engine.py [--quick] [--json OUT]

Starts the scripted OpenAI-compatible server on 127.0.0.1 itself. Prints a table
with the machine noted; compare ratios within one run (these machines are noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from core.config import RunConfig  # noqa: E402
from core.engine.run import Engine  # noqa: E402
from tests.bench.machine import machine_info  # noqa: E402
from tests.support.openai_server import ScriptedOpenAI  # noqa: E402

KEY = "sk-bench"


@dataclass(frozen=True)
class Doc:
    path: str
    text: str


def cfg(server: ScriptedOpenAI, **kw) -> RunConfig:
    base = dict(root_model="openai/root", sub_model="openai/sub", api_base=server.url,
                max_iterations=40, concurrency=512, max_sub_calls=100_000, cell_timeout_s=600,
                memory_limit_mb=None)
    base.update(kw)
    return RunConfig(**base)


def code(src: str) -> str:
    return f"```repl\n{src}\n```"


async def fan_out(server: ScriptedOpenAI, n: int, latency: float) -> dict:
    from core.llm.litellm_import import litellm
    lm = litellm()
    server.script("sub", fn=lambda r: "ok", latency_s=latency)
    # warm up litellm's clients so neither side pays first-use costs
    await asyncio.gather(*(lm.acompletion(model="openai/sub", api_base=server.url, api_key=KEY,
                                          messages=[{"role": "user", "content": "w"}], max_tokens=16)
                           for _ in range(8)))
    # raw bound: the same calls straight through litellm, all at once
    server.max_in_flight = 0
    t0 = time.perf_counter()
    await asyncio.gather(*(lm.acompletion(model="openai/sub", api_base=server.url, api_key=KEY,
                                          messages=[{"role": "user", "content": f"p{i}"}],
                                          max_tokens=16) for i in range(n)))
    raw = time.perf_counter() - t0
    raw_peak = server.max_in_flight
    server.max_in_flight = 0
    server.script("root", replies=[code(f"out = llm_query_batched([f'p{{i}}' for i in range({n})])"),
                                   code("FINAL(str(len(out)))")])
    events: list = []
    engine = Engine(cfg(server, concurrency=max(n, 32)), emit=events.append, key_for=lambda m: KEY)
    result = await engine.run("fan out", [Doc("a.txt", "x")])
    assert result.answer == str(n), result
    cell = next(e for e in events if e.type == "CellExecuted")
    return {"calls": n, "latency_s": latency, "engine_s": cell.duration_ms / 1000, "raw_gather_s": raw,
            "ratio": (cell.duration_ms / 1000) / raw, "in_flight_engine": server.max_in_flight,
            "in_flight_raw": raw_peak}


async def warm_up(server: ScriptedOpenAI) -> None:
    """One small run first, so litellm's import and first client set-up are not measured."""
    server.script("root", replies=[code("FINAL('warm')")])
    await Engine(cfg(server), emit=lambda e: None, key_for=lambda m: KEY).run("warm", [Doc("w.txt", "w")])


async def turn_overhead(server: ScriptedOpenAI, turns: int) -> dict:
    replies = [code(f"x{i} = {i}") for i in range(turns - 1)] + [code("FINAL('done')")]
    server.script("root", replies=replies)
    events: list = []
    engine = Engine(cfg(server, max_iterations=turns + 1), emit=events.append, key_for=lambda m: KEY)
    t0 = time.perf_counter()
    result = await engine.run("overhead", [Doc("a.txt", "x" * 1000)])
    wall = time.perf_counter() - t0
    assert result.answer == "done"
    model_ms = sum(e.duration_ms for e in events if e.type == "RootReplied")
    cell_ms = sum(e.duration_ms for e in events if e.type == "CellExecuted")
    first = next(e for e in events if e.type == "RootTurnStarted").ts
    loop_wall = (next(e for e in events if e.type == "RunFinished").ts - first) * 1000
    own = (loop_wall - model_ms - cell_ms) / turns
    return {"turns": turns, "wall_per_turn_ms": wall * 1000 / turns,
            "model_call_per_turn_ms": model_ms / turns, "cell_per_turn_ms": cell_ms / turns,
            "engine_own_per_turn_ms": own, "events": len(events)}


def vm_hwm_mb(pid: int | str = "self") -> float:
    """Peak resident memory of one process (VmHWM: per address space, unlike ru_maxrss,
    which a child inherits from its parent at fork)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_hwm() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")          # resets VmHWM to the current RSS
    except OSError:
        pass


async def big_context(server: ScriptedOpenAI, mb: int) -> dict:
    line = "2025-01-01 INFO service=api latency_ms=12 user=alice action=login ok\n"
    per_doc = mb * 1024 * 1024 // 4 // len(line)
    reset_hwm()
    baseline = vm_hwm_mb()
    docs = [Doc(f"log{i}.txt", line * per_doc) for i in range(4)]
    chars = sum(len(d.text) for d in docs)
    server.script("root", replies=[
        code("print(len(context))"),
        code("peak = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
             "FINAL(peak)")])
    events: list = []
    engine = Engine(cfg(server), emit=events.append, key_for=lambda m: KEY)
    t0 = time.perf_counter()
    result = await engine.run("big", docs)
    started = next(e for e in events if e.type == "RunStarted").ts
    first_cell = next(e for e in events if e.type == "CellExecuted").ts
    worker_peak = int(result.answer) / 1024
    engine_peak = vm_hwm_mb()
    return {"context_mb": round(chars / 1e6, 1),
            "first_cell_result_s": round(first_cell - started, 3),
            "run_s": round(time.perf_counter() - t0, 3),
            "engine_baseline_mb": round(baseline, 1),
            "engine_growth_mb": round(engine_peak - baseline, 1),
            "engine_growth_x_context": round((engine_peak - baseline) / (chars / 2**20), 2),
            "worker_peak_mb": round(worker_peak, 1),
            "worker_peak_x_context": round(worker_peak / (chars / 2**20), 2)}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json")
    parser.add_argument("--only", choices=["fanout", "turns", "context"])
    parser.add_argument("--mb", type=int, help="with --only context: one size, in this process")
    args = parser.parse_args()
    results: dict = {"machine": machine_info()}
    with ScriptedOpenAI() as server:
        await warm_up(server)
        if args.only in (None, "fanout"):
            results["fan_out"] = [await fan_out(server, n, 0.5) for n in ([64] if args.quick else [64, 512])]
        if args.only in (None, "turns"):
            results["turn_overhead"] = await turn_overhead(server, 20)
        if args.mb:
            results["big_context"] = [await big_context(server, args.mb)]
    if args.only in (None, "context") and not args.mb:
        # one process per size, so each peak is its own
        results["big_context"] = []
        for mb in ([4] if args.quick else [4, 40]):
            out = subprocess.run([sys.executable, __file__, "--only", "context", "--mb", str(mb)],
                                 capture_output=True, text=True, check=True).stdout
            results["big_context"] += json.loads(out)["big_context"]
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
