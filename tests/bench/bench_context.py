"""Benchmark 3, big context: 4, 40 and 200 MB of text through a real run with
a real RunStore (events and save_sources, as the app composes it in
app.runner.QuestionRun): time to the first cell result, peak memory of the
engine process and of the REPL worker, database growth.

    .venv/bin/python tests/bench/bench_context.py [--quick] [--json OUT] [--mb N]

Each size runs in its own process (--mb N), so peaks do not mix. Method:
- the documents (core.ingest.model.Document, 40 files of mixed log, CSV and
  prose lines) are built first; then the engine's VmHWM is reset
  (/proc/self/clear_refs) and the growth is VmHWM after the run minus the RSS
  with the documents already in memory (what ingestion left behind).
- the worker's peak is its own VmHWM, read by model code from /proc/self/status
  in the last cell; the worker's baseline is the same figure for a 1-character
  context, measured first in the same process.
- first cell result: from the call to QuestionRun.execute() to the first
  CellExecuted event (`print(len(context))`), which includes the worker start,
  writing the context file and the worker loading it (and, beside it in a
  thread, save_sources hashing and compressing the texts); the median of 3
  runs (2 for 200 MB); peaks are the highest of the runs.
- database growth: size of the database files (after a WAL checkpoint) before
  and after the run; the texts are stored once, compressed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.engine_setup import Doc, cfg, code, events_of, key_for  # noqa: E402
from tests.bench.report import load1, median, row, standalone  # noqa: E402
from tests.bench.server_proc import ServerProcess  # noqa: E402

MB = 1_000_000
FILES = 40
GOAL_FIRST_CELL_S = 1.0
GOAL_PEAK_X = 2.5
PEAK_CELL = ("peak = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
             "FINAL(peak)")


def vm_kb(field: str, pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")          # resets VmHWM to the current RSS
        return True
    except OSError:
        return False


def corpus(total_chars: int, seed: int = 7) -> list:
    """Mixed text that compresses like real logs and tables do (not one repeated line)."""
    from core.ingest.model import Document
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10)))
             for _ in range(5000)]
    pool = []
    for i in range(50_000):
        kind = i % 3
        if kind == 0:
            pool.append(f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d},{rng.choice(vocab)},"
                        f"{rng.randint(1, 99999)},{rng.random() * 1000:.2f}\n")
        elif kind == 1:
            pool.append(" ".join(rng.choice(vocab) for _ in range(rng.randint(6, 20))).capitalize() + ".\n")
        else:
            pool.append(f"2024-03-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} "
                        f"{rng.choice(['INFO', 'WARN', 'ERROR'])} {rng.choice(vocab)}: {rng.choice(vocab)} "
                        f"id={rng.randint(1, 10**9)}\n")
    mean = sum(map(len, pool)) / len(pool)
    per_file = total_chars // FILES
    docs = []
    for i in range(FILES):
        text = "".join(rng.choices(pool, k=int(per_file / mean * 1.05) + 1))[:per_file]
        data = text.encode()
        docs.append(Document(path=f"data/file{i:02d}.txt", source_path=f"/data/file{i:02d}.txt",
                             format="text", text=text, chars=len(text), size=len(data),
                             sha256=hashlib.sha256(data).hexdigest()))
    return docs


def db_bytes(path: Path) -> int:
    import sqlite3
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


async def worker_baseline(server: ServerProcess) -> float:
    from core.engine.run import Engine
    server.script("root", replies=[code(PEAK_CELL)])
    result = await Engine(cfg(server.url), emit=lambda e: None, key_for=key_for).run("w", [Doc("w.txt", "w")])
    return int(result.answer) * 1024 / MB


async def one_size(mb: int, repeats: int) -> dict:
    from app.runner import QuestionRun
    from core.store import RunStore
    docs = corpus(mb * MB)
    chars = sum(d.chars for d in docs)
    runs = []
    with ServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        base_worker = await worker_baseline(server)          # also warms litellm and the client
        store_path = Path(tmp) / "runs.db"
        store = RunStore.open(store_path)
        for _ in range(repeats):     # the same files again: later runs find the texts stored
            db_before = db_bytes(store_path)
            server.script("root", replies=[code("print(len(context))"), code(PEAK_CELL)])
            events: list = []
            run = QuestionRun("big", documents=docs, config=cfg(server.url), sinks=[events.append], store=store,
                              key_for=key_for)
            can_reset = reset_hwm()
            engine_before = vm_kb("VmRSS") * 1024 / MB
            t0 = time.time()
            outcome = await run.execute()
            engine_peak = vm_kb("VmHWM") * 1024 / MB
            assert outcome.status == "finished", outcome
            first_cell = events_of(events, "CellExecuted")[0]
            assert int(first_cell.stdout.strip()) >= chars, first_cell.stdout[:200]
            runs.append({"first_cell_s": first_cell.ts - t0,
                         "run_started_to_first_cell_s": first_cell.ts - events_of(events, "RunStarted")[0].ts,
                         "run_s": outcome.finished_at - t0, "engine_rss_with_documents_mb": engine_before,
                         "engine_peak_mb": engine_peak,
                         "engine_growth_mb": engine_peak - engine_before if can_reset else None,
                         "worker_peak_mb": int(outcome.answer) * 1024 / MB,
                         "db_growth_mb": (db_bytes(store_path) - db_before) / MB, "load1": load1()})
        store.close()
    growth = [r["engine_growth_mb"] for r in runs if r["engine_growth_mb"] is not None]
    return {"context_mb": round(chars / MB, 1), "documents": len(docs), "repeats": repeats, "runs": runs,
            "first_cell_s": median([r["first_cell_s"] for r in runs]),
            "engine_rss_with_documents_mb": runs[0]["engine_rss_with_documents_mb"],
            "engine_growth_mb": max(growth) if growth else None,
            "worker_baseline_mb": base_worker, "worker_peak_mb": max(r["worker_peak_mb"] for r in runs),
            "db_growth_mb": runs[0]["db_growth_mb"],
            "db_growth_later_mb": max((r["db_growth_mb"] for r in runs[1:]), default=None),
            "load1": median([r["load1"] for r in runs])}


def rows_for(r: dict) -> list[dict]:
    ctx = r["context_mb"]
    name = f"{ctx:g} MB"
    goals = ctx >= 30 and ctx < 100        # the goals are stated for 40 MB
    worker_x = r["worker_peak_mb"] / ctx
    engine_x = None if r["engine_growth_mb"] is None else r["engine_growth_mb"] / ctx
    load = r["load1"]
    return [
        row(f"{name}: first cell result (median of {r['repeats']})", r["first_cell_s"], "s", goal=f"<= {GOAL_FIRST_CELL_S:g} s" if goals else "",
            met=(r["first_cell_s"] <= GOAL_FIRST_CELL_S) if goals else None, load=load),
        row(f"{name}: worker peak RSS", r["worker_peak_mb"], "MB",
            bound=f"empty worker {r['worker_baseline_mb']:.0f} MB", ratio=worker_x,
            goal=f"< {GOAL_PEAK_X:g}x context" if goals else "",
            met=(worker_x < GOAL_PEAK_X) if goals else None, load=load,
            note=f"above the empty worker: {(r['worker_peak_mb'] - r['worker_baseline_mb']) / ctx:.2f}x the context "
                 "(`context` once, `documents` cut their text from it when read; plus the block "
                 "being read and decoded)"),
        row(f"{name}: engine peak growth", r["engine_growth_mb"], "MB",
            bound=f"RSS with docs {r['engine_rss_with_documents_mb']:.0f} MB", ratio=engine_x,
            goal=f"< {GOAL_PEAK_X:g}x context" if goals else "",
            met=(engine_x < GOAL_PEAK_X) if goals and engine_x is not None else None, load=load),
        row(f"{name}: database growth", r["db_growth_mb"], "MB", ratio=r["db_growth_mb"] / ctx,
            bound="the context, stored once compressed", load=load,
            note="" if r["db_growth_later_mb"] is None else
            f"a later run over the same files: +{r['db_growth_later_mb']:.2f} MB"),
    ]


def run(quick: bool = False, mb: int | None = None) -> dict:
    if mb:
        r = asyncio.run(one_size(mb, 2 if mb > 100 else 3))
        return {"name": f"3. big context {mb} MB", "rows": rows_for(r), "details": {"sizes": [r]}}
    sizes = [4, 40] if quick else [4, 40, 200]
    results, rows = [], []
    for size in sizes:
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            subprocess.run([sys.executable, __file__, "--mb", str(size), "--json", out.name],
                           check=True, stdout=subprocess.DEVNULL)
            r = json.loads(Path(out.name).read_text())["details"]["sizes"][0]
        results.append(r)
        rows += rows_for(r)
    return {"name": "3. big context", "rows": rows, "details": {"sizes": results}}


if __name__ == "__main__":
    standalone("3. big context", run,
               lambda p: p.add_argument("--mb", type=int, help="one size, in this process"))
