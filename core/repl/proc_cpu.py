"""CPU seconds used by a process and everything below it, from /proc (Linux).

    tree_cpu_s(pid)       # float, or None where /proc cannot tell (macOS, a process gone)

utime + stime of every live process in the tree (children found through
/proc/<pid>/task/<tid>/children), plus cutime + cstime: what children that already
ended used. The cell clock (core/repl/cell_clock.py) uses it to count the work a cell's
code does while one of its sub-calls is out.
"""

from __future__ import annotations

import os

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_MAX_PROCESSES = 4096


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


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


def tree_cpu_s(pid: int) -> float | None:
    top = _stat_ticks(pid)
    if top is None:
        return None
    total, seen, todo = top, {pid}, _children(pid)
    while todo and len(seen) < _MAX_PROCESSES:
        child = todo.pop()
        if child in seen:
            continue
        seen.add(child)
        ticks = _stat_ticks(child)
        if ticks is not None:
            total += ticks
            todo += _children(child)
    return total / _TICKS
