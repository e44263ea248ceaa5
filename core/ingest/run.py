"""The async ingestion: walk in a thread, read in worker processes, report
progress, return documents and skips in walk order.

    result = await ingest(["~/Reports"], IngestOptions(), on_progress=print)

Cancelling the awaiting task kills the worker processes at once (SIGKILL) and
stops the walk; CancelledError propagates to the caller.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from core.ingest.model import (CRASHED, EMPTY, TIMEOUT, TOO_LARGE, Document, FileEntry,
                               IngestOptions, IngestResult, Progress, Skip)
from core.ingest.walk import iter_walk
from core.ingest.workers import Extractor, Worker

log = logging.getLogger(__name__)

ProgressCallback = Callable[[Progress], None]

WALK_BATCH = 256          # walk results handed to the loop in batches ...
WALK_BATCH_S = 0.05       # ... or at least this often


async def ingest(paths: Sequence[str | Path], options: IngestOptions = IngestOptions(),
                 on_progress: ProgressCallback | None = None) -> IngestResult:
    """Read files and folders into Documents; every file ends as a Document or a
    Skip. Raises FileNotFoundError only when none of `paths` exists."""
    return await Ingestion(paths, options, on_progress).run()


def ingest_sync(paths: Sequence[str | Path], options: IngestOptions = IngestOptions(),
                on_progress: ProgressCallback | None = None) -> IngestResult:
    """`ingest` for scripts (runs its own event loop)."""
    return asyncio.run(ingest(paths, options, on_progress))


class Ingestion:
    """One ingestion. `extractor` replaces the per-file function run inside the
    workers (it must be importable by name); tests use it to simulate parsers
    that hang or crash. The product always uses the default."""

    def __init__(self, paths: Sequence[str | Path], options: IngestOptions = IngestOptions(),
                 on_progress: ProgressCallback | None = None,
                 extractor: Extractor | None = None) -> None:
        self.paths = [os.path.expanduser(os.fspath(p)) for p in paths]
        self.options = options
        self.on_progress = on_progress
        self.extractor = extractor
        self.lanes = options.workers or os.cpu_count() or 1
        self._results: dict[int, Document | Skip] = {}
        self._queue: deque[tuple[int, FileEntry]] = deque()
        self._seq = 0
        self._walk_done = False
        self._files_total = self._files_done = self._bytes_total = self._bytes_done = 0

    async def run(self) -> IngestResult:
        started = time.monotonic()
        missing = [p for p in self.paths if not os.path.lexists(p)]
        if self.paths and len(missing) == len(self.paths):
            raise FileNotFoundError("no such file or folder: " + ", ".join(self.paths))
        self._loop = asyncio.get_running_loop()
        self._ready = asyncio.Condition()
        self._report(None)
        stop = threading.Event()
        threads = ThreadPoolExecutor(max_workers=self.lanes + 1, thread_name_prefix="rlm-ingest")
        walker = self._loop.run_in_executor(threads, self._walk, stop)
        lanes = [asyncio.ensure_future(self._lane(threads)) for _ in range(self.lanes)]
        try:
            await walker
            await asyncio.gather(*lanes)
        finally:
            stop.set()
            for lane in lanes:
                lane.cancel()
            await asyncio.gather(*lanes, return_exceptions=True)
            threads.shutdown(wait=False)
        ordered = [self._results[seq] for seq in sorted(self._results)]
        documents = [item for item in ordered if isinstance(item, Document)]
        skipped = [item for item in ordered if isinstance(item, Skip)]
        return IngestResult(documents=documents, skipped=skipped,
                            total_chars=sum(d.chars for d in documents),
                            total_bytes=sum(d.size for d in documents),
                            duration_ms=int((time.monotonic() - started) * 1000))

    # -- the walk (a thread) feeds the queue through the loop -----------------

    def _walk(self, stop: threading.Event) -> None:
        batch: list[FileEntry | Skip] = []
        last = time.monotonic()
        try:
            for item in iter_walk(self.paths, self.options):
                if stop.is_set():
                    return
                batch.append(item)
                if len(batch) >= WALK_BATCH or time.monotonic() - last >= WALK_BATCH_S:
                    self._hand_over(batch, False)
                    batch, last = [], time.monotonic()
        finally:
            if not stop.is_set():
                self._hand_over(batch, True)

    def _hand_over(self, batch: list[FileEntry | Skip], done: bool) -> None:
        try:
            self._loop.call_soon_threadsafe(self._accept, batch, done)
        except RuntimeError as exc:     # the loop closed under us: the ingestion was cancelled
            log.debug("walk results dropped: %s", exc)

    def _accept(self, batch: list[FileEntry | Skip], done: bool) -> None:
        limit = self.options.max_file_bytes
        for item in batch:
            seq, self._seq = self._seq, self._seq + 1
            if isinstance(item, Skip):
                self._results[seq] = item
                continue
            self._files_total += 1
            if item.size == 0:
                self._finish(seq, Skip(item.path, item.source_path, EMPTY, "0 bytes"), 0)
            elif item.size > limit:
                self._finish(seq, Skip(item.path, item.source_path, TOO_LARGE,
                                       f"{item.size:,} bytes, over the {limit:,} byte limit",
                                       item.size), 0)
            else:
                self._bytes_total += item.size
                self._queue.append((seq, item))
        self._walk_done = done
        self._report(None)
        asyncio.ensure_future(self._notify())

    async def _notify(self) -> None:
        async with self._ready:
            self._ready.notify_all()

    # -- lanes: one worker process each ---------------------------------------

    async def _next(self) -> tuple[int, FileEntry] | None:
        async with self._ready:
            await self._ready.wait_for(lambda: self._queue or self._walk_done)
            return self._queue.popleft() if self._queue else None

    async def _lane(self, threads: ThreadPoolExecutor) -> None:
        worker: Worker | None = None
        pending: Future | None = None
        try:
            while (job := await self._next()) is not None:
                seq, entry = job
                if worker is None:
                    creating = threads.submit(Worker, self.extractor)
                    try:
                        worker = await asyncio.wrap_future(creating)
                    except asyncio.CancelledError:
                        creating.add_done_callback(_close_created)
                        raise
                pending = threads.submit(worker.run, entry, self.options.max_file_bytes,
                                         self.options.per_file_timeout_s)
                outcome = await asyncio.wrap_future(pending)
                if outcome[0] == "skip" and outcome[1] in (TIMEOUT, CRASHED):
                    log.warning("%s: %s (%s); starting a new worker", entry.path, outcome[1],
                                outcome[2])
                    dead, worker = worker, None
                    await self._loop.run_in_executor(threads, dead.close)
                if outcome[0] == "doc":
                    result: Document | Skip = outcome[1]
                else:
                    result = Skip(entry.path, entry.source_path, outcome[1], outcome[2], entry.size)
                self._finish(seq, result, entry.size)
        finally:
            if worker is not None:
                self._retire(worker, pending, threads)

    def _retire(self, worker: Worker, pending: Future | None, threads: ThreadPoolExecutor) -> None:
        """Stop a worker without blocking the loop: kill now if it is busy (the
        thread blocked in run() wakes on EOF), else ask it to exit."""
        if pending is not None and not pending.done():
            worker.process.kill()
            pending.add_done_callback(lambda _: worker.close())
        else:
            threads.submit(worker.stop)

    def _finish(self, seq: int, result: Document | Skip, size: int) -> None:
        self._results[seq] = result
        self._files_done += 1
        self._bytes_done += size
        self._report(result.path)

    def _report(self, current: str | None) -> None:
        if self.on_progress is None:
            return
        progress = Progress(self._files_done, self._files_total, self._bytes_done,
                            self._bytes_total, current)
        try:
            self.on_progress(progress)
        except Exception:  # noqa: BLE001 - a broken progress display must not stop ingestion
            log.exception("progress callback failed")


def _close_created(future: Future) -> None:
    """A Worker finished starting after its lane was cancelled: stop it."""
    if not future.cancelled() and future.exception() is None:
        future.result().close()
