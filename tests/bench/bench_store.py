"""Benchmark 6, the run store (figures printed, never asserted):

    .venv/bin/python tests/bench/bench_store.py [--quick] [--json OUT]

1. events/s sustained through EventWriter: a long synthetic run enqueued at
   once, timed until committed (the producer's cost per event beside); bound:
   the same events as JSON rows through a bare sqlite3 executemany, same
   batch size, same WAL settings. Then the commit latency of one event at a time.
2. `runs list` with 10,000 runs: RunStore.list_runs in-process, and
   `rlm-studio runs list --json` as a process; bounds: `python -c pass` and
   Python start + `import app.main`.
3. export of a run with 5,000 stored events (json / md / html), and reading it
   back for replay (iter_events).
4. database growth: a 2-turn run over a 40 MB context, then a second run
   over the same files (the texts are stored once).
--quick: 1,000 runs, a 4 MB context, a shorter stream.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.exports import export  # noqa: E402
from core.store import RunStore  # noqa: E402
from tests.bench.report import load1, median, row, standalone  # noqa: E402
from tests.support.store_events import synthetic_run  # noqa: E402

GOAL_LIST_MS = 200


def db_bytes(path: Path) -> int:
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def bench_throughput(tmp: Path, turns: int) -> dict:
    store = RunStore.open(tmp / "throughput.db")
    events = synthetic_run("tp", turns=turns, cells_per_turn=3, subcalls_per_cell=20, tokens_per_turn=400,
                           output_chars=2000)
    writer = store.writer()
    t0 = time.perf_counter()
    for e in events:
        writer(e)
    t_enqueue = time.perf_counter() - t0
    writer.flush(timeout=600)
    elapsed = time.perf_counter() - t0
    writer.close()
    tokens = sum(e.type == "RootTokens" for e in events)
    rows = store.db.execute("SELECT count(*) FROM events WHERE run_id = 'tp'").fetchone()[0]
    load = load1()
    # one event at a time, as a slow run streams: how long until an event is durable
    writer = store.writer()
    lags = []
    for e in synthetic_run("lag", turns=3, tokens_per_turn=100):
        writer(e)
        t = time.perf_counter()
        writer.flush()
        lags.append(time.perf_counter() - t)
    writer.close()
    store.close()
    lags.sort()
    # the bound: the same events as JSON rows, bare sqlite3, batches of 2000, one commit each
    con = sqlite3.connect(tmp / "bare.db")
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("CREATE TABLE events (run_id TEXT, seq INTEGER, type TEXT, ts REAL, data_json TEXT, "
                "PRIMARY KEY (run_id, seq))")
    t = time.perf_counter()
    for i in range(0, len(events), 2000):
        batch = events[i:i + 2000]
        con.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)",
                        [(e.run_id, e.seq, e.type, e.ts, json.dumps(e.to_dict())) for e in batch])
        con.commit()
    bare = time.perf_counter() - t
    con.close()
    return {"events": len(events), "token_deltas": tokens, "rows": rows, "seconds": elapsed,
            "events_s": len(events) / elapsed, "producer_us": t_enqueue / len(events) * 1e6,
            "bare_sqlite_s": bare, "bare_events_s": len(events) / bare,
            "commit_lag_median_ms": lags[len(lags) // 2] * 1000,
            "commit_lag_p99_ms": lags[int(len(lags) * 0.99)] * 1000, "load1": load}


def timed_process(argv: list[str], env: dict, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    return median(times)


def bench_list(tmp: Path, n: int) -> dict:
    path = tmp / "list" / "runs.db"
    store = RunStore.open(path)
    rng = random.Random(1)
    words = "sales revenue supplier contract clause penalty invoice margin forecast churn region".split()
    writer = store.writer()
    t0 = time.perf_counter()
    for i in range(n):
        q = " ".join(rng.choice(words) for _ in range(8)) + f" #{i}?"
        for e in synthetic_run(f"run{i:06d}", question=q, answer=f"answer {i} " + rng.choice(words), turns=0,
                               t0=1_700_000_000 + i * 60,
                               status=rng.choice(["finished", "finished", "capped", "failed"]),
                               root_model=rng.choice(["openai/gpt-x", "anthropic/claude-y", "ollama/qwen"])):
            writer(e)
    writer.close()
    fill_s = time.perf_counter() - t0
    queries = {}
    for label, kw in [("newest 100", {}), ("search 'penalty invoice'", {"search": "penalty invoice"}),
                      ("status=failed", {"status": "failed"}), ("model~claude", {"model": "claude"}),
                      (f"offset {n - 100:,}", {"offset": n - 100}), ("newest 500 (the window's history)",
                                                                   {"limit": 500})]:
        times = []
        for _ in range(5):
            t = time.perf_counter()
            found = store.list_runs(**kw)
            times.append(time.perf_counter() - t)
        queries[label] = {"ms": median(times) * 1000, "rows": len(found)}
    store.close()
    env = {**os.environ, "RLMSTUDIO_DESKTOP_HOME": str(path.parent)}
    exe = ROOT / ".venv" / "bin" / "rlm-studio"
    argv = [str(exe)] if exe.exists() else [sys.executable, "-m", "app.main"]
    cli = timed_process(argv + ["runs", "list", "--json", "--limit", "100"], env)
    bare_python = timed_process([sys.executable, "-c", "pass"], env)
    import_main = timed_process([sys.executable, "-c", "import app.main"], env)
    return {"runs": n, "fill_s": fill_s, "queries": queries, "cli_s": cli, "cli_argv": argv,
            "python_start_s": bare_python, "import_app_main_s": import_main, "load1": load1()}


def stored_run(run_id: str) -> list:
    """A run that the store keeps as about 5,200 events (token deltas are coalesced:
    5,316 emitted -> 5,211 stored), shaped like a long real one: 20 turns, 4 cells
    each, 21 sub-calls per cell, a nested RLM."""
    return synthetic_run(run_id, turns=20, cells_per_turn=4, subcalls_per_cell=21, tokens_per_turn=5,
                         output_chars=1500)


def bench_export(tmp: Path) -> dict:
    store = RunStore.open(tmp / "export.db")
    events = stored_run("big")
    writer = store.writer()
    for e in events:
        writer(e)
    writer.close()
    rows = store.db.execute("SELECT count(*) FROM events WHERE run_id = 'big'").fetchone()[0]
    formats = {}
    for fmt in ("json", "md", "html"):
        t = time.perf_counter()
        export(store, "big", fmt, tmp / f"big.{fmt}")
        formats[fmt] = {"ms": (time.perf_counter() - t) * 1000, "mb": (tmp / f"big.{fmt}").stat().st_size / 1e6}
    t = time.perf_counter()
    n = sum(1 for _ in store.iter_events("big"))
    replay_ms = (time.perf_counter() - t) * 1000
    store.close()
    return {"stored_events": rows, "emitted_events": len(events), "formats": formats, "iter_events": n,
            "iter_events_ms": replay_ms, "load1": load1()}


def bench_growth(tmp: Path, mb: int) -> dict:
    from tests.bench.bench_context import MB, corpus
    path = tmp / "growth.db"
    store = RunStore.open(path)
    docs = corpus(mb * MB)
    chars = sum(d.chars for d in docs)
    sizes = [db_bytes(path)]
    runs = []
    for run_id in ("first", "second"):
        t = time.perf_counter()
        store.save_sources(run_id, docs, [])
        t_sources = time.perf_counter() - t
        write = store.writer()
        for e in synthetic_run(run_id, turns=2, documents=[{"path": d.path, "chars": d.chars} for d in docs]):
            write(e)
        write.close()
        sizes.append(db_bytes(path))
        runs.append({"run": run_id, "growth_mb": (sizes[-1] - sizes[-2]) / 1e6, "save_sources_s": t_sources})
    store.close()
    return {"context_mb": chars / 1e6, "runs": runs, "total_mb": sizes[-1] / 1e6, "load1": load1()}


def run(quick: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        tp = bench_throughput(tmp, turns=10 if quick else 40)
        ls = bench_list(tmp, 1_000 if quick else 10_000)
        shutil.rmtree(tmp / "list")
        ex = bench_export(tmp)
        gr = bench_growth(tmp, 4 if quick else 40)
    n = ls["runs"]
    q = ls["queries"]
    rows = [
        row("EventWriter: events/s sustained", tp["events_s"], "events/s",
            bound=f"bare sqlite3 {tp['bare_events_s']:,.0f} events/s", ratio=tp["events_s"] / tp["bare_events_s"],
            load=tp["load1"], note=f"{tp['events']:,} events ({tp['token_deltas']:,} token deltas, "
                                   f"{tp['rows']:,} rows after coalescing); producer cost "
                                   f"{tp['producer_us']:.1f} us/event on the caller's thread"),
        row("EventWriter: commit latency, one event at a time (median / p99)",
            f"{tp['commit_lag_median_ms']:.2f} / {tp['commit_lag_p99_ms']:.2f}", "ms", load=tp["load1"]),
    ]
    for label, figure in q.items():
        rows.append(row(f"list_runs with {n:,} runs: {label}", figure["ms"], "ms",
                        goal=f"< {GOAL_LIST_MS} ms" if label == "newest 100" else "",
                        met=(figure["ms"] < GOAL_LIST_MS) if label == "newest 100" else None, load=ls["load1"]))
    rows.append(row(f"`rlm-studio runs list --json` with {n:,} runs (a process)", ls["cli_s"] * 1000, "ms",
                    bound=f"python -c pass {ls['python_start_s'] * 1000:.0f} ms; "
                          f"import app.main {ls['import_app_main_s'] * 1000:.0f} ms",
                    ratio=ls["cli_s"] / ls["import_app_main_s"], goal=f"< {GOAL_LIST_MS} ms",
                    met=ls["cli_s"] * 1000 < GOAL_LIST_MS, load=ls["load1"]))
    for fmt, figure in ex["formats"].items():
        rows.append(row(f"export of a {ex['stored_events']:,}-event run: {fmt}", figure["ms"], "ms",
                        note=f"{figure['mb']:.1f} MB" if fmt == "json" else "", load=ex["load1"]))
    rows.append(row(f"read back for replay (iter_events, {ex['iter_events']:,} events)", ex["iter_events_ms"], "ms",
                    load=ex["load1"]))
    for r in gr["runs"]:
        rows.append(row(f"database growth, {r['run']} 2-turn run over {gr['context_mb']:.0f} MB", r["growth_mb"],
                        "MB", ratio=r["growth_mb"] / gr["context_mb"],
                        bound="reference RLM log: 162 MB for a 2-turn run over 40 MB" if r["run"] == "first" else "",
                        note=f"save_sources {r['save_sources_s']:.2f} s", load=gr["load1"]))
    return {"name": "6. store", "rows": rows,
            "details": {"throughput": tp, "list": ls, "export": ex, "growth": gr}}


if __name__ == "__main__":
    standalone("6. store", run)
