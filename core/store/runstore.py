"""RunStore: the one object that owns the runs database.

    store = RunStore.open()                    # core.paths.database_path(); migrates; marks dead runs
    writer = store.writer()                    # EventWriter: engine events -> rows, from its own thread
    store.list_runs(search="revenue", status="finished")
    for event in store.iter_events(run_id): fold(event)      # replay

All public methods are thread-safe (one lock around the store's connection):
the runner calls `save_sources` through `asyncio.to_thread`.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator

from core import paths
from core.events import Event
from core.store import extracts, queries, sidecars
from core.store.blobs import (Blob, PreparedSource, collect_garbage, get_blob, has_blob, iter_sources, put_blob,
                              SOURCE_BLOB_BATCH, stored_blobs, write_sources)
from core.store.db import connect, write_transaction
from core.store.errors import RunBusyError
from core.store.migrations import migrate
from core.store.owners import owner_alive
from core.store.queries import StoredSkip
from core.store.writer import EventWriter

log = logging.getLogger(__name__)


def mark_interrupted(db: Any, run_ids: Iterable[str], reason: str) -> None:
    """Runs whose process died: status 'interrupted', their open calls too; call in a transaction."""
    for run_id in run_ids:
        db.execute(
            "UPDATE runs SET status = 'interrupted', error = coalesce(error, ?), finished_utc = "
            "coalesce(finished_utc, (SELECT max(ts_utc) FROM events WHERE run_id = ?)) "
            "WHERE id = ? AND status = 'running'", [reason, run_id, run_id])
        db.execute("UPDATE calls SET status = 'interrupted' WHERE run_id = ? AND status = 'running'", [run_id])


def write_sources_in(db: Any, run_id: str, documents: Iterable[Any], skipped: Iterable[Any] = ()) -> None:
    """save_sources inside the caller's transaction (a shared writer's batch: EventWriter.submit):
    for runs whose texts are small or already stored, where a thread of their own costs more
    than the hashing and compressing."""
    documents = list(documents)
    prepared: list[PreparedSource] = []
    for item in iter_sources(documents, list(skipped), lambda sha: has_blob(db, sha)):
        for blob in item.blobs:
            put_blob(db, blob)
        prepared.append(PreparedSource(item.row, ()))
    shas = {item.row["source_path"]: (item.row["text_sha256"], item.row["spans_sha256"])
            for item in prepared if item.row["status"] == "read" and item.row["source_path"]}
    write_sources(db, run_id, prepared)
    extracts.remember(db, documents, shas)


class RunStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.db = connect(self.path)
        self._lock = threading.RLock()
        migrate(self.db)

    @classmethod
    def open(cls, path: Path | None = None) -> "RunStore":
        store = cls(Path(path) if path is not None else paths.database_path())
        store.recover()
        store.sweep_sidecars()
        return store

    def sweep_sidecars(self) -> int:
        """Remove sidecar texts no run names (core/store/sidecars.py). Returns how many went."""
        with self._lock:
            return sidecars.sweep(self.db, sidecars.spool_of(self.path))

    def recover(self) -> list[str]:
        """Mark runs left 'running' by a process that is gone as 'interrupted'."""
        with self._lock:
            rows = self.db.execute("SELECT id, owner_token FROM runs WHERE status = 'running'").fetchall()
            alive: dict[str | None, bool] = {}
            dead = []
            for run_id, token in rows:
                if token not in alive:
                    alive[token] = owner_alive(self.path, token)
                if not alive[token]:
                    dead.append(run_id)
            if dead:
                with write_transaction(self.db):
                    mark_interrupted(self.db, dead, "the app stopped before the run finished")
                log.info("marked %d run(s) interrupted: %s", len(dead), ", ".join(dead))
            return dead

    def writer(self, linger_s: float = 0.0) -> EventWriter:
        return EventWriter(self.path, linger_s=linger_s)

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- sources -----------------------------------------------------------------------
    def save_sources(self, run_id: str, documents: Iterable[Any], skipped: Iterable[Any] = ()) -> None:
        """Sources rows for the run, and each text once in `blobs`: compressed outside the lock,
        and stored a batch at a time (SOURCE_BLOB_BATCH bytes), so no more than a batch of
        compressed texts is held; the rows go in last, in one transaction."""
        for _ in self.save_sources_steps(run_id, documents, skipped):
            pass

    def save_sources_steps(self, run_id: str, documents: Iterable[Any],
                           skipped: Iterable[Any] = ()) -> Iterator[None]:
        """save_sources one document at a time: a generator that stops after each text is
        hashed and compressed (core/background.low_priority_steps takes the steps, and hands
        the rest to a faster thread once the run is over)."""
        documents = list(documents)
        # One query per 500 texts, not one a text: a second run's 1,000 unchanged files would
        # take the lock 1,000 times beside the run's start.
        with self._lock:
            stored = stored_blobs(self.db, [getattr(d, "text_sha256", None) for d in documents])

        def known(sha: str) -> bool:
            if sha in stored:
                return True
            with self._lock:
                return has_blob(self.db, sha)
        prepared: list[PreparedSource] = []
        batch: list[Blob] = []

        def flush() -> None:
            with self._lock, write_transaction(self.db):
                for blob in batch:
                    put_blob(self.db, blob)
            stored.update(blob.sha256 for blob in batch)
            batch.clear()
        for item in iter_sources(documents, list(skipped), known):
            batch.extend(item.blobs)
            prepared.append(PreparedSource(item.row, ()))
            if sum(len(b.content) for b in batch) >= SOURCE_BLOB_BATCH:
                flush()
            yield
        if batch:
            flush()
        by_position = {item.row["position"]: doc for item, doc in zip(prepared, documents)}
        shas = {item.row["source_path"]: (item.row["text_sha256"], item.row["spans_sha256"])
                for item in prepared if item.row["status"] == "read" and item.row["source_path"]}
        with self._lock, write_transaction(self.db):
            for item in prepared:         # a blob collected since its batch (a run deleted meanwhile)
                if item.row["status"] == "read" and not has_blob(self.db, item.row["text_sha256"]):
                    for blob in next(iter_sources([by_position[item.row["position"]]], ())).blobs:
                        put_blob(self.db, blob)
            write_sources(self.db, run_id, prepared)
            extracts.remember(self.db, documents, shas)      # an unchanged file is not read again

    def extract_row(self, source_path: str) -> tuple | None:
        """What the last read of a file on disk produced (core/store/extracts.py)."""
        with self._lock:
            return extracts.row(self.db, source_path)

    def touch_extract(self, source_path: str, mtime_ns: int) -> None:
        with self._lock, write_transaction(self.db):
            extracts.touch(self.db, source_path, mtime_ns)

    # -- reading -----------------------------------------------------------------------
    def list_runs(self, *, search: str | None = None, status: str | None = None, model: str | None = None,
                  since: float | None = None, until: float | None = None, min_cost: float | None = None,
                  max_cost: float | None = None, parent_run_id: str | None = None, evaluations: bool = True,
                  limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
        """Newest first. `search`: full text over question and answer (every word, as a prefix);
        `model`: part of the root or sub model name; `since`/`until`: epoch seconds;
        `evaluations=False`: without the runs of evaluations (runs.evaluation_id) and grids (runs.grid_id)."""
        with self._lock:
            return queries.list_runs(self.db, search=search, status=status, model=model, since=since,
                                     until=until, min_cost=min_cost, max_cost=max_cost, evaluations=evaluations,
                                     parent_run_id=parent_run_id, limit=limit, offset=offset)

    def resolve_id(self, prefix: str) -> str:
        with self._lock:
            return queries.resolve_id(self.db, prefix)

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        with self._lock:
            return queries.get_run(self.db, run_id)

    def event_dicts(self, run_id: str) -> Iterator[dict[str, Any]]:
        pages = queries.event_dicts(self.db, run_id)
        while True:
            with self._lock:
                try:
                    item = next(pages)
                except StopIteration:
                    return
            yield item

    def iter_events(self, run_id: str) -> Iterator[Event]:
        """The run's events in seq order, as Event objects (for replay through the live fold)."""
        return queries.events_of(self.event_dicts(run_id))

    def calls(self, run_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return queries.calls(self.db, run_id)

    def sources(self, run_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return queries.sources(self.db, run_id)

    def documents(self, run_id: str) -> list[Any]:
        """StoredDocuments, and read-back Documents for big texts kept in files (queries.documents)."""
        with self._lock:
            return queries.documents(self.db, run_id, str(sidecars.spool_of(self.path)))

    def has_blob(self, sha256: str) -> bool:
        with self._lock:
            return has_blob(self.db, sha256)

    def blob(self, sha256: str) -> bytes | None:
        """The uncompressed content of a blob (document text, span table), or None."""
        with self._lock:
            return get_blob(self.db, sha256)

    def skipped(self, run_id: str) -> list[StoredSkip]:
        with self._lock:
            return queries.skipped(self.db, run_id)

    # -- changing ----------------------------------------------------------------------
    def delete_run(self, run_id: str) -> bool:
        """Delete a run and everything of it; texts no other run uses go too.
        Refuses (RunBusyError) a run that a live process is still writing."""
        with self._lock:
            row = self.db.execute("SELECT status, owner_token FROM runs WHERE id = ?", [run_id]).fetchone()
            if row is not None and row[0] == "running" and owner_alive(self.path, row[1]):
                raise RunBusyError(f"run {run_id} is still running; stop it before deleting it")
            with write_transaction(self.db):
                texts = sidecars.run_texts(self.db, run_id)
                for table in ("events", "calls", "sources"):
                    self.db.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
                deleted = self.db.execute("DELETE FROM runs WHERE id = ?", [run_id]).rowcount
                collect_garbage(self.db)
                unused = texts - sidecars.named(self.db, texts)
            sidecars.remove(sidecars.spool_of(self.path), unused)   # once the rows are gone
            return deleted > 0

    def import_json(self, path: Path) -> str:
        from core.store.import_json import import_run
        return import_run(self, Path(path))


@contextlib.contextmanager
def opened_cache() -> Iterator[extracts.ExtractCache | None]:
    """An ExtractCache on the user's database, or None when it cannot be opened (then every
    file is read, as without it); closed at the end. (Here, not in extracts.py: that module
    is imported by this one.)"""
    try:
        store = RunStore.open()
    except Exception as exc:   # noqa: BLE001 - a locked or damaged database only costs fresh reads
        log.warning("earlier reads are not reused: the database could not be opened: %s", exc)
        yield None
        return
    try:
        yield extracts.ExtractCache(store)
    finally:
        store.close()
