"""RLM Studio beside the reference implementation (PyPI `rlms` 0.1.3), measured from outside:
both as real processes against the same scripted OpenAI-compatible server (its own process),
alternating run by run in one run so both see the same machine load.

    .venv/bin/python tests/bench/bench_reference.py [--quick] [--json OUT]
                     [--only start,big,batched] [--repeats N] [--litellm] [--before PATH]

The reference lives in its own venv beside the project, never in the project's:

    python3 -m venv /work/rlms-ref && /work/rlms-ref/bin/pip install rlms==0.1.3
    RLMS_REF_PYTHON=/work/rlms-ref/bin/python   (the default)

The reference runs tests/bench/ref_driver.py (reads the files, joins them into one string,
`RLM(...).completion(context, root_prompt=question)`, its LocalREPL); RLM Studio runs
`rlm-studio ask` over the same files with the models on the same server (the direct route;
--litellm adds the same runs with RLMSTUDIO_DESKTOP_HTTP=litellm).

Scenarios (the server answers at once unless said):
- start: one 10 kB file, the root answers at once: launch -> first request, launch -> exit.
- big: a 40 MB context (40 files), one turn `print(len(context))`, then the answer:
  launch -> first request, the gap the context-reading turn adds (end of reply 1 -> request 2),
  launch -> exit, peak RSS (wait4 ru_maxrss: the process or its largest waited-for child).
- big-loaded: the same, the root's replies sent 2 s (--think S) after its requests, so the context is
  loaded before the turn that reads it: that turn's own time (the reference has its context
  in memory from the start).
- batched: two turns of `llm_query_batched` over 8 prompts, every model answering at once: per
  batched turn the end of the root's reply -> the next root request, i.e. the engine's whole
  time for the turn (the cell, its 8 sub-calls, the next request). (With the sub model at 0.5 s
  the reference's second batch came back faster than the server's latency allows in its log;
  at zero latency there is nothing to subtract.)

Everything is timed on CLOCK_MONOTONIC (the server's log and this process share it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_outside import _wait4, env_for  # noqa: E402
from tests.bench.report import load1, median, row, standalone  # noqa: E402
from tests.bench.server_proc import ServerProcess  # noqa: E402

REF_PYTHON = os.environ.get("RLMS_REF_PYTHON", "/work/rlms-ref/bin/python")
BATCH = 8

# The same cells for both; only the way to answer differs (the reference 0.1.3 reads
# answer["ready"], RLM Studio FINAL()).
CELLS = {
    "start": [],
    "big": ["print(len(context))"],
    "big-loaded": ["print(len(context))"],
    # two different cells: RLM Studio does not run a reply that repeats the previous one
    "batched": [f"out = llm_query_batched([f'{what} {{j}}' for j in range({BATCH})])\nprint(len(out))"
                for what in ("item", "part")],
}
ROOT_LATENCY_S = {"big-loaded": 2.0}     # the root "thinks" while the context loads
FINAL = {"ref": "answer['content'] = 'done'\nanswer['ready'] = True", "studio": "FINAL('done')"}


def fenced(src: str) -> str:
    return f"```repl\n{src}\n```"


BEFORE: Path | None = None      # --before PATH: another checkout, run as a third engine


def command(engine: str, server: ServerProcess, paths: list[Path], turns: int) -> list[str]:
    # a yes/no question: RLM Studio sends back a final answer with no number to a question that
    # asks for one ("How long...?"), which would add a turn the reference does not take
    question = "Is the context long?"
    if engine == "ref":
        return [REF_PYTHON, str(ROOT / "tests" / "bench" / "ref_driver.py"), server.url, question,
                str(turns + 2), *map(str, paths)]
    return [sys.executable, "-m", "app.main", "ask", question, *map(str, paths), "--root", "openai/root",
            "--sub", "openai/sub", "--api-base", server.url, "--price", "openai/root=0,0",
            "--price", "openai/sub=0,0", "--max-iterations", str(turns + 2), "--json", "--quiet"]


def one_run(engine: str, scenario: str, server: ServerProcess, paths: list[Path], home: Path) -> dict:
    """One process, launch to exit; the server's log of its requests."""
    kind = "ref" if engine == "ref" else "studio"
    root = BEFORE if engine == "before" and BEFORE else ROOT
    cells = CELLS[scenario]
    server.log()
    server.script("root", replies=[fenced(c) for c in cells] + [fenced(FINAL[kind])],
                  latency_s=ROOT_LATENCY_S.get(scenario, 0.0))
    server.script("sub", fn="ok")
    env = env_for(home, root)
    if engine == "litellm":
        env["RLMSTUDIO_DESKTOP_HTTP"] = "litellm"
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(command(kind, server, paths, len(cells)), cwd=root, env=env,
                                stdout=out, stderr=err)
        rusage = _wait4(proc, 600)
        t_end = time.monotonic()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if proc.returncode != 0 or "done" not in stdout:
        raise RuntimeError(f"{engine} {scenario}: exit {proc.returncode}\n{stdout[-1000:]}\n{stderr[-3000:]}")
    log = server.log()
    return {"t0": t0, "t_end": t_end, "log": log, "rss_mb": rusage.ru_maxrss / 1024}


def figures(scenario: str, r: dict) -> dict[str, float]:
    log, t0 = r["log"], r["t0"]
    roots = [x for x in log if x["model"] == "root"]
    subs = [x for x in log if x["model"] == "sub"]
    f = {"first request (s)": roots[0]["started"] - t0, "launch to exit (s)": r["t_end"] - t0,
         "peak RSS (MB)": r["rss_mb"]}
    if scenario.startswith("big"):
        f["gap after the reply that reads context (ms)"] = (roots[1]["started"] - roots[0]["finished"]) * 1000
    if scenario == "batched":
        assert len(subs) == 2 * BATCH, f"{len(subs)} sub-calls"
        for n in range(2):
            f[f"batched turn {n + 1}: reply end -> next request (ms)"] = (
                roots[n + 1]["started"] - roots[n]["finished"]) * 1000
    return f


def make_files(scenario: str, tmp: Path) -> list[Path]:
    if scenario.startswith("big"):
        folder = tmp / "big"
        if not folder.exists():
            # in a process of its own: a child forked from this process would count this
            # process's pages (the corpus) in its peak RSS until it execs
            src = ("import sys; from pathlib import Path; from tests.bench.bench_context import corpus\n"
                   "for d in corpus(40_000_000): (Path(sys.argv[1]) / Path(d.path).name).write_text(d.text)")
            folder.mkdir()
            subprocess.run([sys.executable, "-c", src, str(folder)], cwd=ROOT, check=True)
        return sorted(folder.iterdir())
    doc = tmp / "notes.txt"
    line = "2024-03-01 INFO order 1234 paid by card, 3 items, 42.50 EUR\n"
    doc.write_text(line * (10_000 // len(line) + 1))
    return [doc]


def run(quick: bool = False, only: str = "start,big,batched", repeats: int | None = None,
        litellm: bool = False, before: str | None = None, think: float | None = None) -> dict:
    global BEFORE
    if think is not None:
        ROOT_LATENCY_S["big-loaded"] = think
    if not Path(REF_PYTHON).exists():
        raise SystemExit(f"the reference's interpreter {REF_PYTHON} does not exist: "
                         "python3 -m venv /work/rlms-ref && /work/rlms-ref/bin/pip install rlms==0.1.3, "
                         "or set RLMS_REF_PYTHON")
    engines = ["ref", "studio"] + (["litellm"] if litellm else []) + (["before"] if before else [])
    BEFORE = Path(before).resolve() if before else None
    repeats = repeats or (3 if quick else 5)
    rows: list[dict] = []
    details: dict = {}
    with tempfile.TemporaryDirectory() as d, ServerProcess() as server:
        tmp = Path(d)
        for scenario in only.split(","):
            paths = make_files(scenario, tmp)
            if scenario.startswith("big") and paths[0].parent.name == "big":
                paths = [paths[0].parent]        # rlm-studio ask takes the folder
            ref_paths = sorted(p for p in (tmp / "big").iterdir()) if scenario.startswith("big") else paths
            for engine in engines:               # warm-up: disk cache, .pyc files
                one_run(engine, scenario, server, ref_paths if engine == "ref" else paths,
                        tmp / f"home-warm-{scenario}-{engine}")
            got: dict[str, list[dict]] = {e: [] for e in engines}
            loads = []
            for i in range(repeats):
                loads.append(load1())
                for engine in engines:           # alternate: the same load for both
                    r = one_run(engine, scenario, server, ref_paths if engine == "ref" else paths,
                                tmp / f"home-{scenario}-{engine}-{i}")
                    got[engine].append(figures(scenario, r))
            load = f"{min(loads):.1f}-{max(loads):.1f}"
            details[scenario] = got
            for name in got["ref"][0]:
                ref = median([g[name] for g in got["ref"]])
                for engine in engines[1:]:
                    vals = [g[name] for g in got[engine]]
                    label = {"studio": "RLM Studio", "litellm": "RLM Studio via litellm",
                             "before": f"RLM Studio at {BEFORE}"}[engine]
                    rows.append(row(f"{scenario}: {name}, {label}", median(vals), bound=f"rlms 0.1.3 {ref:.3g}",
                                    ratio=median(vals) / ref if ref else None, met=median(vals) <= ref,
                                    load=load1(), note=f"load {load}; {label}: " +
                                    ", ".join(f"{v:.3g}" for v in sorted(vals)) + "; rlms: " +
                                    ", ".join(f"{g[name]:.3g}" for g in sorted(got['ref'], key=lambda g: g[name]))))
    return {"name": "beside the reference (rlms 0.1.3), from outside", "rows": rows, "details": details}


def add_args(parser) -> None:
    parser.add_argument("--only", default="start,big,batched", help="some of: start,big,big-loaded,batched")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--litellm", action="store_true", help="also RLM Studio with every call through litellm")
    parser.add_argument("--think", type=float, default=None, metavar="S",
                        help="big-loaded: seconds before each root reply (default 2; more on a busy machine)")
    parser.add_argument("--before", metavar="PATH", help="also another checkout (e.g. git worktree add /tmp/base main)")


if __name__ == "__main__":
    standalone("beside the reference", run, add_args)
