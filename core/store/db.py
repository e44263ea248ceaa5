"""Opening the database: one place for the connection settings every connection shares."""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
from pathlib import Path
from typing import Iterator

import sqlite_utils

BUSY_TIMEOUT_S = 15.0


def connect(path: Path) -> sqlite_utils.Database:
    """A sqlite-utils Database on `path` in WAL mode.

    `check_same_thread=False` because the store hands its connection to worker
    threads (e.g. `save_sources` through `asyncio.to_thread`); `RunStore` guards
    it with a lock. synchronous=NORMAL: in WAL mode a kill -9 loses nothing that
    was committed; a power cut may lose the last commits, never corrupt the file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    db = sqlite_utils.Database(conn, execute_plugins=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    return db


def iso_utc(ts: float | None) -> str | None:
    """Epoch seconds -> '2026-11-29T08:30:38Z' (what the CLI shows as created_at)."""
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextlib.contextmanager
def write_transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """One transaction that takes the write lock up front (BEGIN IMMEDIATE). Unlike a
    deferred BEGIN, a transaction that reads before it writes cannot fail with
    SQLITE_BUSY when another connection commits in between: it waits its turn."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.conn.in_transaction:
            db.conn.rollback()
        raise
    try:
        db.execute("COMMIT")
    except BaseException:
        if db.conn.in_transaction:
            db.conn.rollback()
        raise
