"""A fault soak, bounded in time: runs against the scripted server with faults drawn at
random (seeded; RLM_SOAK_SEED and RLM_SOAK_RUNS change them): Stop at a random moment,
streams cut mid-reply, HTTP 500s, the worker killed with SIGKILL, the database locked by
another connection, a file-size limit (RLIMIT_FSIZE) on this process. Every run must end
with a consistent record (its events as emitted, its totals, every sub-call's Started and
Finished, every call under a parent that exists) or with a store_error the user sees,
and must leave no worker process, no `rlm-repl-*` directory and no reservation."""

from __future__ import annotations

import asyncio
import os
import random
import resource
import signal
import sqlite3
import threading
import time

from app.runner import QuestionRun
from core.config import Price
from core.store import RunStore
from tests.support import leaks
from tests.support.openai_server import CutStream, Status
from tests.support.trust_runs import DOCS, KEY, ROOT, SUB, code, config

SEED = int(os.environ.get("RLM_SOAK_SEED", "2311"))
RUNS = int(os.environ.get("RLM_SOAK_RUNS", "16"))
BUDGET_S = 50.0
FAULTS = ("cancel", "cancel-twice", "cut-root", "cut-sub", "500-root", "500-sub", "sigkill", "db-locked", "fsize")
SCRIPT = [code("import time\nr = llm_query_batched(['q%d' % i for i in range(4)])\ntime.sleep(0.2)\nprint(r)"),
          code("print(len(context))"), code("FINAL('done')")]


def _hold_lock(db_path: str, after: float, hold: float) -> threading.Thread:
    def hold_it() -> None:
        time.sleep(after)
        db = sqlite3.connect(db_path, isolation_level=None, timeout=5)
        try:
            db.execute("BEGIN IMMEDIATE")
            time.sleep(hold)
            db.execute("ROLLBACK")
        finally:
            db.close()
    t = threading.Thread(target=hold_it, daemon=True)
    t.start()
    return t


def _kill_a_worker(after: float) -> None:
    def kill_it() -> None:
        time.sleep(after)
        found = leaks.worker_processes()
        if found:
            try:
                os.kill(random.Random(after).choice(found), signal.SIGKILL)
            except ProcessLookupError:
                pass
    threading.Thread(target=kill_it, daemon=True).start()


def _consistent(store, outcome, emitted) -> str | None:
    """What is wrong with the stored record of this run, or None."""
    run = store.get_run(outcome.run_id)
    if run is None:
        return "no run row"
    if run["status"] != outcome.status:
        return f"stored status {run['status']} != {outcome.status}"
    stored = [e for e in store.event_dicts(outcome.run_id) if e["type"] != "RootTokens"]
    mine = [e for e in emitted if e.type != "RootTokens"]
    if [e["seq"] for e in stored] != [e.seq for e in mine]:
        return f"stored events {len(stored)} != emitted {len(mine)}"
    for key in ("cost_usd", "input_tokens", "output_tokens", "sub_calls", "cells"):
        if run[key] != outcome.totals[key]:
            return f"{key}: stored {run[key]} != {outcome.totals[key]}"
    started = {e.call_id for e in mine if e.type == "SubCallStarted"}
    finished = {e.call_id for e in mine if e.type == "SubCallFinished"}
    if started != finished:
        return f"sub-calls without a pair: {sorted(started ^ finished)}"
    known = {"R"} | {e.call_id for e in mine if e.type in ("RootTurnStarted", "CellStarted", "SubCallStarted")}
    orphans = [e.call_id for e in mine if e.type in ("CellStarted", "SubCallStarted", "RootTurnStarted")
               and e.parent_id not in known]
    return f"calls under no parent: {orphans}" if orphans else None


async def test_fault_soak(openai_server):
    rng = random.Random(SEED)
    leaks.clean_up()
    tally: dict[str, int] = {}
    problems: list[str] = []
    began = time.monotonic()
    prices = {ROOT: Price(1.0, 2.0), SUB: Price(0.5, 1.0)}
    with RunStore.open() as store:
        for number in range(RUNS):
            if time.monotonic() - began > BUDGET_S:
                break
            faults = rng.sample(FAULTS, rng.randint(1, 3))
            openai_server.script("root", replies=list(SCRIPT), chunk_chars=8)
            openai_server.script("sub", fn=lambda r: f"a:{r.prompt}", latency_s=0.05)
            if "cut-root" in faults:
                openai_server.fail_next("root", CutStream(rng.randint(1, 40)))
            if "500-root" in faults:
                openai_server.fail_next("root", Status(500))
            if "cut-sub" in faults:
                openai_server.fail_next("sub", CutStream(rng.randint(0, 3)))
            if "500-sub" in faults:
                openai_server.fail_next("sub", *[Status(500)] * rng.randint(1, 4))
            emitted: list = []
            run = QuestionRun("q", documents=DOCS, config=config(openai_server, prices=prices, max_cost_usd=5.0),
                              store=store, key_for=lambda m: KEY, sinks=[emitted.append])
            loop = asyncio.get_running_loop()
            if "cancel" in faults or "cancel-twice" in faults:
                # half of the Stops come in the first 150 ms (the worker's start, the context's load)
                when = rng.uniform(0.0, 0.15) if rng.random() < 0.5 else rng.uniform(0.0, 1.2)
                loop.call_later(when, run.cancel)
                if "cancel-twice" in faults:
                    loop.call_later(when + rng.uniform(0.0, 0.05), run.cancel)
            if "sigkill" in faults:
                _kill_a_worker(rng.uniform(0.05, 1.0))
            locker = _hold_lock(str(store.path), rng.uniform(0, 0.5), rng.uniform(0.1, 0.6)) \
                if "db-locked" in faults else None
            old_fsize = resource.getrlimit(resource.RLIMIT_FSIZE)
            if "fsize" in faults:
                size = max(os.path.getsize(p) for p in (store.path, f"{store.path}-wal") if os.path.exists(p))
                resource.setrlimit(resource.RLIMIT_FSIZE, (size + 16_384, old_fsize[1]))
            try:
                outcome = await asyncio.wait_for(run.execute(), 30)
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, old_fsize)
                if locker is not None:
                    await asyncio.to_thread(locker.join, 5)
            tally[outcome.status] = tally.get(outcome.status, 0) + 1
            left_dirs = leaks.repl_dirs()
            left = await asyncio.to_thread(leaks.settle, 2.0)
            leaks.clean_up()
            what = f"run {number} {faults}: {outcome.status}"
            if outcome.status == "failed":
                print(f"{what}: {outcome.error[:160]}")
                if "internal error" in (outcome.error or ""):
                    problems.append(f"{what}: {outcome.error}")
            if left or left_dirs:
                problems.append(f"{what}: left {left} {left_dirs}")
            budget = run._engine.budget
            if budget.reserved_usd > 1e-12 or budget.in_flight:
                problems.append(f"{what}: reservation left {budget.reserved_usd} / {budget.in_flight}")
            if outcome.store_error:
                tally["store_error"] = tally.get("store_error", 0) + 1
                print(f"{what}: store_error: {outcome.store_error[:160]}")
                continue                       # said so to the user: the record may be partial
            wrong = _consistent(store, outcome, emitted)
            if wrong:
                problems.append(f"{what}: {wrong}")
    print(f"soak seed {SEED}: {sum(v for k, v in tally.items() if k != 'store_error')} runs in "
          f"{time.monotonic() - began:.1f} s: {tally}")
    assert not problems, "\n".join(problems)
