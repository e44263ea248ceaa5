"""What every benchmark returns, and how it is printed.

A benchmark's `run(...)` returns a dict:

    {"name": "fan-out", "rows": [row(...), ...], "details": {...raw figures...},
     "machine": machine_info(), "seconds": how long it took}

One row is one figure: what was measured, its value, the bound measured in
the same run (if any), the goal from the issues (if any) and whether it is
met, plus the 1-minute load average when it was taken (the machine is shared:
a figure taken at load 6 on 2 cores is not one taken at load 0.5).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.machine import machine_info  # noqa: E402


def load1() -> float:
    return round(os.getloadavg()[0], 2)


def row(measure: str, value: float | int | str | None, unit: str = "", *, bound: str = "",
        ratio: float | None = None, goal: str = "", met: bool | None = None, note: str = "",
        load: float | None = None) -> dict[str, Any]:
    return {"measure": measure, "value": value, "unit": unit, "bound": bound,
            "ratio": None if ratio is None else round(ratio, 2), "goal": goal, "met": met,
            "note": note, "load1": load1() if load is None else load}


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def fmt_value(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if abs(value) >= 100:
            text = f"{value:,.0f}"
        elif abs(value) >= 10:
            text = f"{value:.1f}"
        else:
            text = f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"
    elif isinstance(value, int):
        text = f"{value:,}"
    else:
        text = str(value)
    return f"{text} {unit}".strip()


def verdict(met: bool | None) -> str:
    return {True: "yes", False: "NO", None: ""}[met]


def table_lines(result: dict[str, Any]) -> list[str]:
    """One plain-text table for a benchmark's rows."""
    head = ["Measure", "Value", "Bound (same run)", "Ratio", "Goal", "Met", "Load"]
    body = [[r["measure"], fmt_value(r["value"], r["unit"]), r["bound"],
             "" if r["ratio"] is None else f"{r['ratio']:.2f}x", r["goal"], verdict(r["met"]),
             f"{r['load1']:.1f}"] for r in result.get("rows", [])]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    line = "  ".join("{:<%d}" % w for w in widths)
    out = [f"== {result.get('name', '?')} ({result.get('seconds', 0):.0f} s)",
           line.format(*head), line.format(*("-" * w for w in widths))]
    out += [line.format(*r) for r in body]
    notes = [f"  * {r['measure'].strip()}: {r['note']}" for r in result.get("rows", []) if r.get("note")]
    return out + notes


def markdown_table(result: dict[str, Any]) -> str:
    head = "| Measure | Value | Bound (same run) | Ratio | Goal | Met | Load |\n|---|---|---|---|---|---|---|"
    lines = [head]
    for r in result.get("rows", []):
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        measure = r["measure"].lstrip(" ")
        measure = "&emsp;" * ((len(r["measure"]) - len(measure)) // 2) + measure
        lines.append(f"| {measure} | {fmt_value(r['value'], r['unit'])} | {r['bound']} | {ratio} | "
                     f"{r['goal']} | {verdict(r['met'])} | {r['load1']:.1f} |")
    return "\n".join(lines)


def machine_line(info: dict[str, Any]) -> str:
    pkgs = ", ".join(f"{k} {v}" for k, v in info.get("packages", {}).items() if v)
    return (f"{info.get('cpus')} CPUs ({info.get('cpu')}), {info.get('memory_gb', '?')} GB RAM, "
            f"Python {info.get('python')}, {info.get('platform')}; {pkgs}")


def standalone(name: str, run: Callable[..., dict[str, Any]], add_args: Callable[[Any], None] | None = None
               ) -> None:
    """The `__main__` of a benchmark script: --quick, --json OUT, prints the table."""
    import argparse
    parser = argparse.ArgumentParser(description=f"RLM Studio benchmark: {name}")
    parser.add_argument("--quick", action="store_true", help="reduced sizes")
    parser.add_argument("--json", metavar="OUT", help="write the results here")
    if add_args is not None:
        add_args(parser)
    args = parser.parse_args()
    started = time.perf_counter()
    extra = {k: v for k, v in vars(args).items() if k not in ("quick", "json")}
    result = run(quick=args.quick, **extra)
    result.setdefault("name", name)
    result["seconds"] = round(time.perf_counter() - started, 1)
    result.setdefault("machine", machine_info())
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=str))
    print(machine_line(result["machine"]))
    print("\n".join(table_lines(result)))


class TickTimer:
    """A precise QTimer on the GUI thread that records the gaps between its ticks (ms) and
    the worst one (when, how long): how long the window could not paint. Qt is imported
    only when one is made, so this module stays importable without it."""

    def __init__(self, interval_ms: int) -> None:
        from PySide6.QtCore import Qt, QTimer
        self.interval_ms = interval_ms
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[float] = []
        self.worst = (0.0, 0.0)
        self._last = self._start = 0.0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append((now - self._last) * 1000)
        if self.gaps[-1] > self.worst[1]:
            self.worst = (now, self.gaps[-1])
        self._last = now

    def start(self) -> None:
        self.gaps, self._last, self.worst = [], time.perf_counter(), (0.0, 0.0)
        self._start = self._last
        self.timer.start()
