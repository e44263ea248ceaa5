"""A dollar cap that throttles sub-calls says so while it happens: the real engine, the real
REPL worker and litellm over HTTP to the scripted server on 127.0.0.1. Calls that wait for
budget are a state of their own (SubCallWaiting; the fold shows them "waiting", not
running), BudgetChanged counts them, and the CLI prints it once."""

import asyncio
import json
import subprocess
import sys

import pytest

from core.config import Price
from core.run_record import RunRecord
from tests.integration.engine_helpers import ROOT, SUB, code, of_type, run
from tests.integration.test_cli_ask import ask, make_folder

FAN_OUT = code("out = llm_query_batched(['part %d ' % i * 40 for i in range(12)])\nFINAL(str(len(out)))")
# Each sub-call's worst case: up to ~0.3k input tokens and 1,000 output tokens at $1/M out, about
# $0.0013; the cap leaves room for about 2 of them in flight beside the root's reserve.
PRICES = {ROOT: Price(0.0, 0.0), SUB: Price(0.1, 1.0)}


@pytest.mark.timeout(180)
def test_sub_calls_waiting_for_budget_are_told_and_never_pass_the_cap(server):
    server.script("root", replies=[FAN_OUT])
    server.script("sub", fn=lambda r: "ok", latency_s=0.3)
    result, events = asyncio.run(run(server, prices=PRICES, max_cost_usd=0.004, sub_max_tokens=1000,
                                     concurrency=12))
    assert result.status == "finished" and result.answer == "12"
    waits = of_type(events, "SubCallWaiting")
    started = [e for e in waits if e.waiting]
    assert started and len([e for e in waits if not e.waiting]) == len(started)   # each went on
    assert all(0.001 < e.worst_usd < 0.002 for e in started)
    counts = [e.waiting_for_budget for e in of_type(events, "BudgetChanged")]
    print(f"\nwaited for budget: {len(started)} sub-calls, at most {max(counts)} at once; "
          f"spent ${result.totals['cost_usd']:.6f} of $0.004")
    assert max(counts) >= 5 and counts[-1] == 0
    assert all(e.spent_usd + e.reserved_usd <= 0.004 + 1e-9 for e in of_type(events, "BudgetChanged"))
    # the fold shows a waiting call as waiting (not running) until it goes on
    record, seen = RunRecord(), set()
    for event in events:
        record.apply(event)
        seen.update(n.id for n in record.node_list if n.status == "waiting")
        if event.type == "BudgetChanged" and event.waiting_for_budget:
            waiting = [n for n in record.node_list if n.status == "waiting"]
            assert len(waiting) == event.waiting_for_budget
    assert len(seen) == len(started)
    assert not [n for n in record.node_list if n.status in ("waiting", "running")]


def test_the_cli_says_once_that_sub_calls_wait_for_budget(server, tmp_path):
    server.script("root", replies=[FAN_OUT])
    server.script("sub", fn=lambda r: "ok", latency_s=0.3)
    cmd, env = ask(server, tmp_path, make_folder(tmp_path), "--max-cost", "0.004", "--json", "--mode", "rlm",
                   "--price", "openai/root=0,0", "--price", "openai/sub=0.1,1", "--sub-max-tokens", "1000",
                   "--api-key-from", "openai")
    cmd = [c for c in cmd if c != "--json"] + ["--json"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "finished"
    lines = [line for line in proc.stderr.splitlines() if "wait for budget" in line]
    print("\n" + "\n".join(lines))
    assert len(lines) == 1 and lines[0].startswith("[budget] sub-calls wait for budget: the dollar cap")
    assert "each may cost up to $0.00" in lines[0]
