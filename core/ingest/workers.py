"""Worker processes that run the extractors, one file at a time each.

Why not ProcessPoolExecutor: when one of its workers segfaults, every pending
future fails with BrokenProcessPool and nobody knows which file did it; and a
hung task cannot be killed alone. Here each Worker owns one process and one
pipe, so a file that hangs (per-file deadline) or kills its process (segfault,
OOM) is pinned to exactly that file; the Worker is replaced and the rest goes on.

Processes start with 'forkserver' where the OS has it (a clean parent: safe even
when the app has Qt or other threads running), else 'spawn'. A frozen app must
call multiprocessing.freeze_support() first thing in main().
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from core.ingest.model import (CORRUPT, CRASHED, TIMEOUT, Document, ExtractError, FileEntry,
                               IngestOptions, Job, Skip)

log = logging.getLogger(__name__)

MEMORY_LIMIT = 4 << 30        # address space per worker (Linux/macOS)

# The per-document function run inside the workers, for files and archive members:
# (path, source_path, data, name, job) -> Document, or raise ExtractError.
Extractor = Callable[[str, str, bytes, str, Job], Document]
# What a worker sends back for one task, last message first:
#   ("doc", Document) | ("skip", reason, detail) | ("end",) after an archive's members
# and before it, any number of:
#   ("step", text)            progress inside a file ("scan.pdf: OCR page 3 of 12")
#   ("begin", index, path, source_path)  archive member `index` goes to the extractor now
#   ("item", Document | Skip) one archive member's result
Outcome = tuple[Any, ...]


# Imported once by the fork server, so each new worker starts with the parsers
# already loaded (copy-on-write) instead of importing them again (~0.5 s).
PRELOAD = ["core.ingest.preload"]


def _context() -> multiprocessing.context.BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)   # only takes effect when the server starts
        return context
    return multiprocessing.get_context("spawn")


def stop_fork_server() -> None:
    """Stop multiprocessing's fork server and resource tracker once no ingest worker runs, so
    their memory (the parsers the server preloaded: ~55 MB resident, and ~13 MB) is not held
    beside a run's REPL; the next ingestion starts them again. Only the CLI's one-question
    commands call it: the window reads again and again."""
    for name, attr, pid in (("multiprocessing.forkserver", "_forkserver", "_forkserver_pid"),
                            ("multiprocessing.resource_tracker", "_resource_tracker", "_pid")):
        module = sys.modules.get(name)                      # not imported: none started
        server = getattr(module, attr, None)
        stop = getattr(server, "_stop", None)   # private (CPython's own tests use it); absent: kept
        if stop is None or getattr(server, pid, None) is None:
            continue
        try:
            stop()
        except OSError as exc:
            log.debug("%s not stopped: %s", name, exc)


def worker_main(conn: Connection, extractor: Extractor | None = None) -> None:
    """Child process loop: receive (FileEntry, max_bytes, IngestOptions, resume), send
    messages ending in an Outcome; None stops. `resume` skips that many archive
    members (read again after a member crashed the previous worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's business
    _limit_memory(MEMORY_LIMIT)
    if extractor is None:
        from core.ingest.extract import extract_data as extractor
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        entry, max_bytes, options, resume = task
        job = Job(options, entry.path, conn.send)
        try:
            outcome = read_entry(entry, max_bytes, job, extractor, resume, conn.send)
        except (OSError, ValueError) as exc:
            log.warning("cannot send results for %s: %s", entry.source_path, exc)
            return
        try:
            conn.send(outcome)
        except (OSError, ValueError) as exc:
            log.warning("cannot send result for %s: %s", entry.source_path, exc)
            return


def read_entry(entry: FileEntry, max_bytes: int, job: Job, extractor: Extractor, resume: int,
               send: Callable[[tuple], None]) -> Outcome:
    """One task: an archive streams its members (through the same extractor), any
    other file becomes one document."""
    from core.ingest import archives
    from core.ingest.extract import read_bytes
    if job.options.archives and _is_archive(entry):
        items = archives.expand(entry, job.options)
        index = -1
        while True:
            try:
                item = next(items)
            except StopIteration:
                break
            except MemoryError:
                return ("skip", CRASHED, "reading the archive ran out of memory")
            except Exception as exc:  # noqa: BLE001 - a reader bug ends this archive only
                log.debug("archive reading failed on %s", entry.source_path, exc_info=True)
                return ("skip", CORRUPT, f"reading the archive failed: {type(exc).__name__}: "
                                         f"{exc}{_where(exc)}")
            index += 1
            if index < resume:
                continue
            if isinstance(item, Skip):
                send(("item", item))
                continue
            send(("begin", index, item.path, item.source_path))
            outcome = guarded(item.source_path, lambda: extractor(
                item.path, item.source_path, item.data, item.name, job.at(item.path)))
            send(("item", outcome[1] if outcome[0] == "doc"
                  else Skip(item.path, item.source_path, outcome[1], outcome[2])))
        return ("end",)
    from core.ingest.extract import extract_data
    if extractor is not extract_data:
        return guarded(entry.source_path, lambda: extractor(
            entry.path, entry.source_path, read_bytes(entry.source_path, max_bytes), entry.path, job))
    from core.ingest.bigfile import big_format, kept_aside, read_big
    fmt = big_format(entry, job.options)
    if fmt is not None:
        return guarded(entry.source_path, lambda: read_big(entry, fmt, job))
    outcome = guarded(entry.source_path, lambda: extractor(
        entry.path, entry.source_path, read_bytes(entry.source_path, max_bytes), entry.path, job))
    return ("doc", kept_aside(outcome[1], entry, job.options)) if outcome[0] == "doc" else outcome


def _is_archive(entry: FileEntry) -> bool:
    from core.ingest import archives
    try:
        with open(entry.source_path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return False                   # the extractor reports it as unreadable
    kind = archives.kind_of(head, entry.path)
    if kind != "zip":
        return kind is not None
    import zipfile
    try:
        with zipfile.ZipFile(entry.source_path) as archive:
            return not archives.zip_is_document(archive)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False                   # the extractor reports the broken zip


def guarded(where: str, call: Callable[[], Document]) -> Outcome:
    """The boundary: whatever a parser does to one document becomes a doc or a skip."""
    try:
        return ("doc", call())
    except ExtractError as exc:
        return ("skip", exc.reason, exc.detail)
    except RecursionError:
        return ("skip", CORRUPT, "nesting too deep for the parser (RecursionError)")
    except MemoryError:
        return ("skip", CRASHED, f"parser ran out of memory (limit {MEMORY_LIMIT >> 30} GiB)")
    except Exception as exc:  # noqa: BLE001 - the boundary: a parser bug skips its file
        log.debug("extractor failed on %s", where, exc_info=True)
        return ("skip", CORRUPT, f"{type(exc).__name__}: {exc}{_where(exc)}")


def _limit_memory(limit: int) -> None:
    """Cap the worker's address space where the OS allows it, so a parser that
    balloons gets MemoryError (a skip) instead of dragging the machine into swap."""
    try:
        import resource
    except ImportError:
        return                     # Windows: no RLIMIT_AS
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError) as exc:
        log.info("cannot limit worker memory: %s", exc)


class Worker:
    """One child process. `run` blocks (call it from a thread)."""

    def __init__(self, extractor: Extractor | None = None) -> None:
        context = _context()
        self._conn, child = context.Pipe(duplex=True)
        self.process = context.Process(target=worker_main, args=(child, extractor),
                                       name="rlm-ingest-worker", daemon=True)
        self.process.start()
        child.close()

    def run(self, entry: FileEntry, max_bytes: int, timeout_s: float,
            options: IngestOptions | None = None, resume: int = 0,
            on_message: Callable[[tuple], None] | None = None) -> Outcome:
        """("doc", Document) | ("skip", reason, detail) | ("end",); a hang or a dead
        child becomes ("skip", "timeout"|"crashed", detail) and leaves this Worker
        dead. Steps, members and their results go to `on_message` as they come;
        the deadline counts from the last message (per page, per member)."""
        started = time.monotonic()
        try:
            self._conn.send((entry, max_bytes, options or IngestOptions(), resume))
            while True:
                if not self._conn.poll(timeout_s):
                    self.kill()
                    return ("skip", TIMEOUT, f"parser still busy after {timeout_s:g} s; stopped")
                message = self._conn.recv()
                if message[0] not in ("step", "begin", "item"):
                    return message
                if on_message is not None:
                    on_message(message)
        except (EOFError, OSError, BrokenPipeError):
            self.process.join(1.0)
            return ("skip", CRASHED, _death(self.process.exitcode, time.monotonic() - started))

    @property
    def alive(self) -> bool:
        return self.process.is_alive()

    def stop(self, grace_s: float = 1.0) -> None:
        """Ask the child to finish, then kill it if it does not."""
        if self.process.is_alive():
            try:
                self._conn.send(None)
            except (OSError, ValueError) as exc:
                log.debug("worker pipe already closed: %s", exc)
            self.process.join(grace_s)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the child (no-op if it already exited). Safe to call while
        another thread is blocked in run(): its poll/recv returns on EOF."""
        if self.process.is_alive():
            self.process.kill()
            self.process.join(2.0)

    def close(self) -> None:
        self.kill()
        self._conn.close()


def _where(exc: BaseException) -> str:
    """" (in module.py:123)" for the frame that raised, so a parser bug can be found."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    frame = frames[-1]
    return f" (in {os.path.basename(frame.filename)}:{frame.lineno})"


def _death(exitcode: int | None, seconds: float) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"parser crashed its worker process ({name}) after {seconds:.1f} s"
    return f"parser's worker process exited (code {exitcode}) after {seconds:.1f} s"
