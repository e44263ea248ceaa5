"""Benchmark: the review grid, measured from outside.

    .venv/bin/python tests/bench/bench_grid.py strategies [--docs 50] [--latency 0.2]
    .venv/bin/python tests/bench/bench_grid.py scale [--docs 1000] [--latency 0.5] [--concurrency 64]
    .venv/bin/python tests/bench/bench_grid.py model --api-base http://127.0.0.1:8088/v1 \
        [--model openai/qwen2.5-coder-1.5b] [--window 16384] [--concurrency 1]

strategies: one column over N documents run three ways against the scripted server (in its
own process): (a) per-document runs in Auto, each one plain call (what the grid runs for a
document that fits); (b) per-document RLM runs (a root turn with code, one sub-call, FINAL);
(c) one RLM over the whole column (a sub-call per document through llm_query_batched, a
table back through FINAL_VAR). Wall time from the server's request log (first arrival to
last response), requests, and the prompt characters sent.

scale: `rlm-studio grid` as a subprocess over N documents (20 KB each) x 5 questions at the
given latency and concurrency: wall from process start to exit against cells x latency /
concurrency, and the child's peak RSS (os.wait4) above a 1-document grid's, against the
corpus's size on disk. In the same run, under the same load, a bare client (aiohttp, one
process, the same niceness) sends as many document-sized requests at the same concurrency
to the same server: its wall is what the machine allows at that moment (the floor), so
the grid's wall is given against both the bound and the floor, with the grid's CPU
seconds per cell (user + system, the child's rusage).

model: a real model (root = sub) on 10 supplier contracts x 3 typed questions (renewal date,
liability cap, governing law: tests/support/grid_contracts.py) through `rlm-studio grid`;
each cell's parsed value against the contract's, its flag, and the minutes from process
start to exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.machine import machine_info  # noqa: E402
from tests.bench.report import load1, machine_line  # noqa: E402
from tests.bench.server_proc import ServerProcess  # noqa: E402
from tests.support.grid_corpus import COLUMNS, write_columns, write_corpus  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIVE = COLUMNS + [{"name": "party", "question": "Who is the party?", "type": "text"},
                  {"name": "law", "question": "Which law governs the contract?", "type": "text"}]


def span(log: list[dict]) -> float:
    return max(r["finished"] for r in log) - min(r["started"] for r in log)


async def _strategies(docs: int, latency: float) -> dict:
    from app.grid_runs import GridCells
    from app.run_service import RunRequest, RunService
    from core.config import RunConfig
    from core.grid import store as gs
    from core.grid.model import Column, Row
    from core.grid.runner import GridRun
    from core.ingest import ingest
    from core.store import RunStore
    from core.store.db import connect
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    tmp = Path(tempfile.mkdtemp(prefix="bench-grid-"))
    os.environ["RLMSTUDIO_DESKTOP_HOME"] = str(tmp / "home")
    write_corpus(tmp / "docs", docs, filler_lines=40)
    found = await ingest([str(tmp / "docs")])
    documents = sorted(found.documents, key=lambda d: d.path)
    column = Column(**COLUMNS[0])
    out: dict = {"documents": docs, "latency_s": latency, "load1_before": load1()}
    with ServerProcess() as server, RunStore.open() as store:
        base = dict(root_model="openai/root", sub_model="openai/sub", api_base=server.url, max_iterations=3,
                    context_windows={"openai/root": 100_000}, request_timeout_s=60)
        for name, mode, root_fn in (("a_per_document_plain", "auto", "grid_cell"),
                                    ("b_per_document_rlm", "rlm", "grid_document_root")):
            server.script("root", fn=root_fn, latency_s=latency)
            server.script("sub", fn="grid_cell", latency_s=latency)
            server.log()
            db = connect(store.path)
            grid_id, _ = gs.open_grid(db, [column], [Row(d.path, d.sha256 + name, d.chars) for d in documents])
            grid = GridRun(db, grid_id, documents, RunConfig(mode=mode, **base),
                           run_cell=GridCells(RunService(store=store)).run_cell, concurrency=8)
            t0 = time.monotonic()
            data = await grid.run()
            wall = time.monotonic() - t0
            log = server.log()
            out[name] = {"wall_s": round(wall, 2), "server_span_s": round(span(log), 2), "requests": len(log),
                         "done": data.counts()["done"], "load1": load1()}
            db.close()
        server.script("root", fn="grid_column_root", latency_s=latency)
        server.log()
        t0 = time.monotonic()
        result = await RunService(store=store).run(RunRequest.ask(
            column.question, documents, RunConfig(mode="rlm", concurrency=8, **base)))
        wall = time.monotonic() - t0
        log = server.log()
        rows = [ln for ln in (result.answer or "").splitlines() if "\t" in ln]
        out["c_one_rlm_per_column"] = {"wall_s": round(wall, 2), "server_span_s": round(span(log), 2),
                                       "requests": len(log), "table_rows": len(rows), "status": result.status,
                                       "load1": load1()}
    return out


def _grid_child(server_url: str, home: Path, folder: Path, cols: Path, out: Path, concurrency: int) -> dict:
    env = dict(os.environ, RLMSTUDIO_DESKTOP_HOME=str(home), OPENAI_API_KEY="sk-bench",
               PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring", LITELLM_LOCAL_MODEL_COST_MAP="True")
    cmd = [sys.executable, "-m", "app.main", "grid", str(cols), str(folder), "--out", str(out), "--root", "openai/m",
           "--sub", "openai/m", "--api-base", server_url, "--context-window", "1000000", "--price", "openai/m=0,0",
           "--concurrency", str(concurrency), "--json", "--quiet"]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout, stderr = proc.communicate()     # communicate() reaps the child; wait4 needs it unreaped
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"grid failed ({proc.returncode}): {stderr.decode()[-2000:]}")
    return {"wall_s": wall, "summary": json.loads(stdout)}


def _floor_child(url: str, n: int, concurrency: int, prompt_chars: int) -> float:
    """Wall seconds for a bare aiohttp client to get `n` replies at `concurrency` (a subprocess)."""
    code = f"""
import asyncio, json, time, aiohttp
async def main():
    body = json.dumps({{"model": "f", "messages": [{{"role": "user", "content": "x" * {prompt_chars}}}]}})
    gate = asyncio.Semaphore({concurrency})
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit={concurrency})) as s:
        async def one():
            async with gate, s.post("{url}/chat/completions", data=body,
                                    headers={{"Content-Type": "application/json"}}) as r:
                await r.read()
        t0 = time.monotonic()
        await asyncio.gather(*(one() for _ in range({n})))
        print(time.monotonic() - t0)
asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def _peak_rss_child(cmd_args: tuple) -> tuple[dict, int]:
    """Run _grid_child in a forked helper so the peak RSS is that child's alone (RUSAGE_CHILDREN
    of a fresh process that has exactly one child)."""
    import resource
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            result = _grid_child(*cmd_args)
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            result["maxrss_kb"] = usage.ru_maxrss
            result["cpu_s"] = usage.ru_utime + usage.ru_stime
            os.write(w, json.dumps(result).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.waitpid(pid, 0)
    result = json.loads(data)
    return result, result["maxrss_kb"]


def scale(docs: int, latency: float, concurrency: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="bench-grid-scale-"))
    write_corpus(tmp / "one", 1, filler_lines=800)
    write_corpus(tmp / "docs", docs, filler_lines=800)
    corpus = sum(p.stat().st_size for p in (tmp / "docs").iterdir())
    cols = tmp / "cols.jsonl"
    write_columns(cols, FIVE)
    one = tmp / "one.jsonl"
    write_columns(one, FIVE[:1])
    cells = docs * len(FIVE)
    with ServerProcess() as server:
        server.script("m", fn="grid_cell", latency_s=latency)
        server.script("f", fn="ok", latency_s=latency)
        load_before = load1()
        _, base_kb = _peak_rss_child((server.url, tmp / "home0", tmp / "one", one, tmp / "one.csv", concurrency))
        floor_before = _floor_child(server.url, cells // 2, concurrency, corpus // docs)
        server.log()
        result, peak_kb = _peak_rss_child((server.url, tmp / "home", tmp / "docs", cols, tmp / "grid.csv", concurrency))
        log = server.log()
        floor_after = _floor_child(server.url, cells - cells // 2, concurrency, corpus // docs)
    bound = cells * latency / concurrency
    grown = (peak_kb - base_kb) * 1024
    return {"documents": docs, "questions": len(FIVE), "cells": cells, "latency_s": latency,
            "concurrency": concurrency, "corpus_mb": round(corpus / 2**20, 1),
            "wall_s": round(result["wall_s"], 1), "server_span_s": round(span(log), 1), "requests": len(log),
            "bound_s": round(bound, 1), "ratio_wall": round(result["wall_s"] / bound, 2),
            "ratio_server_span": round(span(log) / bound, 2), "goal_ratio": 1.3,
            "floor_s": round(floor_before + floor_after, 1),
            "ratio_floor_over_bound": round((floor_before + floor_after) / bound, 2),
            "ratio_wall_over_floor": round(result["wall_s"] / (floor_before + floor_after), 2),
            "grid_cpu_s": round(result["cpu_s"], 1), "grid_cpu_ms_per_cell": round(1000 * result["cpu_s"] / cells, 1),
            "peak_rss_mb": round(peak_kb / 1024, 1), "baseline_rss_mb": round(base_kb / 1024, 1),
            "grown_mb": round(grown / 2**20, 1), "grown_over_corpus": round(grown / corpus, 2), "goal_memory": 1.5,
            "done": result["summary"]["done"], "load1_before": load_before, "load1_after": load1()}


def model_grid(api_base: str, model: str, window: int, concurrency: int, max_tokens: int | None = None) -> dict:
    import sqlite3
    from tests.support.grid_contracts import COLUMNS as CONTRACT_COLUMNS, expected, law_matches, write_contracts
    tmp = Path(tempfile.mkdtemp(prefix="bench-grid-model-"))
    paths = write_contracts(tmp / "contracts")
    cols = write_columns(tmp / "cols.jsonl", CONTRACT_COLUMNS)
    env = dict(os.environ, RLMSTUDIO_DESKTOP_HOME=str(tmp / "home"), OPENAI_API_KEY="sk-local",
               PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring", LITELLM_LOCAL_MODEL_COST_MAP="True")
    cmd = [sys.executable, "-m", "app.main", "grid", str(cols), str(tmp / "contracts"), "--out", str(tmp / "grid.csv"),
           "--root", model, "--sub", model, "--api-base", api_base, "--context-window", str(window),
           "--price", f"{model}=0,0", "--concurrency", str(concurrency), "--json",
           *(["--root-max-tokens", str(max_tokens)] if max_tokens else [])]
    load_before, t0 = load1(), time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 4):       # 4: some cells failed or limited
        raise SystemExit(f"grid failed ({proc.returncode}): {proc.stderr[-2000:]}")
    db = sqlite3.connect(next((tmp / "home").rglob("*.db")))
    order = sorted(p.name for p in paths)
    names = [c["name"] for c in CONTRACT_COLUMNS]
    cells = []
    for row, col, state, answer, value, flag, mode, run_wall in db.execute(
            "SELECT c.row, c.col, c.state, c.answer, c.value_json, c.flag, json_extract(r.totals_json, '$.mode'), "
            "r.wall_ms FROM grid_cells c LEFT JOIN runs r ON r.id = c.run_id ORDER BY c.row, c.col"):
        i = int(order[row][:2]) - 1
        want, got = expected(i)[names[col]], json.loads(value or "null")
        right = law_matches(str(got or ""), want) if names[col] == "law" else got == want
        cells.append({"document": order[row], "column": names[col], "state": state, "value": got, "expected": want,
                      "right": bool(right), "flag": flag, "mode": mode, "run_s": round((run_wall or 0) / 1000, 1),
                      "answer": (answer or "")[:160]})
    right = {n: sum(c["right"] for c in cells if c["column"] == n) for n in names}
    return {"model": model, "api_base": api_base, "window": window, "concurrency": concurrency,
            "root_max_tokens": max_tokens,
            "cells": len(cells), "right": sum(right.values()), "right_per_column": right,
            "flagged": sum(1 for c in cells if c["flag"]), "wall_min": round(wall / 60, 2),
            "summary": json.loads(proc.stdout or "{}"), "load1_before": load_before, "load1_after": load1(),
            "per_cell": cells}


def main() -> None:
    parser = argparse.ArgumentParser(description="RLM Studio benchmark: the review grid")
    parser.add_argument("what", choices=("strategies", "scale", "model"))
    parser.add_argument("--api-base", default="http://127.0.0.1:8088/v1")
    parser.add_argument("--model", default="openai/qwen2.5-coder-1.5b")
    parser.add_argument("--window", type=int, default=16384)
    parser.add_argument("--root-max-tokens", type=int, help="model: the cells' --root-max-tokens (default: the app's)")
    parser.add_argument("--docs", type=int)
    parser.add_argument("--latency", type=float)
    parser.add_argument("--concurrency", type=int, help="cells at once (scale: 64, model: 1)")
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args()
    if args.what == "strategies":
        result = asyncio.run(_strategies(args.docs or 50, args.latency if args.latency is not None else 0.2))
    elif args.what == "model":
        result = model_grid(args.api_base, args.model, args.window, args.concurrency or 1, args.root_max_tokens)
    else:
        result = scale(args.docs or 1000, args.latency if args.latency is not None else 0.5, args.concurrency or 64)
    result["machine"] = machine_info()
    print(machine_line(result["machine"]))
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
