"""One big file through `rlm-studio ask` (figures printed, never asserted):

    .venv/bin/python tests/bench/bench_bigfile.py [--kinds mbox,log,csv] [--mbox-mb 2048]
        [--log-mb 1024] [--csv-mb 512] [--dir /tmp/rlm-bigfile] [--runs 2] [--keep]

Generates a mailbox (10 kB messages: 2 GB is about 200,000), a server log and a CSV into --dir
(`df -h` it first: the files, their sidecar text and the context file need about three times
their size), then runs `ask` on each twice with one fresh home, so the second run takes the
unchanged file back from the first (its extracts row and sidecar). The scripted root counts in
its first cell (the planted word message by message through documents[0]["messages"], the
ERROR lines, the refunded rows and the CSV's `tables` rows) and answers (tests/support/big_files.py
COUNTS, the same as tests/integration/test_big_files.py). One command runs the three files named
by the issue (2 GB mailbox, 1 GB log, 512 MB CSV), each twice; a table row per run, with the load. Printed per run, all from outside the CLI:
  wall      launch to exit
  first     launch to the first model request (the scripted server's request log)
  peak MB   resident memory summed over the CLI's whole process tree (REPL worker, ingest
            workers, fork server), sampled from /proc every 20 ms
  x file    that peak over the file's size
  CPU s     user + system time of the CLI and the processes it waited for (getrusage of
            the children): what the run costs whatever the load
The files are deleted at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.machine import machine_info  # noqa: E402
from tests.bench.server_proc import ServerProcess  # noqa: E402
from tests.support.big_files import COUNTS  # noqa: E402
from tests.support.proc_tree import run_measured  # noqa: E402

def run_ask(server: ServerProcess, path: Path, home: Path, counting: str, timeout_s: float,
            extra: list[str]) -> dict:
    server.script("root", replies=[f"```repl\nFINAL(str({counting}))\n```"])
    server.log()                                           # clear
    env = dict(os.environ, RLMSTUDIO_DESKTOP_HOME=str(home), OPENAI_API_KEY="sk-bench", PYTHONPATH=str(ROOT),
               PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    cmd = [sys.executable, "-m", "app.main", "ask", "How many?", str(path), "--root", "openai/root",
           "--sub", "openai/sub", "--api-base", server.url, "--mode", "rlm", "--json", "--quiet", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc, out, err, started, wall, sampler = run_measured(cmd, timeout_s, cwd=ROOT, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    roots = [r for r in server.log() if r["model"].endswith("root")]
    try:
        data = json.loads(out)
        answer = data.get("answer")
        status = data.get("status") + (f": {str(data.get('error'))[:160]}" if data.get("error") else "")
    except ValueError:
        answer, status = None, f"exit {proc.returncode}: {err.strip().splitlines()[-1:] or out[:200]}"
    return {"wall": wall, "cpu": cpu, "first": roots[0]["started"] - started if roots else None,
            "peak_mb": sampler.peak_kb / 1024, "repl_mb": sampler.repl_peak_kb / 1024,
            "rest_mb": sampler.rest_peak_kb / 1024, "answer": answer, "status": status}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kinds", default="mbox,log,csv")
    parser.add_argument("--mbox-mb", type=int, default=2048)
    parser.add_argument("--log-mb", type=int, default=1024)
    parser.add_argument("--csv-mb", type=int, default=512)
    parser.add_argument("--dir", default="/tmp/rlm-bigfile")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument("--memory-limit-mb", type=int, help="the REPL worker's memory limit (ask's flag)")
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    info = machine_info()
    print(f"{info['cpus']} cpus, {info['cpu']}, {info['memory_gb']} GB RAM, python {info['python']}; "
          f"{free / 2**30:,.0f} GB free in {folder}")
    print("| file | run | wall s | CPU s | first request s | peak MB (REPL + rest) | x file | answer | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    sizes = {"mbox": args.mbox_mb, "log": args.log_mb, "csv": args.csv_mb}
    with ServerProcess() as server:
        for kind in args.kinds.split(","):
            name, write, counting, right = COUNTS[kind]
            path = folder / name
            made = time.monotonic()
            expected = right(*write(path, sizes[kind] << 20))
            size = path.stat().st_size
            print(f"(generated {name}: {size:,} bytes in {time.monotonic() - made:.0f} s)", flush=True)
            try:
                with tempfile.TemporaryDirectory(prefix="rlm-bigfile-home-", dir=folder) as home:
                    for run in range(1, args.runs + 1):
                        extra = ["--memory-limit-mb", str(args.memory_limit_mb)] if args.memory_limit_mb else []
                        r = run_ask(server, path, Path(home), counting, args.timeout, extra)
                        ok = "right" if r["answer"] == expected else \
                            f"WRONG ({r['answer']!r}, {r['status']})"
                        first = "-" if r["first"] is None else f"{r['first']:.1f}"
                        print(f"| {name} {size / 2**20:,.0f} MB | {run} | {r['wall']:.1f} | {r['cpu']:.1f} | {first} | "
                              f"{r['peak_mb']:,.0f} ({r['repl_mb']:,.0f} + {r['rest_mb']:,.0f}) | "
                              f"{r['peak_mb'] * 2**20 / size:.2f} | {ok} | {os.getloadavg()[0]:.1f} |", flush=True)
            finally:
                if not args.keep:
                    path.unlink()


if __name__ == "__main__":
    main()
