"""A REPL worker started before the run that will use it.

    spare.warm_up(memory_limit_mb=..., require_full_sandbox=...)   # e.g. as `ask` starts reading
    spare.preload(documents)                       # once they are read: written and loaded
    ...
    taken = spare.take(..., documents=documents, on_started=...)  # the top-level RLM (core/engine/rlm.py)
    repl, loading = taken or (ReplClient(...), None)
    ...
    await spare.discard()                          # whatever happens: an untaken spare is closed

The worker's start (a Python process, its imports and sandbox, the handshake: 0.2-0.3 s at
load 10) otherwise begins only beside the root's first call, after the documents are read,
and a fast model's first reply then waits for it. `rlm-studio ask` starts it first thing, so
it starts while the documents are read; once they are read, `preload` writes and loads them
into it while the run is composed (the store, the keys, the prompt). One spare at a time, on
the loop that made it; it is taken only by a client asking for the same limits (memory,
sandbox, worker command) and, once preloaded, for the same documents (the same objects);
its sub-call handler is then the taker's. A spare nobody took is closed by `discard()` (a run that
never started: no documents, bad input, Stop while reading), so no worker or directory is left.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)

_spare: tuple[tuple, Any, asyncio.AbstractEventLoop] | None = None
_preload: dict[str, Any] = {}      # "documents", "loading" (the task), "started", "callbacks"


async def _no_sub_calls(_request: Any) -> list:
    raise RuntimeError("a spare REPL worker serves no sub-calls until a run takes it")


def _key(memory_limit_mb: int | None, require_full_sandbox: bool, worker_command: list[str] | None) -> tuple:
    return (memory_limit_mb, bool(require_full_sandbox), tuple(worker_command or ()))


def warm_up(*, memory_limit_mb: int | None, require_full_sandbox: bool = False,
            worker_command: list[str] | None = None) -> None:
    """Start a worker on the running loop (a spare already there is kept)."""
    global _spare
    if _spare is not None:
        return
    from core.repl.client import ReplClient
    client = ReplClient(on_sub_call=_no_sub_calls, memory_limit_mb=memory_limit_mb,
                        worker_command=worker_command, require_full_sandbox=require_full_sandbox)
    client.begin_start()
    _spare = (_key(memory_limit_mb, require_full_sandbox, worker_command), client, asyncio.get_running_loop())


def preload(documents: list[Any]) -> None:
    """Write and load `documents` into the spare (its start goes on first), as a task."""
    if _spare is None or _preload or _spare[2] is not asyncio.get_running_loop() or _spare[0][1]:
        return                      # (a full sandbox required: the run checks the box before any load)

    def started() -> None:
        _preload["started"] = True
        for callback in _preload.get("callbacks", ()):
            callback()
    _preload.update(documents=list(documents), started=False, callbacks=[])
    _preload["loading"] = _spare[1].begin_loading(_preload["documents"], start=True, on_started=started)


def take(*, on_sub_call: Any, memory_limit_mb: int | None, require_full_sandbox: bool = False,
         worker_command: list[str] | None = None, documents: list[Any] | None = None,
         on_started: Any = None) -> tuple[Any, Any] | None:
    """(the spare ReplClient, its loading task or None) if it was made on this loop with these
    limits and, when preloaded, with these documents; it now serves `on_sub_call`, and
    `on_started` is called once it has shaken hands (soon, if it has). Else None."""
    global _spare
    if _spare is None:
        return None
    key, client, loop = _spare
    if loop is not asyncio.get_running_loop() or key != _key(memory_limit_mb, require_full_sandbox, worker_command):
        return None
    loading = _preload.get("loading")
    if loading is not None:
        same = documents is not None and len(documents) == len(_preload["documents"]) and all(
            a is b for a, b in zip(documents, _preload["documents"]))
        if not same:
            return None
        if on_started is not None:
            if _preload["started"]:
                loop.call_soon(on_started)
            else:
                _preload["callbacks"].append(on_started)
    _spare = None
    _preload.clear()
    client.on_sub_call = on_sub_call
    return client, loading


async def discard() -> None:
    """Close the spare if nobody took it (its start, if still going on, ends first)."""
    global _spare
    if _spare is None:
        return
    _key_, client, loop = _spare
    if loop is not asyncio.get_running_loop():
        return
    _spare = None
    _preload.clear()
    await client.close()
    starting = client._starting
    if starting is not None:
        await asyncio.wait({starting})
        if not starting.cancelled() and starting.exception() is not None:
            log.debug("the spare REPL worker's start ended: %r", starting.exception())
