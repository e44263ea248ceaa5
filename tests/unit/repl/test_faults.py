"""Model code that hangs, crashes, eats memory or floods output: the run goes on."""

from __future__ import annotations

import asyncio
import os
import signal
import time

from .conftest import PEAK_KB, SubCalls, wait_dead


async def run(repl, code: str, timeout_s: float = 20.0):
    return await repl.execute(code, timeout_s=timeout_s)


async def test_busy_loop_times_out_and_keeps_variables(make_repl):
    repl = await make_repl(interrupt_grace_s=2.0)
    await run(repl, "kept = 7")
    r = await repl.execute("while True:\n    pass", timeout_s=0.3)
    assert r.fault == "timeout" and not r.restarted
    assert r.error_type == "TimeoutError" and "interrupted" in r.error and "<cell 2>" in r.error
    assert (await run(repl, "print(kept)")).stdout == "7\n"
    assert repl.restarts == 0


async def test_sleep_times_out(repl):
    started = time.monotonic()
    r = await repl.execute("import time\ntime.sleep(1000)", timeout_s=0.3)
    assert r.fault == "timeout" and not r.restarted
    print(f"\ninterrupting time.sleep took {time.monotonic() - started:.2f} s")


async def test_ignoring_sigint_gets_killed_and_restarted_with_context(make_repl):
    repl = await make_repl(interrupt_grace_s=0.3)
    old_pid = repl.pid
    await run(repl, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nlost = 1")
    r = await repl.execute("while True:\n    pass", timeout_s=0.3)
    assert r.fault == "timeout" and r.restarted
    assert "killed and restarted" in r.error and "variables were lost" in r.error
    assert repl.restarts == 1 and repl.pid != old_pid
    r = await run(repl, "print(len(documents), context.startswith('=== notes/a.txt'), 'lost' in globals())")
    assert r.stdout == "2 True False\n"


async def test_os_exit_is_a_crash_then_restart(repl):
    r = await run(repl, "import os\nos._exit(3)")
    assert r.fault == "crash" and r.restarted and r.error_type == "WorkerCrash"
    assert "exited with code 3" in r.error and "variables were lost" in r.error
    assert (await run(repl, "print(len(documents))")).stdout == "2\n"
    assert repl.restarts == 1


async def test_segfault_is_a_crash_then_restart(repl):
    r = await run(repl, "import ctypes\nctypes.string_at(0)")
    assert r.fault == "crash" and r.restarted
    assert "SIGSEGV" in r.error
    assert "<cell 1>" in r.error          # faulthandler's report shows where it happened
    assert (await run(repl, "print(1 + 1)")).stdout == "2\n"


async def test_memory_blow_up_under_a_small_limit(make_repl):
    repl = await make_repl(memory_limit_mb=300)
    assert repl.sandbox["memory_limit_mb"] == 300
    r = await run(repl, "hog = []\nwhile True:\n    hog.append(bytearray(10_000_000))")
    assert r.fault == "memory" and r.error_type == "MemoryError"
    assert "limit 300 MB" in r.error
    r = await run(repl, "n = len(hog)\ndel hog\nprint(n > 5, len(context) > 0)")
    assert r.error is None and r.stdout == "True True\n"


async def test_death_after_a_memory_error_is_a_memory_fault(make_repl):
    # What the interpreter prints when it dies of memory (e.g. "Fatal Python error:
    # Cannot recover from MemoryErrors"), written by the worker itself, then death.
    repl = await make_repl(memory_limit_mb=300)
    r = await run(repl, "import os\nos.write(2, b'Fatal Python error: MemoryError\\n')\nos.abort()")
    assert r.fault == "memory" and r.restarted and r.error_type == "MemoryError"
    assert "limit 300 MB" in r.error and "SIGABRT" in r.error


async def test_unbounded_recursion_is_an_ordinary_error(repl):
    r = await run(repl, "def down(n):\n    return down(n + 1)\ndown(0)")
    assert r.fault is None and r.error_type == "RecursionError"
    assert "maximum recursion depth" in r.error and len(r.error) < 5000
    assert (await run(repl, "print('ok')")).stdout == "ok\n"


async def test_printing_300_mb_is_capped_and_counted(repl):
    started = time.monotonic()
    r = await run(repl, "import sys\n" + PEAK_KB + "line = 'x' * 9_999\nfor _ in range(30_000):\n"
                        "    print(line)\n"
                        "print('PEAK_KB', peak_kb(), file=sys.stderr)",
                  timeout_s=60)
    elapsed = time.monotonic() - started
    assert r.error is None, r.error
    assert r.stdout_chars == 30_000 * 10_000
    assert len(r.stdout) < 2_100_000 and "characters omitted" in r.stdout
    peak_mb = int(r.stderr.split()[-1]) / 1024
    assert peak_mb < 100, f"worker peak RSS {peak_mb:.0f} MB while printing 300 MB"
    print(f"\nprinting 300 MB: {elapsed:.2f} s, worker peak RSS {peak_mb:.0f} MB")


async def test_c_level_output_does_not_break_the_worker(repl):
    r = await run(repl, "import os\nfor _ in range(50):\n    os.write(1, b'y' * 1_000_000)\n"
                        "    os.write(2, b'z' * 100_000)\nprint('done')")
    assert r.error is None and r.stdout == "done\n"


async def test_worker_death_between_cells_is_reported_with_the_next_cell(repl):
    r = await run(repl, "import os, threading, time\n"
                        "threading.Thread(target=lambda: (time.sleep(0.2), os._exit(5))).start()")
    assert r.error is None
    await wait_dead(repl.pid)
    while repl.alive:               # until the client has seen it (pipe EOF, exit status)
        await asyncio.sleep(0.01)
    r = await run(repl, "print(len(documents))")
    assert r.stdout == "2\n" and "exited with code 5" in r.stderr and "restarted" in r.stderr, r
    assert repl.restarts == 1


async def test_close_while_a_cell_runs_returns_a_result(repl):
    task = asyncio.create_task(repl.execute("import time\ntime.sleep(30)", timeout_s=60))
    await asyncio.sleep(0.3)
    assert await repl.close(grace_s=1.0) == "graceful"
    r = await task
    assert r.fault == "crash" and r.error_type == "ReplClosed" and not r.restarted


async def test_sub_calls_of_a_dead_worker_are_cancelled(make_repl):
    cancelled = asyncio.Event()
    repl = None

    async def kill_then_wait(prompt):
        os.kill(repl.pid, signal.SIGKILL)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
    repl = await make_repl(SubCalls(reply=kill_then_wait))
    r = await run(repl, "llm_query('doomed')")
    assert r.fault == "crash" and r.restarted and "SIGKILL" in r.error
    await asyncio.wait_for(cancelled.wait(), 5)
