"""Limits hold for the worker's whole life, between cells too.

A cell starts a thread and returns; while the root "thinks" (its next reply is held back
by the scripted server) the thread goes over a limit: memory (children that each stay
under RLIMIT_AS, where processes exist; in the fallback the thread's own allocation),
the worker directory's total, or CPU. Where the engine's watch must stop the worker, the
root's next reply waits for the watch's warning that it did (the root thinks as long as
that takes); where a kernel limit stops the thread itself, the next cell first waits for
the thread to end. The real engine, the real worker in each mode, and
litellm over HTTP to the scripted server on 127.0.0.1. The worker must be stopped and
replaced between the cells, the root and the user told with the next cell, and the run's
record say so; `setrlimit(RLIMIT_AS, (-1, -1))` fails in every mode.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from dataclasses import dataclass

import pytest

from core.config import RunConfig
from core.engine.run import Engine
from core.repl import watchdog
from tests.security.conftest import MODES, Doc, fence, worker_command
from tests.support.openai_server import ScriptedOpenAI

MEMORY_MB = 512
THINK_MAX_S = 60.0            # the longest the root "thinks" waiting for the watch to act

# Children that each stay far under RLIMIT_AS and together pass the limit (namespace mode:
# processes exist); where no process can be started, the thread allocates itself.
LEAVE_MEMORY = """
import os, threading, time
def hold():
    time.sleep(0.3)
    try:
        for _ in range(4):
            if os.fork() == 0:
                block = bytearray(200 * 2**20)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(120)
                os._exit(0)
    except Exception as exc:
        try:
            blocks = []
            for _ in range(20):
                blocks.append(bytearray(64 * 2**20))
                for i in range(0, len(blocks[-1]), 4096):
                    blocks[-1][i] = 1
        except MemoryError:
            open("thread-result", "w").write("MemoryError in the thread")
            return
    time.sleep(120)
leftover = threading.Thread(target=hold, daemon=True)
leftover.start()
print("thread left running")
"""

LEAVE_FILES = """
import threading, time
def fill():
    time.sleep(0.3)
    try:
        for n in range(3):
            with open(f"fill-{n}.bin", "wb") as f:
                for _ in range(200):
                    f.write(b"x" * 2**20)
    except OSError as exc:
        open("thread-result", "w").write(type(exc).__name__ + ": " + str(exc))
        return
    time.sleep(120)
leftover = threading.Thread(target=fill, daemon=True)
leftover.start()
print("thread left running")
"""

LEAVE_SPINNING = """
import threading
def spin():
    while True:
        pass
leftover = threading.Thread(target=spin, daemon=True)
leftover.start()
print("thread left running")
"""

NEXT = """
import glob, os
if "leftover" in globals():          # the same worker: the thread stopped itself (or never will)
    leftover.join(30)
print("WROTE", sum(os.path.getsize(f) for f in glob.glob("fill-*.bin")) // 2**20, "MB")
print("NEXT", "x_kept" if "kept" in globals() else "x_gone",
      open("thread-result").read() if os.path.exists("thread-result") else "no-thread-result")
"""

RAISE_AS = """
import resource
try:
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    print("RAISED", resource.getrlimit(resource.RLIMIT_AS))
except (ValueError, OSError) as exc:
    print("REFUSED", type(exc).__name__, exc)
"""


@dataclass
class Outcome:
    feedback: str                 # the root's third request: what it read of the next cell
    cells: list
    notices: list[str]


class _Stopped(logging.Handler):
    """Set when the engine's watch logs that it stopped a worker."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "the engine stopped the worker" in record.getMessage():
            self.seen.set()


async def _run(mode: str, leave: str, server: ScriptedOpenAI, *, stopped_by_watch: bool) -> Outcome:
    """`stopped_by_watch`: the root's second reply waits until the watch stopped the worker
    (at most THINK_MAX_S; if it never does, the next cell shows the worker kept)."""
    stopped = _Stopped()
    logging.getLogger(watchdog.__name__).addHandler(stopped)

    def think(request) -> str:
        if sum(m["role"] == "assistant" for m in request.messages) == 1:     # the second turn
            if stopped_by_watch:
                stopped.seen.wait(THINK_MAX_S)
            return fence(NEXT)
        return "FINAL(done)"

    server.script("root", replies=[fence("kept = 1\n" + leave)], fn=think)
    server.script("sub", fn=lambda r: "pong")
    events: list = []
    config = RunConfig(root_model="openai/root", sub_model="openai/sub", api_base=server.url,
                       max_iterations=4, cell_timeout_s=60, max_retries=1, request_timeout_s=60,
                       memory_limit_mb=MEMORY_MB, mode="rlm")
    engine = Engine(config, emit=events.append, key_for=lambda m: "sk-test", worker_command=worker_command(mode))
    try:
        result = await engine.run("What do the documents say?", [Doc("a.txt", "alpha beta")])
    finally:
        logging.getLogger(watchdog.__name__).removeHandler(stopped)
    assert result.status == "finished", (result.status, result.error)
    roots = server.requests_for("root")
    return Outcome(roots[2].messages[-1]["content"] if len(roots) > 2 else "",
                   [e for e in events if e.type == "CellExecuted"],
                   [e.message for e in events if e.type == "Notice" and e.level == "warning"])


def _told(out: Outcome, what: str) -> None:
    """The root (the next cell's output), the user (a warning Notice) and the record (the
    cell's stderr, stored with the run) all say the REPL was restarted, and why."""
    pattern = re.compile(r"the REPL was restarted: a thread left by cell 1 " + what, re.I)
    assert pattern.search(out.feedback), out.feedback[-1500:]
    assert any(pattern.search(n) for n in out.notices), out.notices
    assert pattern.search(out.cells[1].stderr), out.cells[1].stderr
    assert "NEXT x_gone" in out.cells[1].stdout, out.cells[1].stdout   # a new worker ran it


@pytest.mark.parametrize("mode", MODES)
def test_memory_a_thread_left_running_is_stopped_between_cells(mode):
    with ScriptedOpenAI() as server:
        out = asyncio.run(_run(mode, LEAVE_MEMORY, server, stopped_by_watch=mode == "namespace"))
    if mode == "namespace":
        # 4 children x 200 MB: each under RLIMIT_AS, together over the limit
        _told(out, rf"held [\d,]+ MB, over the {MEMORY_MB} MB memory limit")
    else:
        # no process can be started; RLIMIT_AS (hard = soft) stops the thread's own allocation
        assert "NEXT x_kept MemoryError in the thread" in out.cells[1].stdout, out.cells[1].stdout


@pytest.mark.parametrize("mode", MODES)
def test_directory_a_thread_left_writing_is_stopped_between_cells(mode):
    with ScriptedOpenAI() as server:
        out = asyncio.run(_run(mode, LEAVE_FILES, server, stopped_by_watch=mode != "namespace"))
    if mode == "namespace":
        # the worker's directory is its own 512 MB tmpfs: the kernel refuses the write (ENOSPC;
        # the thread cannot even write down why)
        wrote = int(re.search(r"WROTE (\d+) MB", out.cells[1].stdout).group(1))
        assert "NEXT x_kept" in out.cells[1].stdout and 400 < wrote <= 512, out.cells[1].stdout
    else:
        _told(out, r"wrote [\d,]+ MB into the worker's directory, over its 512 MB limit")


@pytest.mark.parametrize("mode", MODES)
def test_cpu_a_thread_left_spinning_is_stopped_between_cells(mode, monkeypatch):
    monkeypatch.setattr(watchdog, "IDLE_CPU_S", 0.5)     # the spinning thread needs this much CPU before it is stopped
    with ScriptedOpenAI() as server:
        out = asyncio.run(_run(mode, LEAVE_SPINNING, server, stopped_by_watch=True))
    _told(out, r"used [\d.]+ s of CPU while no cell ran, over the 0.5 s limit")


@pytest.mark.parametrize("mode", MODES)
def test_the_memory_limit_cannot_be_raised_from_a_cell(mode):
    with ScriptedOpenAI() as server:
        server.script("root", replies=[fence(RAISE_AS), "FINAL(done)"])
        events: list = []
        config = RunConfig(root_model="openai/root", sub_model="openai/sub", api_base=server.url,
                           max_iterations=3, cell_timeout_s=60, max_retries=1, request_timeout_s=60,
                           memory_limit_mb=MEMORY_MB, mode="rlm")
        engine = Engine(config, emit=events.append, key_for=lambda m: "sk-test",
                        worker_command=worker_command(mode))
        asyncio.run(engine.run("q", [Doc("a.txt", "alpha")]))
    cell = next(e for e in events if e.type == "CellExecuted")
    assert "REFUSED ValueError not allowed to raise maximum limit" in cell.stdout, cell.stdout + (cell.error or "")
