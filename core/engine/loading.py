"""Telling the run that a large context is loading beside the root's first call.

    tell(ctx, rlm_id, repl.begin_loading(documents), documents)

ReplClient.begin_loading writes and loads the documents while the root model is asked
its first question; the first cell waits for the load. For a corpus of at least
NOTICE_CHARS characters that wait can be seconds, so the run says, as info notices
(the window's transcript, the CLI's stderr, the store), when the load starts and
how long it took. A load that fails or is cancelled says nothing here: its error is
the first cell's (the run fails as a worker that could not run).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Sequence

from core import events as ev
from core.repl.context_file import chars_of

NOTICE_CHARS = 50_000_000


def tell(ctx: Any, rlm_id: str, task: asyncio.Future, documents: Sequence[Any]) -> None:
    chars = sum(map(chars_of, documents))
    if chars < NOTICE_CHARS:
        return
    ctx.emit(ev.Notice, call_id=rlm_id, level="info",
             message=f"Loading {len(documents):,} documents ({chars:,} characters) into the REPL "
                     "beside the first turn; the first cell waits for it.")
    started = time.monotonic()

    def done(fut: asyncio.Future) -> None:
        if fut.cancelled() or fut.exception() is not None:
            return
        ctx.emit(ev.Notice, call_id=rlm_id, level="info",
                 message=f"The documents are loaded in the REPL ({time.monotonic() - started:.1f} s).")
    task.add_done_callback(done)
