"""The per-cell time limit counts the time the cell's own code runs.

    reply = await within_run_time(conn, fut, limit_s)     # asyncio.TimeoutError past the limit

A cell's wall time minus the time during which the engine held at least one of its
sub-calls (WorkerConnection.waited_s): while llm_query waits for a slow local model or
a provider's rate limit, the cell's code is not running, so its clock stops. Those
waits have their own limits (the request timeout per attempt, the run's wall-clock cap).
Code that keeps computing in a thread while another thread waits is not let off: during
a wait the clock runs at the CPU time the worker's processes use (core/repl/proc_cpu.py;
where /proc cannot tell, as on macOS, it stops).

The future is never cancelled here (the caller decides what a timeout or a cancel does
to the cell), so this is a drop-in for asyncio.wait_for(asyncio.shield(fut), limit_s).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any


def run_time(conn: Any, started: float, waited_at_start: float) -> float:
    """Seconds the cell's code has run since `started` (monotonic)."""
    return (time.monotonic() - started) - (conn.waited_s() - waited_at_start)


async def within_run_time(conn: Any, fut: "asyncio.Future[Any]", limit_s: float) -> Any:
    started, waited = time.monotonic(), conn.waited_s()
    while True:
        left = limit_s - run_time(conn, started, waited)
        if left <= 0:
            raise asyncio.TimeoutError
        # Run time never advances faster than wall time: waiting `left` cannot overshoot.
        done, _ = await asyncio.wait({fut}, timeout=left)
        if done:
            return fut.result()
