"""The protocol under faults, with real workers: a SIGINT at a cell's timeout that lands
while the cell's main thread writes a sub_call line, a forged line whose `re` is a list,
and sub-calls that carry the cell that made them (a thread left running by an earlier
cell is refused)."""

from __future__ import annotations

import asyncio

from core.repl.client import ReplClient

from .conftest import SubCalls


async def test_an_interrupt_during_a_protocol_write_keeps_the_cells_result():
    """Each llm_query writes a 4 MB line; the 0.5 s timeout's SIGINT lands in one of those
    writes. The cell still reports (variables kept), and the worker is not restarted."""
    calls = SubCalls()
    repl = ReplClient(on_sub_call=calls, memory_limit_mb=2048, interrupt_grace_s=3.0)
    await repl.start()
    try:
        for attempt in range(3):
            r = await repl.execute(f"kept = {attempt}\nbig = 'x' * (4 << 20)\n"
                                   "while True:\n    llm_query(big)", timeout_s=0.5)
            assert r.fault == "timeout" and not r.restarted, r.error
            assert "Your variables are kept" in r.error
            after = await repl.execute("print(kept)", timeout_s=10)
            assert after.stdout.strip() == str(attempt)
        assert repl.restarts == 0
    finally:
        await repl.close()


async def test_a_forged_line_whose_re_is_a_list_does_not_stop_the_reading():
    repl = ReplClient(on_sub_call=SubCalls(), memory_limit_mb=2048)
    await repl.start()
    try:
        r = await repl.execute("import os, sys\nfd = int(sys.argv[sys.argv.index('--fd-out') + 1])\n"
                               "os.write(fd, b'{\"id\":\"w999\",\"type\":\"exec_result\",\"re\":[\"e1\"]}\\n')\n"
                               "os.write(fd, b'{\"id\":\"w998\",\"type\":\"cancel\",\"re\":{\"a\":1}}\\n')\n"
                               "print('still here')", timeout_s=20)
        assert r.stdout.strip() == "still here" and r.fault is None
        again = await repl.execute("print(1 + 1)", timeout_s=20)
        assert again.stdout.strip() == "2" and repl.restarts == 0
    finally:
        await repl.close()


async def test_sub_calls_carry_their_cell_and_a_thread_of_an_ended_cell_is_refused():
    calls = SubCalls()
    repl = ReplClient(on_sub_call=calls, memory_limit_mb=2048)
    await repl.start()
    try:
        # cell 1 leaves a thread that calls llm_query once cell 2 runs
        await repl.execute("import threading, time\nout = []\ngo = threading.Event()\n"
                           "def late():\n    go.wait()\n    try:\n        out.append(llm_query('late'))\n"
                           "    except Exception as e:\n        out.append(f'{type(e).__name__}: {e}')\n"
                           "threading.Thread(target=late, daemon=True).start()", timeout_s=20, cell_id="R.t1.c1")
        r = await repl.execute("go.set()\nprint(llm_query('own'))\ntime.sleep(0.5)\nprint(out)",
                               timeout_s=20, cell_id="R.t2.c1")
        assert "echo:own" in r.stdout
        assert "Cancelled" in r.stdout and "cell 1, which has ended" in r.stdout, r.stdout
        assert [(h.prompts, h.cell) for h in calls.history] == [(["own"], "R.t2.c1")]
        # a pool made in cell 3 and used in cell 4 serves cell 4
        await repl.execute("from concurrent.futures import ThreadPoolExecutor\npool = ThreadPoolExecutor(2)\n"
                           "print(list(pool.map(llm_query, ['p1'])))", timeout_s=20, cell_id="R.t3.c1")
        r = await repl.execute("print(list(pool.map(llm_query, ['p2', 'p3'])))", timeout_s=20, cell_id="R.t4.c1")
        assert "echo:p2" in r.stdout and "echo:p3" in r.stdout
        assert sorted((h.prompts[0], h.cell) for h in calls.history[1:]) == [
            ("p1", "R.t3.c1"), ("p2", "R.t4.c1"), ("p3", "R.t4.c1")]
    finally:
        await repl.close()
