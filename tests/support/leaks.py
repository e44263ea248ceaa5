"""What a run may leave behind on this machine: REPL worker processes of this test
process (found by command line in /proc: every worker is started with
`--context-dir <tmp>/rlm-repl-<our pid>-...`) and `rlm-repl-<our pid>-*` temp
directories (they hold the user's documents)."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import tempfile
import time


def _marker() -> str:
    return f"rlm-repl-{os.getpid()}-"


def worker_processes() -> list[int]:
    """Live (not zombie) processes whose command line names one of our REPL directories."""
    found = []
    marker = _marker().encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(name))
    return found


def repl_dirs() -> list[str]:
    return sorted(glob.glob(os.path.join(tempfile.gettempdir(), _marker() + "*")))


def settle(timeout: float = 2.0) -> list[int]:
    """Worker processes still there after `timeout` s (processes being killed get that long)."""
    deadline = time.monotonic() + timeout
    while True:
        left = worker_processes()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def clean_up() -> tuple[int, int]:
    """Kill and remove what a run left (so the next check starts clean); returns
    (processes, directories) that were left."""
    procs, dirs = worker_processes(), repl_dirs()
    for pid in procs:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    return len(procs), len(dirs)
