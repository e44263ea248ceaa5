"""Cleanup that a cancel cannot cut short.

    await finish(close_the_worker())      # runs to its end even under a second Stop

`asyncio.shield` alone is not enough for cleanup: the awaiting task still gets the
CancelledError at once, skips whatever follows the await (the next close, the temp
directory), and returns while the shielded work goes on unwatched. `finish` waits for
the work to end whatever arrives meanwhile, then re-raises one CancelledError if any
came, so the caller's cancellation still goes on upwards after the cleanup is done.
jupyter_client's shutdown discipline is the model: the manager, not the caller's
patience, decides when a child is gone.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


async def finish(work: Awaitable[T]) -> T:
    """Await `work` to its end, absorbing cancellations; then re-raise one if any came.
    Otherwise the caller gets the work's result or its exception."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})       # (wait never cancels the task it watches)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        if not task.cancelled() and task.exception() is not None:
            log.error("cleanup failed while its caller was being cancelled", exc_info=task.exception())
        raise asyncio.CancelledError
    return task.result()


async def stop_then_wait(task: "asyncio.Task | None", stop: Callable[[], None], timeout: float) -> None:
    """A batch's end at shutdown (an evaluation's, a grid's): `stop()` it, wait up to `timeout`
    for what is in flight to end, then cancel what is left and wait for that as long again."""
    if task is None or task.done():
        return
    stop()
    done, _ = await asyncio.wait([task], timeout=timeout)
    if not done:
        task.cancel()
        await asyncio.wait([task], timeout=timeout)
