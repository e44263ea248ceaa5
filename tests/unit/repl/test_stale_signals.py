"""No signal goes to a worker's process group once the worker has been reaped: its pid
(and so that group id) may already belong to another process. On hosts with a small
pid_max (32768 here) and many workers and threads, pids come round quickly; a late
SIGKILL to the old group then kills whoever has that pid now (another run's worker)."""

from __future__ import annotations

import os
import sys

from core.repl.client import ReplClient

from .conftest import SubCalls

_SIGNALS: list[tuple[str, int, int]] = []
_WATCH: set[int] = set()


def _hook(event: str, args: tuple) -> None:
    if event in ("os.kill", "os.killpg") and args and args[0] in _WATCH:
        _SIGNALS.append((event, args[0], args[1]))


sys.addaudithook(_hook)      # (records only pids a test watches)


async def test_a_graceful_close_sends_nothing_to_the_reaped_workers_group():
    repl = ReplClient(on_sub_call=SubCalls(), memory_limit_mb=2048)
    await repl.start()
    conn = repl._conn
    _WATCH.add(conn.pid)
    try:
        path = await repl.close()
        assert path == "graceful" and conn.proc.returncode is not None
        assert [s for s in _SIGNALS if s[1] == conn.pid] == []
    finally:
        _WATCH.discard(conn.pid)


async def test_a_worker_that_died_by_itself_gets_no_late_group_kill():
    repl = ReplClient(on_sub_call=SubCalls(), memory_limit_mb=2048)
    await repl.start()
    conn = repl._conn
    _WATCH.add(conn.pid)
    try:
        r = await repl.execute("import os\nos._exit(3)", timeout_s=20)
        assert r.fault == "crash" and r.restarted
        assert conn.proc.returncode is not None
        assert [s for s in _SIGNALS if s[1] == conn.pid] == []
        assert os.path.isdir(repl.workdir)
    finally:
        _WATCH.discard(conn.pid)
        await repl.close()
