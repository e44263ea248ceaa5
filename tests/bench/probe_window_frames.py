"""Diagnostic: where the window's worst frames go during a real fan-out (not a benchmark).

    .venv/bin/python tests/bench/probe_window_frames.py [--size 512] [--concurrency N] [--top 12]

Runs the same real question as bench_window_fanout.py (the real window offscreen, the
engine thread, llm_query_batched over N prompts against the scripted server in its own
process) and, per frame of a 16 ms frame timer on the GUI thread, records:
- the frame's wall time, the GUI thread's CPU time in it (time.thread_time) and its time
  waiting for a CPU (/proc/self/task/<tid>/schedstat); the rest of the wall time the GUI
  thread was blocked: waiting for the GIL (or idle, in a frame that is not late);
- the engine thread's CPU time in the same frame (schedstat);
- the time the GUI thread spent in each of the window's Python handlers: the bridge's
  batch (and its size), the fold (RunView.apply), the observers, the call tree's sync,
  the transcript, the meter, the trust tabs' refresh, the tree model's data() calls
  (count and time), and garbage collections.
It prints the worst frames and the totals as JSON.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))
TREE = Path(os.environ.get("RLM_BENCH_TREE") or ROOT)     # the code measured (e.g. /work/main)
if TREE != ROOT:
    sys.path.insert(0, str(TREE))

from tests.bench.bench_window_fanout import LATENCY_S, child_env  # noqa: E402
from tests.bench.report import load1  # noqa: E402

FRAME_MS = 16


def schedstat(tid: int) -> tuple[float, float]:
    """(ms on a CPU, ms waiting for one) of thread `tid` so far."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as f:
            cpu, wait, _ = f.read().split()
        return int(cpu) / 1e6, int(wait) / 1e6
    except (OSError, ValueError):
        return 0.0, 0.0


def others(*skip: int) -> dict[str, tuple[str, float]]:
    """tid -> (name, CPU ms so far) of this process's other threads."""
    out: dict[str, tuple[str, float]] = {}
    names = {t.native_id: t.name for t in threading.enumerate()}
    for tid in os.listdir("/proc/self/task"):
        if int(tid) in skip:
            continue
        name = names.get(int(tid))
        if name is None:
            try:
                with open(f"/proc/self/task/{tid}/comm", encoding="ascii") as f:
                    name = "C:" + f.read().strip()
            except OSError:
                continue
        out[tid] = (name, schedstat(int(tid))[0])
    return out


def stacks(skip: int) -> dict[str, str]:
    """Thread name -> its innermost Python frames now (a sample)."""
    names = {t.ident: t.name for t in threading.enumerate()}
    out = {}
    for ident, frame in sys._current_frames().items():
        if ident == skip:
            continue
        parts = []
        while frame is not None and len(parts) < 4:
            parts.append(f"{frame.f_code.co_name}@{Path(frame.f_code.co_filename).name}:{frame.f_lineno}")
            frame = frame.f_back
        out[names.get(ident, str(ident))] = " < ".join(parts)
    return out


class Acc:
    """Per-frame accumulators of time (ms) and counts, filled by the wrappers below."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = defaultdict(float)
        self.n: dict[str, int] = defaultdict(int)

    def take(self) -> tuple[dict, dict]:
        ms, n = dict(self.ms), dict(self.n)
        self.ms.clear()
        self.n.clear()
        return ms, n


ACC = Acc()


def timed(name: str, fn, count=None):
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            ACC.ms[name] += (time.perf_counter() - t) * 1000
            ACC.n[name] += count(*args) if count else 1
    wrapper.__wrapped__ = fn
    return wrapper


class Frames:
    def __init__(self, engine_tid: int) -> None:
        from PySide6.QtCore import Qt, QTimer
        self.gui_tid = threading.get_native_id()
        self.engine_tid = engine_tid
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(FRAME_MS)
        self.timer.timeout.connect(self._tick)
        self.rows: list[dict] = []
        self._gc_t = 0.0
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict) -> None:
        if threading.get_native_id() != self.gui_tid:
            return
        if phase == "start":
            self._gc_t = time.perf_counter()
        else:
            ACC.ms["gc"] += (time.perf_counter() - self._gc_t) * 1000
            ACC.n["gc"] += 1

    def _sample(self) -> tuple:
        return (time.perf_counter() * 1000, time.thread_time() * 1000, schedstat(self.gui_tid),
                schedstat(self.engine_tid), others(self.gui_tid, self.engine_tid))

    def start(self) -> None:
        self._last = self._sample()
        ACC.take()
        self.timer.start()

    def _tick(self) -> None:
        now = self._sample()
        (w0, c0, (_g0, q0), (e0, eq0), o0), (w1, c1, (_g1, q1), (e1, eq1), o1) = self._last, now
        other: dict[str, float] = defaultdict(float)
        for tid, (name, ms) in o1.items():
            key = name.rstrip("_0123456789") if tid in o0 else "new:" + name
            other[key] += ms - (o0[tid][1] if tid in o0 else 0.0)
        other = {k: round(v, 1) for k, v in other.items() if v >= 0.5}
        ms, n = ACC.take()
        wall, cpu, runq = w1 - w0, c1 - c0, q1 - q0
        self.rows.append({"at_ms": round(w0, 1), "wall_ms": round(wall, 1), "gui_cpu_ms": round(cpu, 1),
                          "gui_runq_ms": round(runq, 1), "gui_blocked_ms": round(max(0.0, wall - cpu - runq), 1),
                          "engine_cpu_ms": round(e1 - e0, 1), "engine_runq_ms": round(eq1 - eq0, 1),
                          "other_threads_cpu_ms": other,
                          "handlers_ms": {k: round(v, 2) for k, v in ms.items()}, "counts": n,
                          "stacks": stacks(threading.get_ident())})
        self._last = self._sample()

    def stop(self) -> None:
        self.timer.stop()


def count_entries() -> None:
    """Count the GUI thread's entries into Python from Qt (each one takes the GIL): calls
    whose caller is the frame that entered Qt's event loop (qasync's run_forever)."""
    def profile(frame, event, _arg):
        if event == "call":
            back = frame.f_back
            if back is not None and back.f_code.co_name == "run_forever":
                ACC.n["entries"] += 1
                ACC.n["entry:" + frame.f_code.co_qualname] += 1
    sys.setprofile(profile)


def instrument(controller) -> None:
    from core.runview import RunView
    from ui.call_tree_model import CallTreeModel
    panes = controller.panes
    bridge = controller.runs.bridge
    bridge._consume = timed("batch", bridge._consume, count=lambda batch, *_: len(batch))
    RunView.apply = timed("fold", RunView.apply)
    for obs in panes.observers:
        obs.feed = timed("observers", obs.feed)
    panes.tree_model.sync = timed("tree_sync", panes.tree_model.sync)
    panes.transcript.flush = timed("transcript", panes.transcript.flush)
    panes.meter.refresh = timed("meter", panes.meter.refresh)
    panes.detail.show_node = timed("detail", panes.detail.show_node)
    if hasattr(panes.tree, "layout_now"):
        panes.tree.layout_now = timed("tree_layout", panes.tree.layout_now)
    panes.flush = timed("panes_flush", panes.flush)
    trust = controller.trust
    trust.refresh = timed("trust_refresh", trust.refresh)
    trust.refresh_projection = timed("trust_projection", trust.refresh_projection)
    trust.results_table.set_rows = timed("results_rows", trust.results_table.set_rows)
    for name in ("data", "rowCount", "index", "parent"):      # only a Python item model's own methods:
        if name in vars(CallTreeModel):                       # wrapping a C++ model's would make them Python
            setattr(CallTreeModel, name, timed(f"tree_{name.lower()}", getattr(CallTreeModel, name)))
    from PySide6.QtCore import QEvent, QObject

    class Paints(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                ACC.n["tree_paints"] += 1
            return False
    controller._probe_paints = Paints()
    panes.tree.viewport().installEventFilter(controller._probe_paints)


async def scenario(window, controller, n: int, concurrency: int, top: int, entries: bool) -> dict:
    import hashlib
    from app.run_service import RunRequest, preload_engine
    from core.ingest.model import Document
    from tests.bench.engine_setup import cfg, code
    from tests.bench.server_proc import ServerProcess
    await asyncio.sleep(1.0)
    await asyncio.to_thread(preload_engine)
    text = "some text to ask about\n" * 100
    doc = Document(path="a.txt", source_path="/a.txt", format="text", text=text, chars=len(text),
                   size=len(text), sha256=hashlib.sha256(text.encode()).hexdigest())
    controller.first_run.hide_welcome()         # as pressing Run does: the run panes are on screen
    engine = controller.runs.engine
    engine.start()
    instrument(controller)
    frames = Frames(engine._thread.native_id)
    if entries:
        count_entries()
    with ServerProcess() as server:
        server.script("sub", fn="ok", latency_s=LATENCY_S)
        for size, timed_run in ((8, False), (n, True)):
            server.script("root", replies=[code(f"out = llm_query_batched([f'p{{i}}' for i in range({size})])"),
                                           code("FINAL(str(len(out)))")])
            config = cfg(server.url, concurrency=min(size, concurrency))
            if timed_run:
                frames.start()
            t0 = time.perf_counter()
            controller.launch(RunRequest.ask("fan out", [doc], config))
            while controller.running:
                await asyncio.sleep(0.01)
            wall = time.perf_counter() - t0
            await asyncio.sleep(0.1)
            if timed_run:
                frames.stop()
                visible = controller.panes.tree.isVisible(), controller.panes.tree.viewport().size().toTuple()
            assert controller.last_outcome.answer == str(size), controller.last_outcome
    rows = frames.rows
    worst = sorted(rows, key=lambda r: -r["wall_ms"])[:top]
    totals: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        for k, v in r["handlers_ms"].items():
            totals[k] += v
        for k, v in r["counts"].items():
            counts[k] += v
    late = [r for r in rows if r["wall_ms"] - FRAME_MS > 30]
    return {"sub_calls": n, "concurrency": min(n, concurrency), "run_s": round(wall, 2), "frames": len(rows),
            "worst_stall_ms": round(max(r["wall_ms"] for r in rows) - FRAME_MS, 1), "load1": load1(),
            "late_frames_over_30ms": len(late), "tree_visible": visible,
            "late_frames_sum": {k: round(sum(r[k] for r in late), 1) for k in
                                ("wall_ms", "gui_cpu_ms", "gui_runq_ms", "gui_blocked_ms", "engine_cpu_ms")},
            "late_frames_other_threads": {k: round(sum(r["other_threads_cpu_ms"].get(k, 0) for r in late), 1)
                                          for k in {k for r in late for k in r["other_threads_cpu_ms"]}},
            "totals_ms": {k: round(v, 1) for k, v in totals.items()},
            "cpu_ms": {"gui": round(sum(r["gui_cpu_ms"] for r in rows)), "engine": round(sum(r["engine_cpu_ms"] for r in rows)),
                       **{k: round(sum(r["other_threads_cpu_ms"].get(k, 0) for r in rows))
                          for k in {k for r in rows for k in r["other_threads_cpu_ms"]}}}, "counts": dict(counts), "worst": worst}


def inner(n: int, concurrency: int, top: int, entries: bool) -> None:
    from tests.bench.window_app import run_in_window
    result = run_in_window(lambda app, window, controller: scenario(window, controller, n, concurrency, top, entries))
    print(json.dumps(result))


def main() -> None:
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=512)
    p.add_argument("--concurrency", type=int, default=1 << 30, help="the run's concurrency (default: all at once)")
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--entries", action="store_true", help="count the GUI thread's entries into Python (slower)")
    p.add_argument("--inner", action="store_true")
    a = p.parse_args()
    if a.inner:
        inner(a.size, a.concurrency, a.top, a.entries)
        return
    tree = TREE
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([sys.executable, str(HERE), "--inner", "--size", str(a.size), "--concurrency",
                              str(a.concurrency), "--top", str(a.top)] + (["--entries"] if a.entries else []), cwd=tree, env=child_env(Path(d), tree),
                             capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(out.stderr[-4000:])
    print(json.dumps(json.loads(out.stdout.strip().splitlines()[-1]), indent=1))


if __name__ == "__main__":
    main()
