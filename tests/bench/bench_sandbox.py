"""Benchmark: what the worker's sandbox costs. Worker start (spawn to hello_ok) before and
after the layered sandbox, and the first cell over a 40 MB context, in one run.

    .venv/bin/python tests/bench/bench_sandbox.py [--quick] [--json OUT] [--base COMMIT] [--also COMMIT]

"Before" is the worker of --base (default: the last commit before the sandbox work, or
$RLM_BENCH_BASE), taken from git into a temp dir and run by the same interpreter. Each
variant runs in its own process; N starts are interleaved round-robin across variants so
machine load hits them alike; the figure is the median (and p90) of ReplClient.start(),
which is spawn, the sandbox set-up, and the hello/hello_ok handshake.
Both trees are compiled first (.pyc), as in an installed app.
First cell: ReplClient.load_context(40 x 1 MB documents) plus the first execute().
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.report import load1, median, row, standalone  # noqa: E402

BASE = os.environ.get("RLM_BENCH_BASE", "7a20b4c")

CHILD = r'''
import asyncio, json, resource, sys, time
from core.repl.client import ReplClient, default_worker_command

def children_cpu_ms():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1000

async def noop(request):
    return [{"ok": ""} for _ in request.prompts]

async def main(mode, n, ctx_mb):
    cmd = default_worker_command() + (["--no-namespace"] if mode == "fallback" else [])
    starts, cpu, setup = [], [], []
    for _ in range(n):
        repl = ReplClient(on_sub_call=noop, worker_command=cmd)
        c = children_cpu_ms()
        t = time.perf_counter()
        await repl.start()
        starts.append((time.perf_counter() - t) * 1000)
        steps = repl.sandbox.get("setup_ms") or {}
        setup.append(steps.get("exec") or steps.get("worker") or steps.get("seccomp"))   # exec: issue 24
        await repl.close()
        cpu.append(children_cpu_ms() - c)
    first = None
    if ctx_mb:
        docs = [{"path": f"doc{i:02}.txt", "text": (f"document {i} " + "lorem ipsum dolor " * 58_000)[:1_000_000]}
                for i in range(ctx_mb)]
        repl = ReplClient(on_sub_call=noop, worker_command=cmd)
        t = time.perf_counter()
        await repl.start()
        await repl.load_context(docs)
        r = await repl.execute("print(len(context))", timeout_s=120)
        first = (time.perf_counter() - t) * 1000
        assert int(r.stdout) > ctx_mb * 900_000, r
        await repl.close()
    print(json.dumps({"starts_ms": starts, "cpu_ms": cpu, "setup_ms": setup, "first_cell_ms": first}))

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
'''


def _base_tree(commit: str) -> Path | None:
    out = Path(tempfile.mkdtemp(prefix="rlm-bench-base-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "core"], capture_output=True)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out


def _precompile(tree: Path) -> None:
    """Both trees with their .pyc, as an installed app has them: otherwise a worker run under
    PYTHONDONTWRITEBYTECODE compiles its modules at every start and the figure measures the
    compiler (the base tree has fewer modules, so that would also skew the difference)."""
    import compileall
    compileall.compile_dir(str(tree / "core"), quiet=1, workers=1)


def _child(tree: Path, mode: str, n: int, ctx_mb: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, str(n), str(ctx_mb)], env=env,
                          capture_output=True, text=True, timeout=900, cwd=str(tree))
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(quick: bool = False, base: str = BASE, also: str | None = None) -> dict:
    """`also`: a third tree (a commit between --base and this checkout: "main" in the rows),
    interleaved with the other two the same way."""
    rounds, per_round = (5, 3) if quick else (5, 6)   # quick: 15 starts a variant (9 did not settle at load 6)
    ctx_mb = 4 if quick else 40
    trees = {"after": ROOT}
    for label, commit in (("before", base), ("main", also)):
        tree = _base_tree(commit) if commit else None
        if tree is not None:
            _precompile(tree)
            trees[label] = tree
    _precompile(ROOT)
    order = [t for t in ("before", "main", "after") if t in trees]
    variants = {f"{t}, {mode}": (trees[t], mode) for t in order for mode in ("namespace", "fallback")}
    starts: dict[str, list[float]] = {k: [] for k in variants}
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    setup: dict[str, list[float]] = {k: [] for k in variants}
    loads = [load1()]
    for _ in range(rounds):                      # interleaved: load hits every variant alike
        for name, (where, mode) in variants.items():
            got = _child(where, mode, per_round, 0)
            starts[name] += got["starts_ms"]
            cpu[name] += got["cpu_ms"]
            setup[name] += [s for s in got["setup_ms"] if s is not None]
        loads.append(load1())
    firsts = {name: _child(where, mode, 1, ctx_mb)["first_cell_ms"] for name, (where, mode) in variants.items()}
    load_note = f"1-min load {min(loads):.1f}-{max(loads):.1f} over the rounds, {os.cpu_count()} CPUs"
    rows = []
    for name, values in starts.items():
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) >= 10 else max(values)
        rows.append(row(f"worker start to hello_ok, {name}", round(median(values), 1), "ms",
                        note=f"p90 {p90:.1f} ms over {len(values)} starts; {load_note}"))
    for name, values in cpu.items():
        rows.append(row(f"CPU of one worker's life (start, hello, close), {name}", round(median(values), 1),
                        "ms", note="user+sys of the worker and its children (less sensitive to load)"))
    for name, values in setup.items():
        if values:
            rows.append(row(f"sandbox set-up inside the worker, {name}", round(median(values), 1), "ms",
                            note="hello_ok setup_ms: from the first step to the worker proper (namespace mode since issue 24: to its second interpreter running)"))
    for mode in ("namespace", "fallback"):
        before = f"before, {mode}"
        if before not in starts:
            continue
        for tree in order[1:]:
            now = f"{tree}, {mode}"
            delta = median(starts[now]) - median(starts[before])
            rows.append(row(f"start cost against {base}, {tree}, {mode}", round(delta, 1), "ms",
                            bound=f"before {median(starts[before]):.1f} ms",
                            ratio=median(starts[now]) / median(starts[before]), goal="<= +10 ms (issue 24)",
                            met=delta <= 10))
            cdelta = median(cpu[now]) - median(cpu[before])
            rows.append(row(f"CPU cost against {base}, {tree}, {mode}", round(cdelta, 1), "ms",
                            bound=f"before {median(cpu[before]):.1f} ms",
                            ratio=median(cpu[now]) / median(cpu[before]), goal="<= +10 ms (issue 24)",
                            met=cdelta <= 10))
    for name, ms in firsts.items():
        rows.append(row(f"first cell, {ctx_mb} MB context, {name}", round(ms, 1), "ms"))
    return {"name": "sandbox", "rows": rows, "details": {"starts_ms": starts, "cpu_ms": cpu, "first_cell_ms": firsts,
                                                         "base": base, "also": also, "loads": loads}}


if __name__ == "__main__":
    def flags(parser):
        parser.add_argument("--base", default=BASE)
        parser.add_argument("--also", default=None, metavar="COMMIT",
                            help="a third tree in the same run (e.g. main before this branch)")
    standalone("sandbox", run, flags)
