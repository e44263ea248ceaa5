"""Run every benchmark, each in its own process, print one table per benchmark
and write one JSON file of results.

    .venv/bin/python tests/bench/run_all.py [--quick] [--out bench-results.json]
                                            [--only fanout,store] [--markdown tables.md]

--quick runs reduced sizes (a few minutes in all); the full run takes about
ten minutes on 2 cores. Each benchmark starts what it needs itself (the
scripted OpenAI-compatible server on 127.0.0.1, temporary stores, an offscreen
window); nothing touches the user's data or keychain. A benchmark that fails
is recorded with its error and the others still run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from tests.bench.machine import machine_info  # noqa: E402
from tests.bench.report import machine_line, markdown_table, table_lines  # noqa: E402

BENCHMARKS = [            # (key, script, timeout in seconds for the full run)
    ("fanout", "bench_fanout.py", 900),
    ("overhead", "bench_overhead.py", 600),
    ("context", "bench_context.py", 1800),
    ("nested", "bench_nested.py", 600),
    ("ingest", "bench_ingest.py", 1200),
    ("documents", "bench_documents.py", 1200),
    ("store", "bench_store.py", 1200),
    ("gui", "bench_gui.py", 900),
    ("window-fanout", "bench_window_fanout.py", 1500),
    ("outside", "bench_outside.py", 1500),     # rlm-studio ask as a process, from the server's log
    ("reply-cut", "bench_reply_cut.py", 300),  # a degenerate root reply, cut: when the server saw it
]


def run_one(script: str, quick: bool, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        argv = [sys.executable, str(HERE / script), "--json", str(out)] + (["--quick"] if quick else [])
        started = time.perf_counter()
        try:
            proc = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except subprocess.TimeoutExpired:
            return {"name": script, "error": f"timed out after {timeout:g} s", "rows": [],
                    "seconds": time.perf_counter() - started}
        if proc.returncode != 0 or not out.exists():
            return {"name": script, "error": f"exit {proc.returncode}: {proc.stderr[-2000:]}", "rows": [],
                    "seconds": time.perf_counter() - started}
        result = json.loads(out.read_text())
        result["script"] = script
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description="Run all RLM Studio benchmarks.")
    parser.add_argument("--quick", action="store_true", help="reduced sizes, a few minutes in all")
    parser.add_argument("--out", default="bench-results.json", help="JSON file of results")
    parser.add_argument("--only", help="comma-separated: " + ",".join(k for k, _, _ in BENCHMARKS))
    parser.add_argument("--markdown", metavar="FILE", help="also write the tables as Markdown")
    args = parser.parse_args()
    chosen = [b for b in BENCHMARKS if not args.only or b[0] in args.only.split(",")]
    machine = machine_info()
    print(machine_line(machine), flush=True)
    print(f"load average at start: {machine['loadavg']}; {'quick' if args.quick else 'full'} run of "
          f"{len(chosen)} benchmarks\n", flush=True)
    started = time.perf_counter()
    results = []
    for key, script, timeout in chosen:
        print(f"... {key} ({script})", file=sys.stderr, flush=True)
        result = run_one(script, args.quick, timeout)
        result["key"] = key
        results.append(result)
        if result.get("error"):
            print(f"== {result['name']}: FAILED: {result['error']}\n", flush=True)
        else:
            print("\n".join(table_lines(result)) + "\n", flush=True)
    total = time.perf_counter() - started
    missed = [(r["name"], row["measure"]) for r in results for row in r.get("rows", []) if row.get("met") is False]
    doc = {"machine": machine, "quick": args.quick, "seconds": round(total, 1),
           "finished_utc": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "loadavg_end": [round(x, 2) for x in os.getloadavg()], "benchmarks": results,
           "goals_missed": missed}
    Path(args.out).write_text(json.dumps(doc, indent=2, default=str))
    if args.markdown:
        parts = [f"Machine: {machine_line(machine)}. Run finished {doc['finished_utc']}, "
                 f"{'quick' if args.quick else 'full'}, {total / 60:.1f} min."]
        for r in results:
            parts.append(f"### {r['name']}\n\n" + (f"FAILED: {r['error']}" if r.get("error") else markdown_table(r)))
            notes = [f"- {row['measure'].strip()}: {row['note']}" for row in r.get("rows", []) if row.get("note")]
            if notes:
                parts.append("\n".join(notes))
        Path(args.markdown).write_text("\n\n".join(parts) + "\n")
    print(f"all benchmarks: {total / 60:.1f} min; results in {args.out}")
    if missed:
        print("goals missed: " + "; ".join(f"{name}: {measure}" for name, measure in missed))
    failed = [r["name"] for r in results if r.get("error")]
    if failed:
        print("benchmarks that failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
