"""Bench: the fold of the record, this tree beside another (prints figures; asserts nothing).

    .venv/bin/python -m tests.bench.bench_record_fold [--old /path/to/old/tree] [--rounds 5]

Each round runs one child process per tree (alternating, so both see the same load): it
folds a 5,000-event run into the window's view (core.runview.fold) 20 times and the
coverage fold (core.trust.coverage) once over 1 MB. Printed per tree, medians over the
rounds: the child's own timer (per event) beside its CPU time measured from outside
(os.wait4's rusage), with the machine and /proc/loadavg.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]

CHILD = r"""
import time, statistics
from core.runview import fold
from tests.support.event_streams import big_run
events = big_run(5000)
fold(events)
times = []
for _ in range(20):
    t = time.perf_counter(); fold(events); times.append(time.perf_counter() - t)
print("view", statistics.median(times) / len(events) * 1e6)
from core.trust.coverage import Coverage
from tests.bench.bench_trust import _documents, _events
docs = _documents(1_000_000)
cov_events = _events(docs, 5000)
t = time.perf_counter()
cov = Coverage(docs)
for e in cov_events:
    cov.apply(e)
cov.report()
print("coverage", (time.perf_counter() - t) / len(cov_events) * 1e6)
"""


def child(tree: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree), QT_QPA_PLATFORM="offscreen")
    proc = subprocess.Popen([sys.executable, "-c", CHILD], cwd=tree, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"child in {tree} failed:\n{err}")
    figures = {k: float(v) for k, v in (line.split() for line in out.splitlines())}
    figures["cpu_s"] = usage.ru_utime + usage.ru_stime
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", type=Path, help="another tree (e.g. `git archive main | tar -x -C DIR`)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trees = {"this tree": HERE} | ({"old tree": args.old.resolve()} if args.old else {})
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"load before {Path('/proc/loadavg').read_text().split()[:3]}")
    seen: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            seen[name].append(child(tree))
    for name, rounds in seen.items():
        med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        print(f"{name:>9}: view fold {med['view']:6.2f} us/event; coverage fold {med['coverage']:7.2f} us/event; "
              f"child CPU from outside {med['cpu_s']:5.2f} s (medians of {len(rounds)})")
    print(f"load after {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()
