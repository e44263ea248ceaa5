"""Sidecar texts no stored run uses any more, removed.

A big file's text, or what was extracted from a PDF, Office file or mailbox, is kept in a
sidecar file, `texts/<text sha256>.txt` beside the database (core/ingest/bigfile.py), and
a run's sources name it by that sha256 (sources.text_sha256). A text that is not all ASCII
has its offsets index beside it, `<text sha256>.idx` (core/ingest/text_window.py), which goes
with it. A sidecar goes:

- when a run is deleted: those of its sources' texts no other run's sources name;
- when the store is opened: any that no run's sources name, once it is GRACE_S old (a file
  added to Sources in the window has its sidecar before any run names it), and a partial
  one left by a read that crashed; at most SWEEP_MAX files a time, so a start stays quick.

An extracts row whose sidecar is gone is a miss: the file is read again (core/store/extracts.py).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any, Iterable

from core.ingest.bigfile import PARTIAL_PREFIX as PARTIAL, SPOOL_NAME
from core.ingest.text_window import INDEX_SUFFIX
from core.store.blobs import found_in

log = logging.getLogger(__name__)

SUFFIX = ".txt"
GRACE_S = 24 * 3600
SWEEP_MAX = 500


def spool_of(database: Path) -> Path:
    return Path(database).parent / SPOOL_NAME


def named(db: Any, shas: Iterable[str]) -> set[str]:
    """Those of `shas` some run's sources name."""
    return found_in(db, "SELECT DISTINCT text_sha256 FROM sources WHERE text_sha256 IN ({})", shas)


def run_texts(db: Any, run_id: str) -> set[str]:
    return {row[0] for row in db.execute(
        "SELECT DISTINCT text_sha256 FROM sources WHERE run_id = ? AND text_sha256 IS NOT NULL", [run_id])}


def remove(spool: Path, shas: Iterable[str]) -> int:
    """Remove the sidecars of `shas` that exist. Returns how many went."""
    removed = 0
    for sha in shas:
        for suffix in (SUFFIX, INDEX_SUFFIX):           # the text and its index (text_window.py)
            try:
                (spool / (sha + suffix)).unlink()
                removed += suffix == SUFFIX
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("sidecar %s%s not removed: %s", sha, suffix, exc)
    return removed


def sweep(db: Any, spool: Path, now: float | None = None, grace_s: float = GRACE_S,
          limit: int = SWEEP_MAX) -> int:
    """Remove sidecars no run names (and partial ones) older than `grace_s`, at most `limit`
    of them looked at. Returns how many went."""
    now = time.time() if now is None else now
    old: dict[str, str] = {}
    indexes: dict[str, str] = {}           # an index goes alone: its text may be in use still
    partial: list[str] = []
    try:
        entries = os.scandir(spool)
    except OSError:
        return 0
    with entries:
        for entry in entries:
            if len(old) + len(indexes) + len(partial) >= limit:
                break
            try:
                if not entry.is_file(follow_symlinks=False) or now - entry.stat().st_mtime < grace_s:
                    continue
            except OSError:
                continue
            if entry.name.startswith(PARTIAL):
                partial.append(entry.name)
            elif entry.name.endswith(SUFFIX):
                old[entry.name[:-len(SUFFIX)]] = entry.name
            elif entry.name.endswith(INDEX_SUFFIX):
                indexes[entry.name[:-len(INDEX_SUFFIX)]] = entry.name
    unused = set(old) - named(db, old)
    removed = remove(spool, unused)
    for sha in set(indexes) - named(db, indexes) - unused:
        partial.append(indexes[sha])        # rebuilt when next needed
    for name in partial:
        try:
            (spool / name).unlink()
            removed += 1
        except OSError:
            pass
    return removed
