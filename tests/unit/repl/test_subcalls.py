"""llm_query / rlm_query from model code, served by a real async handler."""

from __future__ import annotations

import asyncio
import time

from .conftest import SubCalls


async def run(repl, code: str, timeout_s: float = 20.0):
    return await repl.execute(code, timeout_s=timeout_s)


async def test_llm_query_round_trip(make_repl, sub_calls):
    repl = await make_repl()
    r = await run(repl, "a = llm_query('hello')\nb = llm_query(42, model='small')\nprint(a, b)")
    assert r.error is None, r.error
    assert r.stdout == "echo:hello echo:42\n"
    assert [(q.kind, q.prompts, q.model, q.context) for q in sub_calls.history] == [
        ("llm", ["hello"], None, None), ("llm", ["42"], "small", None)]


async def test_batched_keeps_order_and_runs_concurrently(make_repl):
    handler = SubCalls(reply=lambda p: {"ok": p.upper()}, delay_s=0.2)
    repl = await make_repl(handler)
    started = time.monotonic()
    r = await run(repl, "out = llm_query_batched([f'p{i}' for i in range(32)])\nprint(out)")
    elapsed = time.monotonic() - started
    assert r.error is None, r.error
    assert r.stdout.strip() == str([f"P{i}" for i in range(32)])
    assert len(handler.history) == 1 and len(handler.history[0].prompts) == 32
    assert handler.max_in_flight == 32
    print(f"\n32 batched sub-calls of 0.2 s each: {elapsed:.2f} s")


async def test_batched_error_slots_are_strings(make_repl):
    def reply(p):
        if p == "bad":
            return {"error": {"type": "SubCallError", "message": "prompt too large"}}
        return {"ok": "fine"}
    repl = await make_repl(SubCalls(reply=reply))
    r = await run(repl, "print(llm_query_batched(['a', 'bad', 'c']))\nprint(llm_query_batched([]))")
    assert r.error is None
    assert r.stdout.splitlines() == [
        "['fine', '[error: SubCallError: prompt too large]', 'fine']", "[]"]


async def test_budget_exceeded_is_raised_and_catchable(make_repl):
    repl = await make_repl(SubCalls(reply=lambda p: {
        "error": {"type": "BudgetExceeded", "message": "cost cap of $1.00 reached"}}))
    r = await run(repl, "try:\n    llm_query('x')\nexcept BudgetExceeded as e:\n    print('caught:', e)")
    assert r.stdout == "caught: cost cap of $1.00 reached\n"
    r = await run(repl, "llm_query('x')")
    assert r.error_type == "BudgetExceeded" and "cost cap" in r.error


async def test_other_errors_raise_sub_call_error(make_repl):
    repl = await make_repl(SubCalls(reply=lambda p: {
        "error": {"type": "RateLimited", "message": "429 from provider"}}))
    r = await run(repl, "try:\n    llm_query('x')\nexcept SubCallError as e:\n    print(e)")
    assert r.stdout == "RateLimited: 429 from provider\n"


async def test_a_failing_handler_becomes_error_slots(make_repl):
    async def broken(request):
        raise RuntimeError("engine bug")
    repl = await make_repl(broken)
    r = await run(repl, "print(llm_query_batched(['a', 'b']))\nllm_query('c')")
    assert r.stdout == "['[error: RuntimeError: engine bug]', '[error: RuntimeError: engine bug]']\n"
    assert r.error_type == "SubCallError"


async def test_prompts_are_checked(repl, sub_calls):
    r = await run(repl, "try:\n    llm_query_batched('one string')\nexcept TypeError as e:\n    print(e)\n"
                        "try:\n    llm_query_batched(['a', None])\nexcept TypeError as e:\n    print(e)")
    assert "pass a list of prompts" in r.stdout and "got None" in r.stdout
    assert sub_calls.history == []


async def test_rlm_query_sends_kind_and_context(make_repl, sub_calls):
    repl = await make_repl()
    r = await run(repl, "print(rlm_query('sum up', context=documents[0]['text']))\n"
                        "print(rlm_query_batched(['q1', 'q2']))")
    assert r.error is None, r.error
    assert sub_calls.history[0].kind == "rlm"
    assert sub_calls.history[0].context == "alpha line\nsecond line"
    assert sub_calls.history[1].prompts == ["q1", "q2"] and sub_calls.history[1].context is None
    assert r.stdout.splitlines()[1] == "['echo:q1', 'echo:q2']"


async def test_llm_query_from_many_threads_at_once(make_repl):
    all_in = asyncio.Event()
    handler = SubCalls()

    async def wait_for_all(prompt):
        if handler.in_flight == 8:
            all_in.set()
        # Only returns if all 8 calls are in flight together: served concurrently.
        await asyncio.wait_for(all_in.wait(), 10)
        return {"ok": prompt[::-1]}
    handler.reply = wait_for_all
    repl = await make_repl(handler)
    code = ("from concurrent.futures import ThreadPoolExecutor\n"
            "with ThreadPoolExecutor(8) as pool:\n"
            "    out = list(pool.map(llm_query, [f'ab{i}' for i in range(8)]))\n"
            "print(out)")
    r = await run(repl, code)
    assert r.error is None, r.error
    assert r.stdout.strip() == str([f"{i}ba" for i in range(8)])
    assert handler.max_in_flight == 8 and len(handler.history) == 8


async def test_time_waiting_for_sub_call_replies_is_not_the_cells(make_repl):
    # Six sequential calls of 0.6 s (3.6 s of wall time) under a 2 s cell limit: the cell's
    # own code runs for milliseconds, so it finishes (the limit counts the cell's run time).
    repl = await make_repl(SubCalls(reply=lambda p: {"ok": p.upper()}, delay_s=0.6))
    started = time.monotonic()
    r = await run(repl, "out = [llm_query(f'q{i}') for i in range(6)]\nprint(out)", timeout_s=2.0)
    wall = time.monotonic() - started
    assert r.fault is None and r.error is None, r.error
    assert r.stdout.strip() == str([f"Q{i}" for i in range(6)])
    assert wall >= 3.6


async def test_code_that_spins_while_a_thread_waits_for_a_reply_is_still_timed(make_repl):
    async def never(prompt):
        await asyncio.sleep(3600)
    repl = await make_repl(SubCalls(reply=never))
    code = ("import threading\nthreading.Thread(target=lambda: llm_query('slow'), daemon=True).start()\n"
            "while True:\n    pass")
    started = time.monotonic()
    r = await repl.execute(code, timeout_s=1.0)
    # Untimed, it would spin until pytest's timeout; timed, it ends within seconds (9 s seen on a
    # machine at load 25, so the bound leaves room for the load and still tells the two apart).
    assert r.fault == "timeout" and time.monotonic() - started < 60


async def test_a_cell_that_computes_past_its_limit_between_sub_calls_times_out_and_keeps_the_worker(make_repl):
    repl = await make_repl(SubCalls(reply=lambda p: {"ok": "x"}, delay_s=0.3))
    await run(repl, "kept = 'yes'")
    code = ("import time\nfor i in range(8):\n    llm_query('q')\n    t = time.monotonic()\n"
            "    while time.monotonic() - t < 0.25:\n        pass\n")
    started = time.monotonic()
    r = await repl.execute(code, timeout_s=0.8)              # 8 x 0.25 s of its own work
    wall = time.monotonic() - started
    assert r.fault == "timeout" and not r.restarted
    assert "KeyboardInterrupt" in r.error and "sub-call replies not counted" in r.error
    assert wall >= 0.8 + 3 * 0.3 - 0.1          # it was stopped after ~0.8 s of work, not 0.8 s of wall
    r = await run(repl, "print(kept)")
    assert r.stdout == "yes\n"
