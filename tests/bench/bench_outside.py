"""Benchmark 8, measured from outside: `rlm-studio ask` as a real process, timed the way a
provider sees it, from the scripted server's request log (issue 15 item 4).

    .venv/bin/python tests/bench/bench_outside.py [--quick] [--json OUT] [--only start,turns,big]
                                                  [--before PATH]

--before PATH measures a second checkout (e.g. `git worktree add /tmp/base main`) in the
same run, alternating with this one run by run, so both see the same machine load.

Three figures, each beside the app's own (internal) figures for the same runs:
- start: process start (just before exec, in this process) to the arrival of the first
  model request at the server, for `ask` over one 10 kB file; the models are on the
  scripted server, the user's own OpenAI-compatible URL, so the calls take the direct
  route (core/llm/openai_http.py); "via litellm" is the same with RLMSTUDIO_DESKTOP_HTTP=litellm,
  the route a cloud provider's models take. Internal: the run's
  RunStarted and first RootTurnStarted event times, on the same clock, and litellm's
  import alone in a fresh process.
- turns: 20 root turns, each one cell `print(len(context))` over 10 kB, the server
  answering at once (no latency); the engine's time between root turns is the time from
  the end of response N to the arrival of request N+1 at the server. Internal: the same
  gap from the run's events (RootReplied -> next RootTurnStarted), and the cell
  (CellStarted -> CellExecuted).
- big: the same turns over a 40 MB context (40 files of mixed log, CSV and prose lines).

The server runs in its own process (tests/bench/server_proc.py); `time.monotonic()` is
CLOCK_MONOTONIC, one clock for every process on Linux, so the bench's exec time and the
server's arrival times compare directly. Nothing touches the user's data or keychain.
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

from tests.bench.report import load1, median, row, standalone  # noqa: E402
from tests.bench.server_proc import ServerProcess  # noqa: E402

START_GOAL_S = 0.6          # issue 28 (issue 15 asked 1.5 s)
TURN_GOAL_MS = 15.0
BIG_GOAL_MS = 50.0
KEY = "sk-bench-outside"


def code(src: str) -> str:
    return f"```repl\n{src}\n```"


def env_for(home: Path, code_root: Path = ROOT) -> dict:
    env = dict(os.environ)
    env.update(RLMSTUDIO_DESKTOP_HOME=str(home), OPENAI_API_KEY=KEY, PYTHONPATH=str(code_root),
               PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    env.pop("QT_QPA_PLATFORM", None)
    # An installed app has its bytecode (pip compiles on install, the bundle ships .pyc); the
    # warm-up run writes it for this checkout, so the figures do not count compiling sources.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def ask(server: ServerProcess, home: Path, paths: list[Path], turns: int, timeout: float,
        code_root: Path = ROOT, extra_env: dict | None = None, model: str = "root") -> dict:
    """One `rlm-studio ask` process; returns exec time, the server's log and the stored events.
    `model` other than "root": an OpenAI model name, sent without --api-base (to OpenAI's
    API; `extra_env` has OPENAI_BASE_URL pointing at the scripted server)."""
    replies = [code("print(len(context))")] * turns + [code("FINAL('done')")]
    server.log()                                    # start from an empty log
    server.script(model, replies=replies)
    where = ["--api-base", server.url] if model == "root" else []
    # a yes/no question: a question asking for a number would send FINAL('done') back once
    cmd = [sys.executable, "-m", "app.main", "ask", "Is the context long?", *map(str, paths),
           "--root", f"openai/{model}", "--sub", f"openai/{model}", *where,
           "--price", f"openai/{model}=0,0", "--max-iterations", str(turns + 2), "--json", "--quiet"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        wall0, t0 = time.time(), time.monotonic()
        proc = subprocess.Popen(cmd, cwd=code_root, env={**env_for(home, code_root), **(extra_env or {})},
                                stdout=out, stderr=err)
        # wait4: the process's own peak RSS (ru_maxrss: the largest of it and the children it
        # waited for, i.e. the engine process, or its REPL worker if that grew larger)
        rusage = _wait4(proc, timeout)
        t_end = time.monotonic()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise RuntimeError(f"rlm-studio ask exited {proc.returncode}: {stderr[-2000:]}")
    log = [r for r in server.log() if r["model"] == model]
    return {"t0": t0, "wall0": wall0, "t_end": t_end, "log": log, "events": stored_events(home),
            "offset": wall0 - t0, "peak_rss_mb": rusage.ru_maxrss / 1024,
            "cpu_s": rusage.ru_utime + rusage.ru_stime}


def _wait4(proc: subprocess.Popen, timeout: float):
    deadline = time.monotonic() + timeout
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return rusage
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("rlm-studio ask timed out")
        time.sleep(0.005)


def split_gaps(r: dict) -> list[tuple[float, float, float]]:
    """Each gap between root turns cut in three, in ms: response end (server) -> RootReplied,
    RootReplied -> next RootTurnStarted (engine events), that -> request arrival (server).
    Server times are put on the wall clock with the offset time.time() - time.monotonic()."""
    log, off = r["log"], r["offset"]
    replied = [e.ts for e in r["events"] if e.type == "RootReplied" and e.call_id.count(".") == 1]
    started = [e.ts for e in r["events"] if e.type == "RootTurnStarted" and e.call_id.count(".") == 1]
    out = []
    for n in range(len(log) - 1):
        if n + 1 >= len(started) or n >= len(replied):
            break
        end, arrive = log[n]["finished"] + off, log[n + 1]["started"] + off
        out.append(((replied[n] - end) * 1000, (started[n + 1] - replied[n]) * 1000,
                    (arrive - started[n + 1]) * 1000))
    return out


def stored_events(home: Path) -> list:
    os.environ["RLMSTUDIO_DESKTOP_HOME"] = str(home)
    from core.store import RunStore
    with RunStore.open() as store:
        runs = store.list_runs(limit=1)
        return list(store.iter_events(runs[0]["id"])) if runs else []


def gaps_outside(log: list[dict]) -> list[float]:
    """End of response N -> arrival of request N+1, in ms, as the server saw them."""
    return [(b["started"] - a["finished"]) * 1000 for a, b in zip(log, log[1:])]


def gaps_inside(events: list) -> dict[str, list[float]]:
    replied = [e.ts for e in events if e.type == "RootReplied" and e.call_id.count(".") == 1]
    started = [e.ts for e in events if e.type == "RootTurnStarted" and e.call_id.count(".") == 1]
    cells = {}
    for e in events:
        if e.type == "CellStarted":
            cells[e.call_id] = e.ts
        elif e.type == "CellExecuted" and e.call_id in cells:
            cells[e.call_id] = (e.ts - cells[e.call_id]) * 1000
    return {"between_turns_ms": [(b - a) * 1000 for a, b in zip(replied, started[1:])],
            "cell_ms": [v for v in cells.values() if isinstance(v, float) and v < 1e6]}


def litellm_import_s() -> float:
    src = ("import time; t = time.perf_counter(); from core.llm.litellm_import import litellm; litellm(); "
           "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", src], cwd=ROOT, env=env_for(Path(tempfile.gettempdir())),
                         capture_output=True, text=True, timeout=120, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def bench_start(server: ServerProcess, tmp: Path, repeats: int, roots: dict[str, Path]) -> list[dict]:
    """Each checkout in `roots`, and this one with every call forced through litellm
    (RLMSTUDIO_DESKTOP_HTTP=litellm: what a run whose models are a cloud provider's waits for),
    in turns."""
    doc = tmp / "notes.txt"
    line = "2024-03-01 INFO order 1234 paid by card, 3 items, 42.50 EUR\n"
    doc.write_text(line * (10_000 // len(line) + 1))
    variants = {label: (root, {}, "root") for label, root in roots.items()}
    variants["via litellm: "] = (ROOT, {"RLMSTUDIO_DESKTOP_HTTP": "litellm"}, "root")
    # OpenAI's own API (openai/gpt-4o-mini, no --api-base): the server poses as it
    # through OPENAI_BASE_URL, as litellm reads it; on the direct route since issue 28.
    openai = {"OPENAI_BASE_URL": server.url}
    variants["OpenAI's API, direct: "] = (ROOT, openai, "gpt-4o-mini")
    variants["OpenAI's API via litellm: "] = (ROOT, {**openai, "RLMSTUDIO_DESKTOP_HTTP": "litellm"}, "gpt-4o-mini")
    for label, root in roots.items():
        if label:
            variants[f"{label}OpenAI's API: "] = (root, openai, "gpt-4o-mini")
    got = {label: {"first": [], "run": [], "turn": [], "rss": [], "cpu": []} for label in variants}
    for k, (root, extra, model) in enumerate(variants.values()):
        ask(server, tmp / f"home-warm-{k}", [doc], 0, 120, root, extra, model)   # disk cache, .pyc files
    load = load1()
    for i in range(repeats):
        for k, (label, (root, extra, model)) in enumerate(variants.items()):   # alternate: same load for all
            r = ask(server, tmp / f"home-start-{k}-{i}", [doc], 0, 120, root, extra, model)
            g = got[label]
            g["first"].append(r["log"][0]["started"] - r["t0"])
            g["run"].append(next(e.ts for e in r["events"] if e.type == "RunStarted") - r["wall0"])
            g["turn"].append(next(e.ts for e in r["events"] if e.type == "RootTurnStarted") - r["wall0"])
            g["rss"].append(r["peak_rss_mb"])
            g["cpu"].append(r["cpu_s"])
    imp = [litellm_import_s() for _ in range(max(1, repeats // 2))]
    rows = []
    for label, g in got.items():
        rows += start_rows(label, g["first"], g["run"], g["turn"], imp, load)
        rows.append(row(f"  {label}peak RSS of the run (ru_maxrss), 10 kB context", median(g["rss"]), "MB",
                        load=load, note=", ".join(f"{v:.0f}" for v in sorted(g["rss"])) + " MB"))
        rows.append(row(f"  {label}CPU of the whole run (wait4: user + system, the worker included)",
                        median(g["cpu"]), "s", load=load,
                        note=", ".join(f"{v:.2f}" for v in sorted(g["cpu"])) + " s; less load-bound than the wall times"))
    return rows


def start_rows(label: str, firsts: list[float], run_started: list[float], first_turn: list[float],
               imp: list[float], load: float) -> list[dict]:
    repeats = len(firsts)
    return [
        row(f"{label}start: exec -> first model request (outside)", median(firsts), "s",
            bound=f"litellm import alone {median(imp):.2f} s", ratio=median(firsts) / median(imp),
            goal=f"<= {START_GOAL_S} s", met=median(firsts) <= START_GOAL_S, load=load,
            note=f"median of {repeats}: " + ", ".join(f"{v:.2f}" for v in sorted(firsts)) +
            " s; one 10 kB file, the server answers at once"),
        row("  internal: exec -> RunStarted event", median(run_started), "s", load=load),
        row("  internal: exec -> first RootTurnStarted event", median(first_turn), "s", load=load),
        row("  internal: litellm import alone (fresh process)", median(imp), "s", load=load),
    ]


def turn_rows(label: str, r: dict, goal_ms: float, load: float) -> list[dict]:
    outside = gaps_outside(r["log"])
    inside = gaps_inside(r["events"])
    m = median(outside)
    parts = split_gaps(r)
    spread = (f"{len(outside)} gaps, in order: " + ", ".join(f"{g:.0f}" for g in outside) + " ms; internal: "
              + ", ".join(f"{g:.0f}" for g in inside["between_turns_ms"]) + " ms; split (reply in / engine / "
              "request out): " + ", ".join(f"{a:.0f}/{b:.0f}/{c:.0f}" for a, b, c in parts))
    return [
        row(f"{label}: between root turns (outside)", m, "ms", goal=f"<= {goal_ms:g} ms",
            met=m <= goal_ms, load=load, note=spread),
        row(f"  internal: RootReplied -> next RootTurnStarted", median(inside["between_turns_ms"]), "ms",
            load=load),
        row(f"  internal: of which the cell (CellStarted -> CellExecuted)", median(inside["cell_ms"]), "ms",
            load=load),
        row(f"  peak RSS of the run (ru_maxrss: the engine process or its REPL worker)", r["peak_rss_mb"], "MB",
            load=load),
    ]


def bench_turns(server: ServerProcess, tmp: Path, turns: int, roots: dict[str, Path]) -> list[dict]:
    doc = tmp / "small.txt"
    doc.write_text("x" * 10_000)
    rows = []
    for label, root in roots.items():
        load = load1()
        rows += turn_rows(f"{label}{turns} turns over 10 kB",
                          ask(server, tmp / f"home-turns-{label}", [doc], turns, 300, root), TURN_GOAL_MS, load)
    return rows


def bench_big(server: ServerProcess, tmp: Path, turns: int, mb: int, roots: dict[str, Path]) -> list[dict]:
    from tests.bench.bench_context import corpus
    folder = tmp / "big"
    folder.mkdir()
    for d in corpus(mb * 1_000_000):
        (folder / Path(d.path).name).write_text(d.text)
    rows = []
    for label, root in roots.items():
        load = load1()
        rows += turn_rows(f"{label}{turns} turns over {mb} MB",
                          ask(server, tmp / f"home-big-{label}", [folder], turns, 900, root), BIG_GOAL_MS, load)
    return rows


def run(quick: bool = False, only: str = "start,turns,big", before: str | None = None) -> dict:
    parts = set(only.split(","))
    roots = {"": ROOT}
    if before:
        roots = {"before: ": Path(before).resolve(), "": ROOT}
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as d, ServerProcess() as server:
        tmp = Path(d)
        if "start" in parts:
            rows += bench_start(server, tmp, 3 if quick else 5, roots)
        if "turns" in parts:
            rows += bench_turns(server, tmp, 10 if quick else 20, roots)
        if "big" in parts:
            rows += bench_big(server, tmp, 5 if quick else 10, 40, roots)
    return {"name": "from outside (the server's request log)", "rows": rows}


def add_args(parser) -> None:
    parser.add_argument("--only", default="start,turns,big", help="some of: start,turns,big")
    parser.add_argument("--before", metavar="PATH", help="another checkout to measure alongside, alternating")


if __name__ == "__main__":
    standalone("from outside", run, add_args)
