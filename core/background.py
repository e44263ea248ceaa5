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
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import Future
from typing import Any, Callable

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
