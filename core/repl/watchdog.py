"""The engine's watch over a worker, from its start to its close, between cells too.

Two limits need a cgroup or a tmpfs that a system may not give:

  memory     the worker and every process it starts, together. A memory cgroup does that
             (core/repl/cgroup.py); on cgroup v1 or without delegation only RLIMIT_AS
             holds, per process: 3 children x 1,500 MB passed a 4,096 MB limit. Here the
             engine sums the resident memory (RSS, /proc/<pid>/stat) of the worker's process
             tree, found by parent pid from a scan of /proc (CONFIG_PROC_CHILDREN is not
             always there), every INTERVAL_S while a cell runs; past the limit it counts
             again by PSS, so that pages a fork shares with its parent count once
  directory  the worker's directory, in total. In namespace mode it is its own tmpfs; in
             the fallback only RLIMIT_FSIZE holds, per file. Here the engine sums the
             allocated size (st_blocks) of the directory's files, and counts them

  cpu        while no cell runs (the root is thinking): a thread or child a cell left
             running may use at most IDLE_CPU_S of CPU until the next cell starts

The watch runs for the worker's whole life in every mode (memory: wherever a memory limit is
set, as a second layer beside a memory cgroup or RLIMIT_AS): a thread a cell left running is
measured and stopped like the cell itself. Past a limit the worker is killed (and restarted
by the client, its directory removed). During a cell, the cell ends with an error the root
reads (`MemoryError: ...`, `OSError: ...`); between cells the client replaces the worker at
once and tells the root and the user with the next cell ("the REPL was restarted: a thread
left by cell 3 held 2,600 MB, over the 1,024 MB limit"). Where smaps_rollup cannot be read
the RSS counts, which errs on the side of stopping early. A worker can overshoot by what it
allocates or writes in one interval.

`amend(report)` adds to the worker's hello_ok report what the engine watches, so that
core/repl/sandbox_report.py can name a limit that no layer holds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any, Callable

from core.blocking import run_blocking
from core.repl import sandbox_report

log = logging.getLogger(__name__)

INTERVAL_S = 0.1
IDLE_CPU_S = 2.0               # CPU seconds the worker's processes may use while no cell runs
MAX_DIR_ENTRIES = 100_000      # more files than this in the worker's directory: stopped too
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class Breach:
    """Why the watchdog stopped the worker: the cell's error, its type and fault, and what
    was over which limit in a few words (for a worker stopped between cells)."""
    message: str
    error_type: str
    fault: str
    what: str = ""
    between_cells: bool = False


def available() -> bool:
    """The engine can see the worker's processes (Linux /proc)."""
    return sys.platform.startswith("linux") and os.path.isdir("/proc/self")


def _processes() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, resident bytes), every process of /proc this user may see."""
    out: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        name = entry.name
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:       # gone meanwhile
            continue
        fields = data[data.rindex(b")") + 2:].split()
        out[int(name)] = (int(fields[1]), int(fields[21]) * _PAGE)
    return out


def tree(root: int) -> dict[int, int]:
    """pid -> resident bytes of `root` and all its descendants."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _rss) in procs.items():
        children.setdefault(ppid, []).append(pid)
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in procs and pid not in out:
            out[pid] = procs[pid][1]
            todo.extend(children.get(pid, ()))
    return out


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()   # after "pid (comm) "; comm may hold spaces
    try:
        return sum(int(fields[i]) for i in (11, 12, 13, 14))    # utime stime cutime cstime
    except (IndexError, ValueError):
        return None


def tree_cpu_s(pid: int) -> float | None:
    """CPU seconds of `pid` and its descendants (the same tree the watchdog sums memory
    over, found by parent pid: core/repl/watchdog.py), or None when /proc cannot tell."""
    if _stat_ticks(pid) is None:
        return None
    total = 0
    for member in tree(pid):
        ticks = _stat_ticks(member)
        if ticks is not None:
            total += ticks
    return total / _TICKS


def _pss(pid: int) -> int | None:
    """Proportional set size: a page shared by n processes counts 1/n in each."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def tree_memory(root: int, limit: int) -> tuple[int, int]:
    """(bytes, processes) of the tree. RSS first (cheap, one read of stat per process); only
    past `limit` the PSS of each process (smaps_rollup walks its page tables), so that pages
    a fork shares with its parent, counted in full in every RSS, count once: 125 forked
    children of a 40 MB worker are ~50 MB, not 5 GB."""
    procs = tree(root)
    total = sum(procs.values())
    if total > limit:
        total = sum(p if (p := _pss(pid)) is not None else rss for pid, rss in procs.items())
    return total, len(procs)


def dir_usage(path: str, max_entries: int = MAX_DIR_ENTRIES) -> tuple[int, int]:
    """(allocated bytes, entries) under `path`, symlinks not followed; stops counting at
    max_entries + 1 entries."""
    total, entries, todo = 0, 0, [path]
    while todo and entries <= max_entries:
        try:
            with os.scandir(todo.pop()) as it:
                for e in it:
                    entries += 1
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    if e.is_dir(follow_symlinks=False):
                        todo.append(e.path)
        except OSError:
            continue
    return total, entries


def needs(report: dict[str, Any]) -> dict[str, bool]:
    """Which limits the box itself lacks (from the worker's hello_ok report)."""
    limits = report.get("limits") or {}
    cgroup_memory = bool((report.get("cgroup") or {}).get("memory_mb"))
    return {"memory": limits.get("processes") == "allowed" and not cgroup_memory
            and bool(limits.get("memory_mb")),
            "dir": limits.get("dir_limit") not in (None, "tmpfs")}


def amend(report: dict[str, Any], *, enabled: bool = True) -> dict[str, Any]:
    """The report with what the engine watches added ("watchdog"), and the memory scope
    and directory limit said as they now hold."""
    want = needs(report)
    can = enabled and available()
    memory_mb = (report.get("limits") or {}).get("memory_mb")
    watch = {"memory": bool(memory_mb) and can, "dir": want["dir"] and can, "cpu_between_cells": can,
             "idle_cpu_s": IDLE_CPU_S, "interval_ms": int(INTERVAL_S * 1000)}
    report["watchdog"] = watch
    limits = report.get("limits")
    if isinstance(limits, dict):
        if watch["memory"] and want["memory"]:
            limits["memory_scope"] = "engine watchdog (the worker and its children together, RSS then PSS)"
        elif limits.get("processes") == "refused" and not want["memory"]:
            limits["memory_scope"] = "the worker's one process (no process can be started)"
        if watch["dir"]:
            limits["dir_limit"] = "engine watchdog (total of the worker's directory)"
    report["missing"] = sandbox_report.missing(report)
    report["full"] = not report["missing"]
    return report


class Watch:
    """Polls one worker from its start to its close; `breach` is set once it stopped it.
    `idle()` says no cell or request is running (then CPU use counts against IDLE_CPU_S);
    `on_breach(breach)` is called once, after the worker was killed."""

    def __init__(self, conn: Any, report: dict[str, Any], workdir: str | None, *,
                 idle: Callable[[], bool] = lambda: False,
                 on_breach: Callable[[Breach], None] | None = None) -> None:
        watch = report.get("watchdog") or {}
        limits = report.get("limits") or {}
        self.conn = conn
        self.memory = int(limits.get("memory_mb") or 0) * 1024 * 1024 if watch.get("memory") else 0
        self.dir = int(limits.get("dir_limit_mb") or 0) * 1024 * 1024 if watch.get("dir") else 0
        self.idle_cpu_s = float(watch.get("idle_cpu_s") or IDLE_CPU_S) if watch.get("cpu_between_cells") else 0.0
        self.workdir = workdir
        self.idle = idle
        self.on_breach = on_breach
        self.breach: Breach | None = None
        self.task: asyncio.Task | None = None
        self._idle_cpu_from: float | None = None    # the tree's CPU seconds when it went idle

    @property
    def active(self) -> bool:
        return bool(self.memory or (self.dir and self.workdir) or self.idle_cpu_s)

    def start(self) -> "Watch":
        if self.active:
            self.task = asyncio.get_running_loop().create_task(self._run(), name=f"repl-watch-{self.conn.pid}")
        return self

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def check(self, idle: bool = False) -> Breach | None:
        if self.memory:
            rss, count = tree_memory(self.conn.pid, self.memory)
            if rss > self.memory:
                return Breach(
                    f"MemoryError: the REPL worker's processes together held {rss / 2**20:,.0f} MB "
                    f"({count} processes), over the {self.memory / 2**20:,.0f} MB memory limit "
                    "of the worker and its children; the engine stopped the worker",
                    "MemoryError", "memory",
                    f"held {rss / 2**20:,.0f} MB, over the {self.memory / 2**20:,.0f} MB memory limit")
        if self.dir and self.workdir:
            used, entries = dir_usage(self.workdir)
            if used > self.dir or entries > MAX_DIR_ENTRIES:
                what = (f"{entries:,}+ files" if entries > MAX_DIR_ENTRIES
                        else f"{used / 2**20:,.0f} MB")
                return Breach(
                    f"OSError: [Errno 28] No space left on device: the worker's directory held {what}, "
                    f"over its {self.dir / 2**20:,.0f} MB limit (at most {MAX_DIR_ENTRIES:,} files); "
                    "the engine stopped the worker and removed the directory", "OSError", "crash",
                    f"wrote {what} into the worker's directory, over its {self.dir / 2**20:,.0f} MB limit")
        if self.idle_cpu_s:
            return self._check_idle_cpu(idle)
        return None

    def _check_idle_cpu(self, idle: bool) -> Breach | None:
        if not idle:
            self._idle_cpu_from = None
            return None
        now = tree_cpu_s(self.conn.pid)
        if now is None:
            return None
        if self._idle_cpu_from is None:
            self._idle_cpu_from = now
            return None
        used = now - self._idle_cpu_from
        if used <= self.idle_cpu_s:
            return None
        return Breach(f"TimeoutError: the REPL worker used {used:.1f} s of CPU while no cell ran "
                      f"(at most {self.idle_cpu_s:g} s); the engine stopped the worker", "TimeoutError",
                      "timeout", f"used {used:.1f} s of CPU while no cell ran, over the {self.idle_cpu_s:g} s limit")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(INTERVAL_S)
            idle = self.idle()
            breach = await run_blocking(self.check, idle)
            if breach is not None:
                if idle and self.idle():
                    breach = dataclasses.replace(breach, between_cells=True)
                self.breach = breach
                log.warning("worker %s: %s", self.conn.pid, breach.message)
                self.conn.died_reason = breach.message
                self.conn.signal(signal.SIGKILL, group=True)
                self.conn.signal(signal.SIGKILL)
                if self.on_breach is not None:
                    self.on_breach(breach)
                return
