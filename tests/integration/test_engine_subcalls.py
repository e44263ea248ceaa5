"""Sub-calls: depth 0/1/2, batching, order, concurrency, the dollar cap under load."""

import json
import os

from core.config import Price
from core.engine.run import ConfigError, Engine
from tests.integration.engine_helpers import (KEY, PRICED, ROOT, SUB, Doc, code, config, of_type,
                                              root_prompts, run)

DOCS = [Doc("a.txt", "one two three")]


def upper(request):
    return request.prompt.upper()


async def test_depth0_has_no_subcalls(server):
    server.script("root", replies=[code(
        "try:\n    r = llm_query('hi')\nexcept Exception as e:\n    r = type(e).__name__ + ': ' + str(e)\n"
        "FINAL(r)")])
    result, events = await run(server, docs=DOCS, max_depth=0)
    assert "switched off" in result.answer and "SubCallError" in result.answer
    assert server.requests_for("sub") == []
    system = server.requests_for("root")[0].messages[0]["content"]
    assert "switched off" in system


async def test_depth1_batched_keeps_order_and_runs_concurrently(server):
    server.script("sub", fn=upper, latency_s=0.3)
    server.script("root", replies=[code(
        "import json\nout = llm_query_batched([f'item {i}' for i in range(24)])\nFINAL(json.dumps(out))")])
    result, events = await run(server, docs=DOCS, max_depth=1, concurrency=32)
    assert json.loads(result.answer) == [f"ITEM {i}" for i in range(24)]
    assert server.max_in_flight >= 12          # 24 calls at 0.3 s ran side by side
    started = of_type(events, "SubCallStarted")
    assert len(started) == 24 and all(e.parent_id == "R.t1.c1" for e in started)
    cell = of_type(events, "CellExecuted")[0]
    assert cell.duration_ms < 24 * 300          # far below sequential time
    assert result.totals["sub_calls"] == 24


async def test_concurrency_cap_bounds_calls_in_flight(server):
    server.script("sub", fn=upper, latency_s=0.2)
    server.script("root", replies=[code("out = llm_query_batched(['x'] * 12)\nFINAL(str(len(out)))")])
    result, _ = await run(server, docs=DOCS, concurrency=3)
    assert result.answer == "12"
    assert server.max_in_flight <= 3


async def test_single_llm_query_and_sub_max_tokens(server):
    server.script("sub", fn=lambda r: "sub says " + r.prompt)
    server.script("root", replies=[code("FINAL(llm_query('hello'))")])
    result, _ = await run(server, docs=DOCS, sub_max_tokens=77)
    assert result.answer == "sub says hello"
    assert server.requests_for("sub")[0].max_tokens == 77


async def test_failed_slot_is_an_error_string_not_an_exception(server):
    from tests.support.openai_server import Status

    def flaky(request):
        return Status(400, message="bad prompt") if "bad" in request.prompt else "fine"

    server.script("sub", fn=flaky)
    server.script("root", replies=[code("out = llm_query_batched(['good', 'bad', 'good'])\n"
                                        "FINAL(' | '.join(out))")])
    result, events = await run(server, docs=DOCS)
    parts = result.answer.split(" | ")
    assert parts[0] == "fine" and parts[2] == "fine" and parts[1].startswith("[error:")
    statuses = sorted(e.status for e in of_type(events, "SubCallFinished"))
    assert statuses == ["error", "ok", "ok"]


async def test_llm_query_from_threads(server):
    server.script("sub", fn=upper, latency_s=0.2)
    server.script("root", replies=[code(
        "from concurrent.futures import ThreadPoolExecutor\n"
        "with ThreadPoolExecutor(8) as pool:\n    out = list(pool.map(llm_query, [f'q{i}' for i in range(8)]))\n"
        "FINAL(','.join(out))")])
    result, _ = await run(server, docs=DOCS)
    assert result.answer == ",".join(f"Q{i}" for i in range(8))
    assert server.max_in_flight >= 4


async def test_depth2_rlm_query_starts_a_nested_rlm_with_its_own_repl(server):
    def root(request):
        first_user = request.messages[1]["content"]
        turn = sum(1 for m in request.messages if m["role"] == "assistant")
        if "Question: outer" in first_user:
            return code("r = rlm_query('inner task', context='nested material 12345')\nFINAL('outer got: ' + r)")
        # the nested RLM: it sees its own context, not the parent's documents
        if turn == 0:
            return code("print(len(documents), documents[0]['path'], context[-20:])")
        return code("import os\nFINAL(context.split()[-1] + ' pid ' + str(os.getpid()))")

    server.script("root", fn=root)
    result, events = await run(server, "outer", docs=DOCS, max_depth=2)
    assert result.status == "finished"
    assert result.answer.startswith("outer got: 12345 pid ")
    nested = [e for e in of_type(events, "SubCallStarted") if e.kind == "rlm"]
    assert len(nested) == 1
    nested_turns = [e for e in of_type(events, "RootTurnStarted") if e.depth == 1]
    assert len(nested_turns) == 2 and all(t.parent_id == nested[0].call_id for t in nested_turns)
    finished = [e for e in of_type(events, "SubCallFinished") if e.kind == "rlm"][0]
    assert finished.status == "ok" and finished.response.startswith("12345")
    # The nested worker was shut down before the run ended. (Its os.getpid() is its pid inside
    # its own PID namespace, so look for any worker of this engine by its command line.)
    assert not _workers_of_this_engine()


def _workers_of_this_engine() -> list[int]:
    mark = f"rlm-repl-{os.getpid()}-".encode()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"--context-dir" in cmd and mark in cmd and state not in ("Z", "X"):
            found.append(int(pid))
    return found


async def test_rlm_query_at_the_depth_limit_is_a_plain_llm_query(server):
    server.script("sub", fn=lambda r: f"plain:{len(r.prompt)}")
    server.script("root", replies=[code("FINAL(rlm_query('task', context='abc'))")])
    result, events = await run(server, docs=DOCS, max_depth=1)
    assert result.answer == f"plain:{len('task') + 2 + len('abc')}"
    assert [e.kind for e in of_type(events, "SubCallStarted")] == ["llm"]
    assert "task" in server.requests_for("sub")[0].prompt and "abc" in server.requests_for("sub")[0].prompt


async def test_sub_call_cap(server):
    server.script("sub", fn=upper)
    server.script("root", replies=[code("out = llm_query_batched(['a','b','c','d','e'])\n"
                                        "FINAL(str(sum(o.startswith('[error') for o in out)))")])
    result, events = await run(server, docs=DOCS, max_sub_calls=3)
    assert result.answer == "2"
    assert len(server.requests_for("sub")) == 3
    assert sum(e.status == "refused" for e in of_type(events, "SubCallFinished")) == 2


async def test_dollar_cap_holds_under_300_concurrent_priced_calls(server):
    server.script("sub", fn=lambda r: "x" * 40, latency_s=0.2)
    server.script("root", replies=[
        code("out = llm_query_batched([f'prompt number {i} ' * 10 for i in range(300)])\n"
             "refused = sum(o.startswith('[error: BudgetExceeded') for o in out)\n"
             "print(refused)"),
        code("FINAL('wrapped up')"),
    ])
    cap = 0.06
    prices = {ROOT: Price(1.0, 2.0), SUB: Price(5.0, 10.0)}
    result, events = await run(server, docs=DOCS, max_cost_usd=cap, prices=prices,
                               sub_max_tokens=100, root_max_tokens=500, concurrency=300)
    assert result.answer == "wrapped up"
    spent = sum(e.cost_usd for e in of_type(events, "SubCallFinished")) + \
        sum(e.cost_usd for e in of_type(events, "RootReplied"))
    assert spent <= cap
    assert abs(result.totals["cost_usd"] - spent) < 1e-9
    refused = [e for e in of_type(events, "SubCallFinished") if e.status == "refused"]
    ok = [e for e in of_type(events, "SubCallFinished") if e.status == "ok"]
    assert refused and ok and len(refused) + len(ok) == 300
    assert all(b.spent_usd + b.reserved_usd <= cap + 1e-9 for b in of_type(events, "BudgetChanged"))
    assert "Stop making sub-calls" in root_prompts(server)[1]
    assert server.max_in_flight >= 15        # many priced calls in flight at once
    assert len(ok) > 80                       # waiting for reservations to settle, not refusing early


async def test_budget_exceeded_is_catchable_in_code(server):
    server.script("sub", fn=upper)
    server.script("root", replies=[code(
        "try:\n    llm_query('x' * 4000)\n    r = 'not refused'\n"
        "except BudgetExceeded as e:\n    r = 'refused: ' + str(e)[:20]\nFINAL(r)")])
    result, _ = await run(server, docs=DOCS, max_cost_usd=0.001,
                          prices={ROOT: Price(0.01, 0.01), SUB: Price(100.0, 100.0)}, sub_max_tokens=1000)
    assert result.answer.startswith("refused: dollar cap")
    assert server.requests_for("sub") == []


async def test_unknown_price_with_a_cap_is_refused_before_any_call(server):
    engine = Engine(config(server, max_cost_usd=1.0), emit=lambda e: None, key_for=lambda m: KEY)
    try:
        await engine.run("q", DOCS)
    except ConfigError as exc:
        assert "openai/root" in str(exc) and "--price" in str(exc)
    else:
        raise AssertionError("expected ConfigError")
    assert server.history == []


async def test_sub_prompt_larger_than_the_context_window_is_refused(server):
    # gpt-4o-mini has a known window in litellm's map; a 2 MB prompt cannot fit
    server.script("gpt-4o-mini", fn=upper)
    server.script("root", replies=[code("out = llm_query_batched(['y' * 2_000_000])\nFINAL(out[0])")])
    result, _ = await run(server, docs=DOCS, sub_model="openai/gpt-4o-mini")
    assert result.answer.startswith("[error: ContextWindowExceeded") and "tokens" in result.answer
    assert server.requests_for("gpt-4o-mini") == []


async def test_priced_costs_add_up(server):
    server.script("sub", fn=lambda r: "abcd" * 10)
    server.script("root", replies=[code("llm_query_batched(['p'] * 5)\nFINAL('ok')")])
    result, events = await run(server, docs=DOCS, prices=PRICED)
    subs = of_type(events, "SubCallFinished")
    expected = sum(e.input_tokens * 0.5e-6 + e.output_tokens * 1e-6 for e in subs)
    roots = of_type(events, "RootReplied")
    expected += sum(e.input_tokens * 1e-6 + e.output_tokens * 2e-6 for e in roots)
    assert abs(result.totals["cost_usd"] - expected) < 1e-9 and expected > 0
