"""The GIL's switch interval, lowered by whoever needs it, restored when nobody does.

A thread that wants the GIL waits up to the switch interval (5 ms by default)
for the thread holding it. Two parts of the app lower it: the window's engine
thread for as long as the window lives (painting calls into Python many times a
frame), and litellm's background import while it runs (seconds of CPU beside a
run). `keep_at_most(s)` lowers it for good, `at_most(s)` for a `with` block;
the interval is always the lowest of what is asked for, and the one found at
the first request once nobody asks any more.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_found: float | None = None
_kept: list[float] = []
_held: list[float] = []


def keep_at_most(seconds: float) -> None:
    with _lock:
        _kept.append(seconds)
        _apply()


@contextmanager
def at_most(seconds: float) -> Iterator[None]:
    with _lock:
        _held.append(seconds)
        _apply()
    try:
        yield
    finally:
        with _lock:
            _held.remove(seconds)
            _apply()


def _apply() -> None:
    global _found
    if _found is None:
        _found = sys.getswitchinterval()
    sys.setswitchinterval(min([_found, *_kept, *_held]))
