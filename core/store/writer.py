"""EventWriter: persists events as they happen, from one background thread.

    writer = store.writer()      # one per process that runs questions
    engine_emit = writer         # writer(event) only enqueues: never blocks the event loop
    writer.flush()               # wait until everything enqueued so far is committed
    writer.submit(fn)            # fn(db) in the writer's transaction, after the events before it
    writer.close()               # flush, stop the thread, release the owner lock

One writer can serve many runs (a grid's cells share one: a thread and a connection per
run cost ~10 ms of CPU each, and 64 connections contend for the write lock); `submit`
puts other rows (a grid cell's state) in the same order and the same commits as the
events. The thread owns its own SQLite connection. It takes whatever is queued (up to
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


@dataclass
class _Call:
    fn: Any                        # fn(db): rows written in the batch's transaction
    then: Any = None               # then(None) once committed, then(exception) if not


_STOP = object()


class EventWriter:
    def __init__(self, db_path: Path, *, linger_s: float = 0.0) -> None:
        """`linger_s`: after each batch the thread waits this long before taking the next, so
        that many runs' events share a commit and a wake-up (a grid's writer: each event
        otherwise wakes the thread, which takes the GIL from the loop); a kill -9 then loses
        at most the events of that wait and the batch being written."""
        self.path = Path(db_path)
        self.linger_s = linger_s
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

    def submit(self, fn: Any, then: Any = None) -> None:
        """Run `fn(db)` on the writer's thread inside the transaction of the batch it lands in,
        after every event enqueued before it; `then(None)` once that batch is committed, or
        `then(exception)`: what `fn` raised (its changes undone), or the batch's error.
        `then` runs on the writer's thread."""
        if self._closed or self._dead:
            raise StoreWriteError(f"the event writer of {self.path} is "
                                  + ("closed" if self._closed else f"stopped ({self.error})"))
        self._queue.put(_Call(fn, then))

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
            elif isinstance(item, _Call):
                _tell(item, StoreWriteError(f"the event writer of {self.path} stopped"))

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
                if self.linger_s:
                    time.sleep(self.linger_s)
            except Exception as exc:   # a bug must not kill the thread: later events still get written
                self.error = exc
                log.exception("event writer failed on a batch of %d items", len(items))
                for item in items:
                    if isinstance(item, _Flush):
                        item.done.set()
                    elif isinstance(item, _Call):
                        _tell(item, exc)
                    elif item is _STOP:
                        return self._mark_unfinished(db)
        self._mark_unfinished(db)

    def _handle(self, db: Any, projection: Projection, items: list[Any]) -> bool:
        """Write runs of events and calls, then answer markers in order. True when told to stop."""
        work: list[Any] = []
        for item in items:
            if isinstance(item, (Event, _Call)):
                work.append(item)
                continue
            self._write(db, projection, work)
            work = []
            if isinstance(item, _Flush):
                item.done.set()
            elif item is _STOP:
                return True
        self._write(db, projection, work)
        return False

    def _write(self, db: Any, projection: Projection, work: list[Any]) -> None:
        """The events, then the calls, in one transaction (retried whole on a database error):
        a call sees the rows of every event enqueued before it, and is committed with them."""
        if not work:
            return
        calls = [w for w in work if isinstance(w, _Call)]
        events = [w for w in work if not isinstance(w, _Call)]
        for attempt, pause in enumerate((0.0, *RETRIES)):
            if pause:
                time.sleep(pause)
            failed: dict[int, BaseException] = {}
            try:
                with write_transaction(db):
                    written = projection.apply(db, events) if events else 0
                    for call in calls:
                        db.execute("SAVEPOINT writer_call")
                        try:
                            call.fn(db)
                        except sqlite3.Error:
                            raise
                        except Exception as exc:    # its own fault: undone, said to its caller; the batch goes on
                            db.execute("ROLLBACK TO writer_call")
                            failed[id(call)] = exc
                        db.execute("RELEASE writer_call")
                self.events_written += written
                for call in calls:
                    _tell(call, failed.get(id(call)))
                return
            except sqlite3.Error as exc:
                log.warning("writing %d events and %d rows failed (attempt %d): %s", len(events), len(calls),
                            attempt + 1, exc)
                last = exc
        self.error = last
        for call in calls:
            _tell(call, last)
        if events:
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


def _tell(call: _Call, error: BaseException | None) -> None:
    if call.then is None:
        return
    try:
        call.then(error)
    except Exception:              # a caller's callback must not stop the writer
        log.exception("a writer callback failed")


@atexit.register
def _close_open_writers() -> None:
    """A process that exits without closing its writer still gets its events written."""
    for writer in list(_open_writers):
        writer.close()
