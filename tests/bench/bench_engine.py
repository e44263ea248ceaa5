"""Engine benchmarks in one command: fan-out, per-turn overhead, big contexts.

    .venv/bin/python tests/bench/bench_engine.py [--quick] [--json OUT]

Each part lives in its own script (bench_fanout.py, bench_overhead.py,
bench_context.py), which tests/bench/run_all.py runs in separate processes;
this runs the three in a row and prints their tables.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench import bench_context, bench_fanout, bench_overhead  # noqa: E402
from tests.bench.report import standalone  # noqa: E402


def run(quick: bool = False) -> dict:
    parts = [bench_fanout.run(quick), bench_overhead.run(quick), bench_context.run(quick)]
    return {"name": "engine (fan-out, overhead, big context)",
            "rows": [r for part in parts for r in part["rows"]],
            "details": {part["name"]: part["details"] for part in parts}}


if __name__ == "__main__":
    standalone("engine", run)
