"""Blocking work of the engine, off its event loop, on a pool of its own.

    result = await run_blocking(write_context, docs, root)

asyncio.to_thread uses the loop's default executor, and litellm prepares every call
there too (acompletion runs its synchronous setup in it). The window's engine loop keeps
that executor at one thread (app/engine_thread.py: more threads only fight the GUI for
the GIL), so a 40 MB context write or a large prompt's token count queued behind
hundreds of call setups, and the setups behind the write. The engine's own blocking
work (writing a context, counting or hashing a large prompt, the worker's disk check,
keychain lookups) goes here instead: two threads, apart from the default executor.

Like asyncio.to_thread: the call runs to its end in its thread even when the awaiting
task is cancelled (wrap it in core.lifecycle.finish where the caller must wait for it),
and it runs in a copy of the caller's contextvars.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

WORKERS = 2

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """The process's pool for blocking engine work (made on first use)."""
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="rlm-blocking")
    return _pool


async def run_blocking(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` in the blocking-work pool; its result or its exception."""
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await loop.run_in_executor(pool(), call)
