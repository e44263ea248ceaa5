"""Benchmark 2, engine overhead: 20 root turns at zero model latency, time per
turn split into model call, cell execution, prompt building, reply parsing,
event storage and the rest of the engine.

    .venv/bin/python tests/bench/bench_overhead.py [--quick] [--json OUT]

Method (all in the engine process; the scripted server runs in its own process):
- the loop is RootTurnStarted(turn 1) -> RunFinished, on the engine's clock
  (event timestamps); per turn = that / turns.
- model call: RootTurnStarted -> RootReplied of each turn (budget, litellm's
  streamed call through ModelClient, one RootTokens event per delta). Bound:
  the same streamed litellm.acompletion calls with the same messages, made raw.
- cell execution: CellStarted -> CellExecuted (the pipe round trip to the REPL
  worker and the cell itself; the worker's own duration_ms is shown beside).
- event storage: the sink is a real RunStore EventWriter; the time spent in the
  sink call (on the event loop) is timed around every call, and the writer
  thread's CPU time (utime+stime of that thread from /proc) is read at the end.
- prompt building: core.engine.prompts' functions wrapped with a timer;
  reply parsing likewise (core.engine.rlm.parse_reply).
- engine own time = loop - model call - cell execution (the goal: <= 10 ms).
  Sink time spent inside a model-call window (RootTokens) is counted as storage.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.engine_setup import Doc, cfg, code, events_of, key_for, raw_call  # noqa: E402
from tests.bench.report import load1, row, standalone  # noqa: E402
from tests.bench.server_proc import ServerProcess  # noqa: E402

TURNS = 20
GOAL_MS = 10.0
PROMPT_FUNCTIONS = ("system_prompt", "first_turn", "turn_feedback", "no_code", "final_request")


class Timers:
    """Wraps module functions with a perf_counter timer (instrumentation, same code runs)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self._undo: list = []

    def wrap(self, module, name: str, label: str) -> None:
        original = getattr(module, name)

        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.spent[label] = self.spent.get(label, 0.0) + time.perf_counter() - t
        setattr(module, name, timed)
        self._undo.append((module, name, original))

    def restore(self) -> None:
        for module, name, original in reversed(self._undo):
            setattr(module, name, original)


class TimedSink:
    """The EventWriter as the engine's sink, with each call timed (wall clock kept
    too, to tell which window a call fell into)."""

    def __init__(self, writer) -> None:
        self.writer = writer
        self.calls: list[tuple[float, float]] = []       # (time.time() at start, seconds)
        self.events: list = []

    def __call__(self, event) -> None:
        wall = time.time()
        t = time.perf_counter()
        self.writer(event)
        self.calls.append((wall, time.perf_counter() - t))
        self.events.append(event)

    def inside(self, windows: list[tuple[float, float]]) -> float:
        return sum(d for w, d in self.calls if any(a <= w <= b for a, b in windows))


def thread_cpu_s(native_id: int) -> float:
    with open(f"/proc/self/task/{native_id}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def messages_per_turn(events: list) -> list[list[dict]]:
    """The message list each root call sent, rebuilt from the events."""
    replies = {e.call_id: e.text for e in events_of(events, "RootReplied")}
    history: list[dict] = []
    out = []
    for started in events_of(events, "RootTurnStarted"):
        history = history + list(started.new_messages)
        out.append(list(history))
        history.append({"role": "assistant", "content": replies[started.call_id]})
    return out


async def one_run(server: ServerProcess, store_dir: Path, turns: int) -> dict:
    from core.engine import prompts, rlm
    from core.engine.run import Engine
    from core.store import RunStore
    replies = [code(f"x{i} = {i}\nprint(x{i})") for i in range(turns - 1)] + [code("FINAL('done')")]
    server.script("root", replies=replies)
    store = RunStore.open(store_dir / "runs.db")
    writer = store.writer()
    sink = TimedSink(writer)
    timers = Timers()
    for name in PROMPT_FUNCTIONS:
        timers.wrap(prompts, name, "prompts")
    timers.wrap(rlm, "parse_reply", "parse")
    writer_cpu0 = thread_cpu_s(writer._thread.native_id)
    engine = Engine(cfg(server.url, max_iterations=turns + 1), emit=sink, key_for=key_for)
    try:
        result = await engine.run("overhead", [Doc("a.txt", "x" * 1000)])
    finally:
        timers.restore()
    assert result.answer == "done", result
    t = time.perf_counter()
    writer.flush(timeout=60)
    drain = time.perf_counter() - t
    writer_cpu = thread_cpu_s(writer._thread.native_id) - writer_cpu0
    writer.close()
    store.close()
    events = sink.events
    starts = events_of(events, "RootTurnStarted")
    assert len(starts) == turns
    replied = {e.call_id: e for e in events_of(events, "RootReplied")}
    model_windows = [(s.ts, replied[s.call_id].ts) for s in starts]
    cell_starts = events_of(events, "CellStarted")
    cell_ends = {e.call_id: e for e in events_of(events, "CellExecuted")}
    cell_windows = [(c.ts, cell_ends[c.call_id].ts) for c in cell_starts]
    loop_s = events_of(events, "RunFinished")[0].ts - starts[0].ts
    model_s = sum(b - a for a, b in model_windows)
    cell_s = sum(b - a for a, b in cell_windows)
    sink_s = sum(d for _, d in sink.calls)
    sink_in_model = sink.inside(model_windows)
    sink_in_cells = sink.inside(cell_windows)
    run_started = events_of(events, "RunStarted")[0].ts
    return {
        "turns": turns, "events": len(events), "loop_s": loop_s,
        "start_s": starts[0].ts - run_started,          # worker start + context load + first prompts
        "model_s": model_s - sink_in_model, "cell_s": cell_s - sink_in_cells,
        "worker_cell_s": sum(e.duration_ms for e in cell_ends.values()) / 1000,
        "client_model_s": sum(e.duration_ms for e in replied.values()) / 1000,
        "sink_s": sink_s, "writer_thread_cpu_s": writer_cpu, "writer_drain_s": drain,
        "prompts_s": timers.spent.get("prompts", 0.0), "parse_s": timers.spent.get("parse", 0.0),
        "own_s": loop_s - model_s - cell_s,
        "messages": messages_per_turn(events), "replies": replies,
    }


async def raw_bound(server: ServerProcess, messages: list[list[dict]], replies: list[str]) -> float:
    """The same streamed root calls, made straight through litellm, one after another."""
    server.script("root", replies=list(replies))
    t = time.perf_counter()
    for m in messages:
        await raw_call(server.url, "openai/root", m, stream=True, max_tokens=8192)
    return time.perf_counter() - t


async def measure(quick: bool) -> dict:
    turns = TURNS
    repeats = 1 if quick else 3
    with ServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        await one_run(server, Path(tmp) / "warm", 3)            # imports, clients, first worker
        runs = []
        for i in range(repeats):
            (Path(tmp) / f"r{i}").mkdir()
            r = await one_run(server, Path(tmp) / f"r{i}", turns)
            r["raw_model_s"] = await raw_bound(server, r.pop("messages"), r.pop("replies"))
            r["load1"] = load1()
            runs.append(r)
    best = sorted(runs, key=lambda r: r["own_s"])[len(runs) // 2]      # the median run by own time
    per = {k: v / turns * 1000 for k, v in best.items() if k.endswith("_s") and k != "start_s"}
    load = best["load1"]
    rows = [
        row("root turn, all in (per turn)", per["loop_s"], "ms", load=load),
        row("  model call (ModelClient, streamed)", per["model_s"], "ms",
            bound=f"raw litellm stream {per['raw_model_s']:.1f} ms", ratio=per["model_s"] / per["raw_model_s"],
            load=load),
        row("  cell execution (engine side)", per["cell_s"], "ms",
            bound=f"in the worker {per['worker_cell_s']:.1f} ms", load=load),
        row("  engine own time (turn - model - cell)", per["own_s"], "ms", goal=f"<= {GOAL_MS:g} ms",
            met=per["own_s"] <= GOAL_MS, load=load),
        row("    of which event storage (sink on the loop)", per["sink_s"], "ms", load=load),
        row("    of which prompt building", per["prompts_s"], "ms", load=load),
        row("    of which reply parsing", per["parse_s"], "ms", load=load),
        row("  store writer thread CPU (off the loop)", per["writer_thread_cpu_s"], "ms", load=load,
            note="a separate thread; it competes for the GIL, so part of it shows up in the other figures"),
        row("run start: worker spawn + context + first prompt", best["start_s"] * 1000, "ms", load=load),
        row("events per turn", round(best["events"] / turns, 1), "", load=load),
    ]
    return {"name": "2. engine overhead", "rows": rows,
            "details": {"turns": turns, "runs": runs, "median_run": best}}


def run(quick: bool = False) -> dict:
    return asyncio.run(measure(quick))


if __name__ == "__main__":
    standalone("2. engine overhead", run)
