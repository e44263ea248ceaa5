"""Work that must not slow the run beside it: one dedicated thread at a lower CPU priority.

    future = low_priority_call(store.save_sources, run_id, documents, skipped)
    await asyncio.wrap_future(future)

Storing a 40 MB context (hash, compress, write) takes about a second of CPU and runs while
the run's first turns do. On a machine with few cores the scheduler then splits the CPU
between them evenly, and each turn waits (measured: a `print(len(context))` turn over
40 MB took 140 ms instead of 28 ms while the sources were stored). With the storing
thread at nice 10 the run's own thread, its REPL worker and the provider come first; the
storing still finishes, a little later. The thread is dedicated because on Linux a
thread's niceness cannot be raised back without privileges (a pool thread would stay slow).

Once the run is over nothing is left to give way to, but a thread at nice 10 on a busy
machine gets a sliver of a core (measured at load 10: a 40 MB run's process exited 9-14 s
after its last event, storing). Work given as steps (`low_priority_steps`) can be hurried:
`hurry()` starts a thread at the caller's priority that takes the remaining steps, and the
nice thread stops after the step it is in.

    work = low_priority_steps(store.save_sources_steps(run_id, documents, skipped))
    ...                                   # the run
    work.hurry()
    await asyncio.wrap_future(work.future)
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import Future
from typing import Any, Callable, Iterator

log = logging.getLogger(__name__)

NICENESS = 10


def lower_this_thread(niceness: int = NICENESS) -> bool:
    """Lower the calling thread's CPU priority (Linux: per thread); False where unsupported."""
    if not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return False
    try:
        tid = threading.get_native_id()
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, current + niceness))
        return True
    except OSError as exc:          # not permitted, or not per thread on this system
        log.debug("could not lower the priority of a background thread: %s", exc)
        return False


def low_priority_call(fn: Callable[..., Any], *args: Any, name: str = "rlm-background",
                      **kwargs: Any) -> Future:
    """Run fn(*args, **kwargs) in a new daemon thread at a lower CPU priority."""
    future: Future = Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        lower_this_thread()
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            future.set_exception(exc)
        else:
            future.set_result(result)

    threading.Thread(target=work, name=name, daemon=True).start()
    return future


class LowPriorityWork:
    """Steps (an iterator) taken one at a time by a nice thread, or after `hurry()` by a
    thread at the priority of whoever hurried. `future` has None, or the first error."""

    def __init__(self, steps: Iterator[Any], name: str) -> None:
        self.future: Future = Future()
        self._steps = steps
        self._name = name
        self._lock = threading.Lock()          # one step at a time, in order
        self._hurried = False

    def _drive(self, nice: bool) -> None:
        if nice:
            lower_this_thread()
        while True:
            with self._lock:
                if self.future.done() or (nice and self._hurried):
                    return
                try:
                    next(self._steps)
                except StopIteration:
                    self.future.set_result(None)
                except BaseException as exc:
                    self.future.set_exception(exc)

    def hurry(self) -> None:
        """Take the remaining steps at the caller's priority (idempotent)."""
        if self._hurried or self.future.done():
            return
        self._hurried = True
        threading.Thread(target=self._drive, args=(False,), name=self._name + "-hurried", daemon=True).start()


def low_priority_steps(steps: Iterator[Any], *, name: str = "rlm-background") -> LowPriorityWork:
    """Take `steps` in a new daemon thread at a lower CPU priority, until done or hurried."""
    work = LowPriorityWork(steps, name)
    if work.future.set_running_or_notify_cancel():
        threading.Thread(target=work._drive, args=(True,), name=name, daemon=True).start()
    return work
