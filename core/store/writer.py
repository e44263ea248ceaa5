"""EventWriter: persists events as they happen, from one background thread.

    writer = store.writer()      # one per process that runs questions
    engine_emit = writer         # writer(event) only enqueues: never blocks the event loop
    writer.flush()               # wait until everything enqueued so far is committed
    writer.close()               # flush, stop the thread, release the owner lock

The thread owns its own SQLite connection. It takes whatever is queued (up to
MAX_BATCH events), writes it in one transaction and commits, then waits for the
next event: under load a commit follows every batch, so a kill -9 loses at most
the batch being written (a few ms to ~50 ms of events); at rest nothing waits.
"""

from __future__ import annotations

import atexit
import logging
import queue
import sqlite3
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.events import Event
from core.store.db import connect, write_transaction
from core.store.errors import StoreWriteError
from core.store.owners import OwnerLock
from core.store.projection import Projection

log = logging.getLogger(__name__)

MAX_BATCH = 2000
RETRIES = (0.05, 0.25, 1.0)        # seconds to wait before trying a failed batch again

_open_writers: "weakref.WeakSet[EventWriter]" = weakref.WeakSet()


@dataclass
class _Flush:
    done: threading.Event = field(default_factory=threading.Event)


_STOP = object()


class EventWriter:
    def __init__(self, db_path: Path) -> None:
        self.path = Path(db_path)
        self.owner = OwnerLock(self.path)
        self.events_written = 0
        self.error: BaseException | None = None   # the last batch that could not be written
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._dead = False                         # the thread ended without being told to
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rlm-store-writer", daemon=True)
        self._thread.start()
        _open_writers.add(self)

    # -- producer side (any thread, usually the event loop) ----------------------------
    def __call__(self, event: Event) -> None:
        if self._closed:
            raise StoreWriteError(f"the event writer of {self.path} is closed; {event.type} was not stored")
        if self._dead:
            raise StoreWriteError(f"the event writer of {self.path} stopped ({self.error}); "
                                  f"{event.type} was not stored")
        self._queue.put(event)

    def flush(self, timeout: float = 10.0) -> None:
        """Block until every event enqueued before this call is committed."""
        if not self._thread.is_alive() or self._dead:
            raise StoreWriteError(f"the event writer thread of {self.path} is not running"
                                  + (f": {self.error}" if self.error else ""))
        marker = _Flush()
        self._queue.put(marker)
        if not marker.done.wait(timeout):
            raise StoreWriteError(f"events not written within {timeout:g} s (database busy?)")
        if self.error is not None:
            raise StoreWriteError(f"some events could not be written: {self.error}") from self.error

    def close(self, timeout: float = 30.0) -> None:
        """Write what is queued, stop the thread and release the owner lock. Runs of this
        process still 'running' (no RunFinished/RunFailed arrived) become 'interrupted'.
        Does not raise on lost events: see `error` (and the log)."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.error("event writer of %s did not stop within %g s", self.path, timeout)
        self.owner.release()
        _open_writers.discard(self)

    # -- the writer thread ---------------------------------------------------------------
    def _run(self) -> None:
        """The thread. Everything it does is guarded: if it cannot open the database (locked
        past the busy timeout, an I/O error, no permission) or ends for any other reason, the
        failure is `error` (the run's store_error) and later writes raise."""
        db = None
        try:
            db = connect(self.path)
            self._serve(db)
        except BaseException as exc:
            self.error = exc
            log.exception("the event writer of %s stopped", self.path)
        finally:
            if not self._closed:
                self._dead = True
            self._release_waiters()
            if db is not None:
                db.close()

    def _release_waiters(self) -> None:
        """Flush markers queued to a writer that no longer writes: answered (with `error` set)."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, _Flush):
                item.done.set()

    def _serve(self, db: Any) -> None:
        projection = Projection(self.owner)
        while True:
            items = [self._queue.get()]
            while len(items) < MAX_BATCH:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                if self._handle(db, projection, items):
                    break
            except Exception as exc:   # a bug must not kill the thread: later events still get written
                self.error = exc
                log.exception("event writer failed on a batch of %d items", len(items))
                for item in items:
                    if isinstance(item, _Flush):
                        item.done.set()
                    elif item is _STOP:
                        return self._mark_unfinished(db)
        self._mark_unfinished(db)

    def _handle(self, db: Any, projection: Projection, items: list[Any]) -> bool:
        """Write runs of events, then answer markers in order. True when told to stop."""
        events: list[Event] = []
        for item in items:
            if isinstance(item, Event):
                events.append(item)
                continue
            self._write(db, projection, events)
            events = []
            if isinstance(item, _Flush):
                item.done.set()
            elif item is _STOP:
                return True
        self._write(db, projection, events)
        return False

    def _write(self, db: Any, projection: Projection, events: list[Event]) -> None:
        if not events:
            return
        for attempt, pause in enumerate((0.0, *RETRIES)):
            if pause:
                time.sleep(pause)
            try:
                with write_transaction(db):
                    self.events_written += projection.apply(db, events)
                return
            except sqlite3.Error as exc:
                log.warning("writing %d events failed (attempt %d): %s", len(events), attempt + 1, exc)
                last = exc
        self.error = last
        log.error("lost %d events (%s .. %s seq %s-%s): %s", len(events), events[0].type, events[-1].type,
                  events[0].seq, events[-1].seq, last)

    def _mark_unfinished(self, db: Any) -> None:
        try:
            with write_transaction(db):
                db.execute("UPDATE runs SET status = 'interrupted', error = coalesce(error, ?) "
                           "WHERE owner_token = ? AND status = 'running'",
                           ["the run ended without a result (its writer closed)", self.owner.token])
        except sqlite3.Error as exc:
            log.error("could not mark unfinished runs of this process: %s", exc)


@atexit.register
def _close_open_writers() -> None:
    """A process that exits without closing its writer still gets its events written."""
    for writer in list(_open_writers):
        writer.close()
