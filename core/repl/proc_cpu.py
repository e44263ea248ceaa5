"""CPU seconds used by a process and everything below it, from /proc (Linux).

    tree_cpu_s(pid)       # float, or None where /proc cannot tell (macOS, a process gone)

utime + stime of every live process in the tree (found by parent pid, as the
watchdog finds it), plus cutime + cstime: what children that already ended used.
The cell clock (core/repl/cell_clock.py) uses it to count the work a cell's code
does while one of its sub-calls is out.
"""

from __future__ import annotations

import os

from core.repl.watchdog import tree

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
