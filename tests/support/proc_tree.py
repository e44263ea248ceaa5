"""Memory of a whole process tree, read from /proc (Linux): the CLI, its ingest workers, the
fork server and the REPL worker, sampled together so their peak is one moment's sum."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from typing import Any


def tree_pids(root: int) -> list[int]:
    """`root` and every process below it."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class PeakSampler(threading.Thread):
    """Samples the tree's summed resident memory every 20 ms: `peak_kb` (all of it), and apart
    `repl_peak_kb` (the REPL worker and its sandbox launchers) and `rest_peak_kb` (the CLI or
    window, the ingest workers, their fork server); `seen`: every pid met."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.stop = pid, threading.Event()
        self.peak_kb = self.repl_peak_kb = self.rest_peak_kb = 0
        self.seen: set[int] = set()
        self._repl: dict[int, bool] = {}

    def _is_repl(self, pid: int) -> bool:
        if pid not in self._repl:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    self._repl[pid] = b"core.repl." in f.read()
            except OSError:
                return False
        return self._repl[pid]

    def run(self) -> None:
        while not self.stop.is_set():
            pids = tree_pids(self.pid)
            self.seen.update(pids)
            repl = rest = 0
            for pid in pids:
                if self._is_repl(pid):
                    repl += rss_kb(pid)
                else:
                    rest += rss_kb(pid)
            self.peak_kb = max(self.peak_kb, repl + rest)
            self.repl_peak_kb = max(self.repl_peak_kb, repl)
            self.rest_peak_kb = max(self.rest_peak_kb, rest)
            self.stop.wait(0.02)


def run_measured(cmd: list[str], timeout_s: float, **popen: Any) -> tuple[Any, str, str, float, float, PeakSampler]:
    """Run `cmd` (text pipes) with its tree sampled: (process, stdout, stderr, started, wall,
    sampler); `started` is time.monotonic() at launch. Killed after `timeout_s`."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
    sampler = PeakSampler(proc.pid)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    wall = time.monotonic() - started
    sampler.stop.set()
    sampler.join()
    return proc, out, err, started, wall, sampler
