"""Which cell a worker thread's sub-call comes from (worker side).

The main thread runs the cells: its sub-calls belong to the cell running now. A thread
model code starts belongs to the cell that started it, and an item handed to a thread
pool to the cell that submitted it, however long they outlive that cell: the engine
refuses a sub-call whose cell has ended (core/repl/client.py), so a thread left running
by cell 3 cannot spend in cell 4's name. Installed once by the worker before any model
code runs; model code that undoes it only mislabels its own calls, which the engine
then refuses as made by no running cell.
"""

from __future__ import annotations

import functools
import sys
import threading
TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing costs the worker's start ~8 ms of CPU)
    from typing import Any, Callable

_NO_CELL = 0                      # cells are numbered from 1
_local = threading.local()        # a pool item's cell, while the item runs


def origin(running_now: int | None) -> int | None:
    """The cell the calling thread's work belongs to (`running_now`: the cell the main
    thread runs, None between cells)."""
    cell = getattr(_local, "cell", None)
    if cell is None:
        cell = getattr(threading.current_thread(), "_rlm_cell", None)
    if cell is None:
        return running_now
    return None if cell == _NO_CELL else cell


_running_now: Callable[[], int | None] = lambda: None


def install(running_now: Callable[[], int | None]) -> None:
    """Stamp every thread started from now on with the cell that starts it."""
    global _running_now
    _running_now = running_now
    thread_start = threading.Thread.start

    def start(self: threading.Thread) -> None:
        if getattr(self, "_rlm_cell", None) is None:
            cell = origin(running_now())
            self._rlm_cell = _NO_CELL if cell is None else cell   # type: ignore[attr-defined]
        thread_start(self)

    threading.Thread.start = start                                  # type: ignore[method-assign]


def cover_pools() -> None:
    """Once model code has imported concurrent.futures (checked at each cell's start, so
    the worker's start does not pay for the import): an item submitted to a thread pool
    belongs to the submitter's cell, whichever pool thread runs it."""
    module = sys.modules.get("concurrent.futures.thread")
    pool = getattr(module, "ThreadPoolExecutor", None)
    if pool is None or getattr(pool.submit, "_rlm_covered", False):
        return
    submit = pool.submit

    def submit_in_cell(self: Any, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        cell = origin(_running_now())
        return submit(self, functools.partial(_run_as, _NO_CELL if cell is None else cell, fn), *args, **kwargs)

    submit_in_cell._rlm_covered = True                              # type: ignore[attr-defined]
    pool.submit = submit_in_cell                                    # type: ignore[method-assign]


def _run_as(cell: int, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    previous = getattr(_local, "cell", None)
    _local.cell = cell
    try:
        return fn(*args, **kwargs)
    finally:
        _local.cell = previous
