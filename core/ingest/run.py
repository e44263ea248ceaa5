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
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.ingest import inline
from core.ingest.archives import looks_like_archive
from core.ingest.bigfile import remove_partial, spool_dir
from core.ingest.model import (CRASHED, DUPLICATE, DUPLICATE_PREFIX, EMPTY, TIMEOUT, TOO_LARGE,
                               Document, FileEntry, IngestOptions, IngestResult, Progress, Skip,
                               too_large_detail)
from core.ingest.text_back import release
from core.ingest.walk import iter_walk
from core.ingest.workers import Extractor, Worker

log = logging.getLogger(__name__)

ProgressCallback = Callable[[Progress], None]

WALK_BATCH = 256          # walk results handed to the loop in batches ...
WALK_BATCH_S = 0.05       # ... or at least this often
MAX_RESTARTS = 5          # workers one archive may crash before the rest of it is given up
LOOKUP_BATCH = 64         # unchanged files looked up in the store per thread call


async def ingest(paths: Sequence[str | Path], options: IngestOptions = IngestOptions(),
                 on_progress: ProgressCallback | None = None, cache: Any = None) -> IngestResult:
    """Read files and folders into Documents; every file ends as a Document or a
    Skip. Raises FileNotFoundError only when none of `paths` exists. `cache`
    (core/store/extracts.py: ExtractCache) gives back what an earlier read of an
    unchanged file produced, so it is not read again."""
    return await Ingestion(paths, options, on_progress, cache=cache).run()


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
                 extractor: Extractor | None = None, cache: Any = None) -> None:
        self.paths = [os.path.expanduser(os.fspath(p)) for p in paths]
        self.cache = cache                       # .lookup(FileEntry) -> Document | None, in a thread
        self.unchanged = 0
        # Where big files' texts go, named here: a worker forked from a fork server started
        # earlier (under another data folder) must not decide it from its own environment.
        self.options = options if options.spool_dir else replace(options, spool_dir=spool_dir())
        self.on_progress = on_progress
        self.extractor = extractor
        self.lanes = options.workers or os.cpu_count() or 1
        self._results: dict[int, Document | Skip | list[Document | Skip]] = {}
        self._queue: deque[tuple[int, FileEntry]] = deque()
        self._lookups: dict[int, tuple[Any, int]] = {}   # seq -> (its batch's lookup, its place in it)
        self._seq = 0
        self._walk_done = False
        self._files_total = self._files_done = self._bytes_total = self._bytes_done = 0
        self._reading: dict[int, int] = {}      # seq -> bytes read so far of a big file

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
        ordered: list[Document | Skip] = []
        for seq in sorted(self._results):
            item = self._results[seq]
            ordered.extend(item if isinstance(item, list) else [item])
        ordered = read_once(ordered)
        documents = [item for item in ordered if isinstance(item, Document)]
        skipped = [item for item in ordered if isinstance(item, Skip)]
        return IngestResult(documents=documents, skipped=skipped,
                            total_chars=sum(d.chars for d in documents),
                            total_bytes=sum(d.size for d in documents),
                            duration_ms=int((time.monotonic() - started) * 1000), unchanged=self.unchanged)

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
        for item in batch:
            seq, self._seq = self._seq, self._seq + 1
            if isinstance(item, Skip):
                self._results[seq] = item
                continue
            self._files_total += 1
            if item.size == 0:
                self._finish(seq, Skip(item.path, item.source_path, EMPTY, "0 bytes"), 0)
            elif (too_large := self._over_limit(item)) is not None:
                self._finish(seq, Skip(item.path, item.source_path, TOO_LARGE, too_large, item.size), 0)
            else:
                self._bytes_total += item.size
                self._queue.append((seq, item))
        self._walk_done = done
        self._report(None)
        asyncio.ensure_future(self._notify())

    def _over_limit(self, item: FileEntry) -> str | None:
        """Why `item` is too large to read, or None. A file on disk has no limit unless the user
        set one (max_file_bytes); an archive may be up to max_archive_bytes (its members are
        measured as they inflate)."""
        if self.options.archives and looks_like_archive(item.path):
            limit = max(self.options.max_file_bytes, self.options.max_archive_bytes)
            return None if item.size <= limit else \
                f"{item.size:,} bytes, over the {limit:,} byte archive limit"
        limit = self.options.max_file_bytes
        return None if limit <= 0 or item.size <= limit else too_large_detail(item.size, limit)

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
                member = _Members()
                kept = await self._unchanged(seq, entry, threads)
                if kept is not None:
                    self.unchanged += 1
                    self._finish(seq, kept, entry.size)
                    continue
                outcome = None if self.extractor is not None else await asyncio.wrap_future(
                    threads.submit(_read_if_plain, entry, self.options))
                if outcome is not None:
                    self._finish(seq, outcome[1] if outcome[0] == "doc" else
                                 Skip(entry.path, entry.source_path, outcome[1], outcome[2], entry.size),
                                 entry.size)
                    continue
                while True:
                    if worker is None:
                        creating = threads.submit(Worker, self.extractor)
                        try:
                            worker = await asyncio.wrap_future(creating)
                        except asyncio.CancelledError:
                            creating.add_done_callback(_close_created)
                            raise
                    on_message = self._messages(seq, member)
                    pending = threads.submit(worker.run, entry, self.options.max_file_bytes,
                                             self.options.per_file_timeout_s, self.options,
                                             member.resume, on_message)
                    outcome = await asyncio.wrap_future(pending)
                    await self._settled()      # messages queued by the thread come first
                    if outcome[0] == "skip" and outcome[1] in (TIMEOUT, CRASHED):
                        log.warning("%s: %s (%s); starting a new worker",
                                    member.current or entry.path, outcome[1], outcome[2])
                        dead, worker = worker, None
                        await self._loop.run_in_executor(threads, dead.close)
                        remove_partial(self.options, entry.source_path)   # a big file's text half written
                        if member.current is not None and member.restarts < MAX_RESTARTS:
                            # A member killed the worker: skip it, read the rest anew.
                            path, source = member.current
                            self._member(seq, Skip(path, source, outcome[1], outcome[2]))
                            member.restart()
                            continue
                    break
                if outcome[0] == "doc":
                    result: Document | Skip | None = await asyncio.wrap_future(
                        threads.submit(_stamped, outcome[1], entry))
                elif outcome[0] == "end":
                    result = None
                else:
                    detail = outcome[2]
                    if member.restarts >= MAX_RESTARTS:
                        detail += f" (the rest of the archive was given up after " \
                                  f"{MAX_RESTARTS} crashed workers)"
                    result = Skip(entry.path, entry.source_path, outcome[1], detail, entry.size)
                self._finish(seq, result, entry.size)
        finally:
            if worker is not None:
                self._retire(worker, pending, threads, entry.source_path if pending is not None else None)

    async def _unchanged(self, seq: int, entry: FileEntry, threads: ThreadPoolExecutor) -> Document | None:
        """What an earlier read of this unchanged file produced, or None (read it). Looked up
        LOOKUP_BATCH files at a time, this one and those queued behind it, in one thread call:
        a second run over 1,000 unchanged files is that many lookups of a millisecond or less."""
        if self.cache is None or self.extractor is not None or looks_like_archive(entry.path):
            return None
        ahead = self._lookups.pop(seq, None)
        if ahead is None:
            behind: list[tuple[int, FileEntry]] = []
            for queued_seq, queued in self._queue:   # those already looked up are at its front
                if len(behind) >= LOOKUP_BATCH - 1:
                    break
                if queued_seq not in self._lookups and not looks_like_archive(queued.path):
                    behind.append((queued_seq, queued))
            found = asyncio.wrap_future(threads.submit(_looked_up_all, self.cache,
                                                       [entry] + [e for _, e in behind]))
            for at, (queued_seq, _) in enumerate(behind, start=1):
                self._lookups[queued_seq] = (found, at)
            ahead = (found, 0)
        found, at = ahead
        return (await asyncio.shield(found))[at]      # shared: one lane's cancel is not the others'

    def _messages(self, seq: int, member: "_Members") -> Callable[[tuple], None]:
        """A worker's in-between messages, received in a thread, handled on the loop."""
        def on_message(message: tuple) -> None:
            kind = message[0]
            if kind == "begin":
                member.begin(message[1], message[2], message[3] if len(message) > 3 else "")
                return
            try:
                self._loop.call_soon_threadsafe(self._on_message, seq, message)
            except RuntimeError as exc:     # the loop closed: the ingestion was cancelled
                log.debug("worker message dropped: %s", exc)
        return on_message

    def _on_message(self, seq: int, message: tuple) -> None:
        if message[0] == "step":
            if len(message) > 2:                 # bytes read so far of a big file
                self._reading[seq] = int(message[2])
            self._report(None, step=message[1])
        elif message[0] == "item":
            self._member(seq, message[1])

    def _member(self, seq: int, result: Document | Skip) -> None:
        held = self._results.setdefault(seq, [])
        assert isinstance(held, list)
        held.append(result)
        self._files_total += 1
        self._files_done += 1
        self._report(result.path)

    async def _settled(self) -> None:
        """Let callbacks that a worker thread queued before returning run first."""
        done = self._loop.create_future()
        self._loop.call_soon_threadsafe(done.set_result, None)
        await done

    def _retire(self, worker: Worker, pending: Future | None, threads: ThreadPoolExecutor,
                source_path: str | None = None) -> None:
        """Stop a worker without blocking the loop: kill now if it is busy (the
        thread blocked in run() wakes on EOF), else ask it to exit. A big file it was
        reading leaves no half-written text behind (removed once the worker is dead)."""
        if pending is not None and not pending.done():
            worker.process.kill()
            options = self.options

            def buried(_: Future) -> None:
                worker.close()
                if source_path is not None:
                    remove_partial(options, source_path)
            pending.add_done_callback(buried)
        else:
            threads.submit(worker.stop)

    def _finish(self, seq: int, result: Document | Skip | None, size: int) -> None:
        """A file is done: its document or skip (None: an archive, whose members came
        one by one)."""
        if result is not None:
            held = self._results.get(seq)
            if isinstance(held, list):
                held.append(result)
            else:
                self._results[seq] = result
        else:
            self._results.setdefault(seq, [])
        self._files_done += 1
        self._bytes_done += size
        self._reading.pop(seq, None)
        self._report(result.path if result is not None else None)

    def _report(self, current: str | None, step: str = "") -> None:
        if self.on_progress is None:
            return
        progress = Progress(self._files_done, self._files_total,
                            self._bytes_done + sum(self._reading.values()), self._bytes_total, current, step)
        try:
            self.on_progress(progress)
        except Exception:  # noqa: BLE001 - a broken progress display must not stop ingestion
            log.exception("progress callback failed")


def _stamped(doc: Any, entry: FileEntry) -> Any:
    """A document read from `entry`, with the file's modification time (for ExtractCache),
    its text dropped when the file gives it back (core/ingest/text_back.py). Blocking (it
    may hash the text): call it in a thread."""
    if isinstance(doc, Document) and entry.mtime_ns and doc.source_path == entry.source_path:
        return release(doc.but(mtime_ns=entry.mtime_ns), entry.source_path, entry.size, entry.mtime_ns)
    return doc


def _looked_up(cache: Any, entry: FileEntry) -> Document | None:
    """cache.lookup, its document released like a fresh read's (in the same thread)."""
    try:
        doc = cache.lookup(entry)
    except Exception:   # noqa: BLE001 - a broken cache only costs a fresh read
        log.warning("the store of earlier reads failed for %s; reading it again", entry.path,
                    exc_info=True)
        return None
    return None if doc is None else release(doc, entry.source_path, entry.size, entry.mtime_ns)


def _looked_up_all(cache: Any, entries: list[FileEntry]) -> list[Document | None]:
    return [_looked_up(cache, entry) for entry in entries]


def _read_if_plain(entry: FileEntry, options: IngestOptions) -> Any:
    """inline.read_if_plain, its document stamped and released (in the same thread)."""
    outcome = inline.read_if_plain(entry, options.max_file_bytes, options)
    if outcome is not None and outcome[0] == "doc":
        return (outcome[0], _stamped(outcome[1], entry))
    return outcome


class _Members:
    """Where a lane is inside an archive: the member the worker is reading now,
    and how many members a new worker skips after a crash."""

    def __init__(self) -> None:
        self.current: tuple[str, str] | None = None
        self.index = -1
        self.resume = 0
        self.restarts = 0

    def begin(self, index: int, path: str, source: str) -> None:
        self.index, self.current = index, (path, source)

    def restart(self) -> None:
        self.resume = self.index + 1
        self.current = None
        self.restarts += 1


def read_once(items: list[Document | Skip]) -> list[Document | Skip]:
    """Duplicates read once: of the documents with the same bytes (sha256) the one
    nearest the top of the folder is read (fewest path parts, then name order: the
    file, not its copy in a subfolder); each other becomes Skip("duplicate",
    "duplicate of PATH") with its own size, and its path joins the original's
    `duplicates` (so a citation of it still resolves). Positions are kept."""
    groups: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        if isinstance(item, Document):
            groups.setdefault(item.sha256, []).append(i)
    out: list[Document | Skip] = list(items)
    for indexes in groups.values():
        if len(indexes) < 2:
            continue
        docs = [items[i] for i in indexes]
        keep = min(range(len(docs)), key=lambda k: _nearest_first(docs[k].path))
        original = docs[keep]
        assert isinstance(original, Document)
        copies = [d for k, d in enumerate(docs) if k != keep]
        copies.sort(key=lambda d: _nearest_first(d.path))
        out[indexes[keep]] = original.but(duplicates=original.duplicates + tuple(d.path for d in copies))
        for k, doc in enumerate(docs):
            if k != keep:
                out[indexes[k]] = Skip(doc.path, doc.source_path, DUPLICATE, DUPLICATE_PREFIX + original.path,
                                       size=doc.size or 0)
    return out


def _nearest_first(path: str) -> tuple[int, str]:
    parts = path.replace("\\", "/").split("/")
    return (len(parts), path.lower())


def against_known(known: Iterable[Any], documents: Sequence[Document]
                  ) -> tuple[list[Document], list[Skip], list[Any]]:
    """A later ingestion's documents against those already held (a second drop
    into the same sources): (documents still new, duplicate skips, held documents
    that gained `duplicates`). A path dropped again replaces itself, no duplicate."""
    first = {d.sha256: d for d in known if getattr(d, "sha256", None)}
    kept: list[Document] = []
    skips: list[Skip] = []
    grown: dict[str, Any] = {}
    for doc in documents:
        original = first.get(doc.sha256)
        if original is None or original.path == doc.path:
            kept.append(doc)
            continue
        duplicates = tuple(getattr(original, "duplicates", ())) + (doc.path,)
        try:
            original = original.but(duplicates=duplicates) if isinstance(original, Document) \
                else replace(original, duplicates=duplicates)
        except TypeError:                   # a document type without `duplicates`
            pass
        grown[original.path] = first[doc.sha256] = original
        skips.append(Skip(doc.path, doc.source_path, DUPLICATE, DUPLICATE_PREFIX + original.path,
                          size=doc.size or 0))
    return kept, skips, list(grown.values())


def _close_created(future: Future) -> None:
    """A Worker finished starting after its lane was cancelled: stop it."""
    if not future.cancelled() and future.exception() is None:
        future.result().close()
