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


PID_REUSE = r'''
import asyncio, glob, json, os, signal
from core.repl.client import ReplClient

async def echo(request):
    return [{"ok": "x"} for _ in request.prompts]

def reap_orphans():                        # (this process is init of its PID namespace)
    for d in glob.glob("/proc/[0-9]*"):
        pid = int(d.rsplit("/", 1)[1])
        if pid != 1:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass

async def main():
    kept = ReplClient(on_sub_call=echo, memory_limit_mb=2048)     # the window's kept session
    await kept.start()
    await kept.execute("x = 1", timeout_s=20)
    old = kept.pid
    os.kill(old, signal.SIGKILL)                                  # its worker dies while idle
    await asyncio.sleep(0.5)
    reap_orphans()
    for _ in range(5):                                            # the next pid is the dead one's
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(old - 1))
        fork = ReplClient(on_sub_call=echo, memory_limit_mb=2048)   # a fork's rebuilt REPL
        await fork.start()
        if fork.pid == old:
            break
        await fork.close()
    reused = fork.pid == old
    await fork.execute("y = 2", timeout_s=20)                     # a replayed cell
    await kept.close()                                            # starting the fork closes the kept session
    await asyncio.sleep(0.3)
    first = await fork.execute("print(y)", timeout_s=20)          # the fork's first live cell
    print(json.dumps({"reused": reused, "stdout": first.stdout, "stderr": first.stderr}))
    await fork.close()

asyncio.run(main())
'''


def test_closing_a_dead_session_does_not_kill_the_worker_that_reused_its_pid(tmp_path):
    """The fork's SIGKILL (issue 23), reproduced: in a PID namespace of its own the test
    gives a fork's new worker the pid of a kept session's worker that died while idle;
    closing that session (the window does as a fork starts) then sent SIGKILL to the new
    worker's group, and the fork's first cell said "[REPL: the worker was killed by
    SIGKILL (killed; possibly the system's out-of-memory killer) after the previous cell
    ...]"."""
    import json
    import subprocess
    script = tmp_path / "pid_reuse.py"
    script.write_text(PID_REUSE)
    proc = subprocess.run(["unshare", "-Urpf", "--mount-proc", sys.executable, str(script)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["reused"], "the new worker did not get the dead one's pid"
    assert data["stdout"] == "2\n" and "SIGKILL" not in data["stderr"], data
