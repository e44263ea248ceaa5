"""CPU seconds used by a process and everything below it, from /proc (Linux).

    tree_cpu_s(pid)       # float, or None where /proc cannot tell (macOS, a process gone)

utime + stime of every live process in the tree (found by parent pid, as the
watchdog finds it), plus cutime + cstime: what children that already ended used.
The cell clock (core/repl/cell_clock.py) uses it to count the work a cell's code
does while one of its sub-calls is out. It lives in core/repl/watchdog.py, which also
counts a worker's CPU between cells.
"""

from __future__ import annotations

from core.repl.watchdog import tree_cpu_s

__all__ = ["tree_cpu_s"]
