"""Figures for the run store (prints them; asserts nothing).

    .venv/bin/python tests/bench/bench_store.py [--quick]

1. events/s sustained through EventWriter (and the producer's cost per event)
2. `runs list` with 10,000 runs in the database (in-process and as a CLI process)
3. export time of a 5,000-event run (json / md / html)
4. database growth: a 2-turn run over a 40 MB context, then a second run over the same files
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.ingest.model import Document  # noqa: E402
from core.store import RunStore  # noqa: E402
from tests.support.store_events import synthetic_run  # noqa: E402


def db_bytes(store: RunStore) -> int:
    with store._lock:
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in store.path.parent.glob(store.path.name + "*") if p.is_file())


def bench_throughput(tmp: Path, turns: int) -> None:
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
    print(f"1. EventWriter: {len(events):,} events ({tokens:,} token deltas) written in {elapsed:.2f} s "
          f"= {len(events) / elapsed:,.0f} events/s sustained; producer cost {t_enqueue / len(events) * 1e6:.1f} "
          f"µs/event; {rows:,} rows after coalescing")
    # one streaming run at a time, paced like a fast model: how long until an event is durable
    writer = store.writer()
    lags = []
    for e in synthetic_run("lag", turns=3, tokens_per_turn=100):
        writer(e)
        t = time.perf_counter()
        writer.flush()
        lags.append(time.perf_counter() - t)
    writer.close()
    lags.sort()
    print(f"   commit latency per event, one at a time: median {lags[len(lags) // 2] * 1000:.2f} ms, "
          f"p99 {lags[int(len(lags) * 0.99)] * 1000:.2f} ms")
    store.close()


def bench_list(tmp: Path, n: int) -> None:
    path = tmp / "list" / "runs.db"
    store = RunStore.open(path)
    rng = random.Random(1)
    words = "sales revenue supplier contract clause penalty invoice margin forecast churn region".split()
    writer = store.writer()
    t0 = time.perf_counter()
    for i in range(n):
        q = " ".join(rng.choice(words) for _ in range(8)) + f" #{i}?"
        run = synthetic_run(f"run{i:06d}", question=q, answer=f"answer {i} " + rng.choice(words), turns=0,
                            t0=1_700_000_000 + i * 60, status=rng.choice(["finished", "finished", "capped", "failed"]),
                            root_model=rng.choice(["openai/gpt-x", "anthropic/claude-y", "ollama/qwen"]))
        for e in run:
            writer(e)
    writer.close()
    print(f"2. {n:,} runs written in {time.perf_counter() - t0:.1f} s")
    for label, kw in [("newest 100", {}), ("search 'penalty invoice'", {"search": "penalty invoice"}),
                      ("status=failed", {"status": "failed"}), ("model~claude", {"model": "claude"}),
                      (f"offset {n - 100:,}", {"offset": n - 100})]:
        times = []
        for _ in range(5):
            t = time.perf_counter()
            rows = store.list_runs(**kw)
            times.append(time.perf_counter() - t)
        print(f"   list_runs {label}: {min(times) * 1000:.1f} ms ({len(rows)} rows)")
    store.close()
    env = {**os.environ, "RLM_STUDIO_HOME": str(path.parent)}
    times = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "app.main", "runs", "list", "--json", "--limit", "100"], cwd=ROOT,
                       env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import app.main"], cwd=ROOT, env=env, capture_output=True, check=True)
    startup = time.perf_counter() - t
    print(f"   `rlm-studio runs list --json` as a process: {min(times) * 1000:.0f} ms "
          f"(of which Python start + imports of app.main: {startup * 1000:.0f} ms)")


def bench_export(tmp: Path) -> None:
    store = RunStore.open(tmp / "export.db")
    events = synthetic_run("big", turns=25, cells_per_turn=4, subcalls_per_cell=21, tokens_per_turn=5,
                           output_chars=1500)
    writer = store.writer()
    for e in events:
        writer(e)
    writer.close()
    rows = store.db.execute("SELECT count(*) FROM events WHERE run_id = 'big'").fetchone()[0]
    print(f"3. export of a run with {rows:,} stored events ({len(events):,} emitted):")
    for fmt in ("json", "md", "html"):
        t = time.perf_counter()
        store.export("big", fmt, tmp / f"big.{fmt}")
        print(f"   {fmt}: {(time.perf_counter() - t) * 1000:.0f} ms, {(tmp / f'big.{fmt}').stat().st_size / 1e6:.1f} MB")
    t = time.perf_counter()
    n = sum(1 for _ in store.iter_events("big"))
    print(f"   replay (iter_events, {n:,} events): {(time.perf_counter() - t) * 1000:.0f} ms")
    store.close()


def corpus(total_chars: int, seed: int = 7) -> list[Document]:
    """~40 MB of mixed text: CSV rows, prose and log lines, in 40 files."""
    rng = random.Random(seed)
    vocab = [("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10))))
             for _ in range(20_000)]
    docs, per_file = [], total_chars // 40
    for i in range(40):
        parts, size = [], 0
        kind = i % 3
        while size < per_file:
            if kind == 0:
                line = (f"{rng.randint(2019, 2024)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d},"
                        f"{rng.choice(vocab)},{rng.randint(1, 99999)},{rng.random() * 1000:.2f}\n")
            elif kind == 1:
                line = " ".join(rng.choice(vocab) for _ in range(rng.randint(8, 30))).capitalize() + ".\n"
            else:
                line = (f"2024-03-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} "
                        f"{rng.choice(['INFO', 'WARN', 'ERROR'])} {rng.choice(vocab)}: {rng.choice(vocab)} "
                        f"id={rng.randint(1, 10**9)}\n")
            parts.append(line)
            size += len(line)
        text = "".join(parts)
        docs.append(Document(path=f"data/file{i:02d}.txt", source_path=f"/data/file{i:02d}.txt", format="text",
                             text=text, chars=len(text), size=len(text), sha256=f"{i:064x}"))
    return docs


def bench_growth(tmp: Path, mb: int) -> None:
    store = RunStore.open(tmp / "growth.db")
    docs = corpus(mb * 1_000_000)
    chars = sum(d.chars for d in docs)
    base = db_bytes(store)
    sizes = []
    for run_id in ("first", "second"):
        t = time.perf_counter()
        store.save_sources(run_id, docs, [])
        t_sources = time.perf_counter() - t
        write = store.writer()
        for e in synthetic_run(run_id, turns=2, documents=[{"path": d.path, "chars": d.chars} for d in docs]):
            write(e)
        write.close()
        size = db_bytes(store)
        sizes.append(size)
        print(f"4. run '{run_id}' (2 turns) over {chars / 1e6:.1f} M chars in {len(docs)} files: database +"
              f"{(size - (sizes[-2] if len(sizes) > 1 else base)) / 1e6:.2f} MB (total {size / 1e6:.2f} MB); "
              f"save_sources {t_sources:.2f} s")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bench_throughput(tmp, turns=10 if args.quick else 40)
        bench_list(tmp, 1_000 if args.quick else 10_000)
        bench_export(tmp)
        bench_growth(tmp, 4 if args.quick else 40)


if __name__ == "__main__":
    main()
