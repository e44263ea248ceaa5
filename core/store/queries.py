"""Reading the store: history lists, one run, its events, calls and sources."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple

import sqlite_utils

from core import events as ev
from core.store.blobs import get_blob
from core.store.db import iso_utc
from core.store.errors import AmbiguousRunId, MissingTextsError, RunNotFound

log = logging.getLogger(__name__)

LIST_COLUMNS = ("id", "status", "question", "answer", "error", "root_model", "sub_model", "max_depth",
                "max_iterations", "max_cost_usd", "documents", "total_chars", "cost_usd", "input_tokens",
                "output_tokens", "iterations", "sub_calls", "cells", "syntax_errors", "wall_ms",
                "created_utc", "finished_utc", "version", "parent_run_id", "imported_utc",
                "root_model_label", "sub_model_label", "limited", "unpriced", "evaluation_id", "fork_turn")
TOTAL_KEYS = ("cost_usd", "input_tokens", "output_tokens", "iterations", "sub_calls", "cells",
              "syntax_errors", "wall_ms")
EVENT_PAGE = 2000


class Span(NamedTuple):
    """[start, end) char offsets of Document.text and where they came from ("page 3")."""
    start: int
    end: int
    address: str


@dataclass(frozen=True)
class StoredDocument:
    """A document as a run saw it, rebuilt from the store (enough to run again)."""
    path: str
    text: str
    format: str | None
    chars: int
    sha256: str | None             # of the original file, as ingestion reported it
    text_sha256: str
    size: int | None = None
    source_path: str | None = None
    spans: tuple[Span, ...] = ()
    duplicates: tuple[str, ...] = ()   # paths read once as this document (skipped "duplicate of")


@dataclass(frozen=True)
class StoredSkip:
    path: str
    reason: str | None
    detail: str | None
    source_path: str | None = None


def fts_query(text: str) -> str:
    """User text -> an FTS5 query: every word must match, as a prefix, and FTS
    syntax characters in the text are taken literally."""
    words = re.findall(r"\w+", text, flags=re.UNICODE)
    return " ".join(f'"{w}"*' for w in words)


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def list_runs(db: sqlite_utils.Database, *, search: str | None = None, status: str | None = None,
              model: str | None = None, since: float | None = None, until: float | None = None,
              min_cost: float | None = None, max_cost: float | None = None, parent_run_id: str | None = None,
              evaluations: bool = True, limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
    """Runs, newest first; `evaluations=False` leaves out the runs of evaluations and of grids'
    cells (History's default)."""
    where, params = [], []
    if not evaluations:
        where.append("evaluation_id IS NULL AND grid_id IS NULL")
    if search and search.strip():
        query = fts_query(search)
        if not query:
            return []
        where.append("runs.rowid IN (SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?)")
        params.append(query)
    if status:
        where.append("status = ?")
        params.append(status)
    if model:
        where.append("(root_model LIKE ? ESCAPE '\\' OR sub_model LIKE ? ESCAPE '\\' "
                     "OR root_model_label LIKE ? ESCAPE '\\' OR sub_model_label LIKE ? ESCAPE '\\')")
        params += [_like(model)] * 4
    if since is not None:
        where.append("created_utc >= ?")
        params.append(since)
    if until is not None:
        where.append("created_utc < ?")
        params.append(until)
    if min_cost is not None:
        where.append("cost_usd >= ?")
        params.append(min_cost)
    if max_cost is not None:
        where.append("cost_usd <= ?")
        params.append(max_cost)
    if parent_run_id:
        where.append("parent_run_id = ?")
        params.append(parent_run_id)
    # + the values the answer states that nothing the run read holds (core/support.py)
    # + the run's mode: a plain call is said as one (core/plain_call.py)
    sql = (f"SELECT {', '.join(LIST_COLUMNS)}, json_extract(totals_json, '$.mode'), "
           "json_extract(totals_json, '$.unsupported') FROM runs"
           + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY created_utc DESC, id LIMIT ? OFFSET ?")
    rows = []
    for r in db.execute(sql, [*params, limit, offset]):
        rows.append(dict(zip(LIST_COLUMNS, r)))
        rows[-1]["unsupported"] = json.loads(r[-1]) if r[-1] else []
        rows[-1]["mode"] = r[-2]
    for row in rows:
        row["created_at"] = iso_utc(row["created_utc"])
        row["finished_at"] = iso_utc(row["finished_utc"])
    return rows


def resolve_id(db: sqlite_utils.Database, prefix: str) -> str:
    """A full run id from a unique prefix of it."""
    prefix = prefix.strip()
    if not prefix:
        raise RunNotFound("no run id given")
    rows = [r[0] for r in db.execute(
        "SELECT id FROM runs WHERE id >= ? AND id < ? ORDER BY id LIMIT 6", [prefix, prefix + "\uffff"])]
    if prefix in rows:
        return prefix
    if not rows:
        raise RunNotFound(f"no run with id {prefix!r} (see `rlm-studio runs list`)")
    if len(rows) > 1:
        raise AmbiguousRunId(f"{prefix!r} matches several runs ({', '.join(r[:12] for r in rows[:5])} ...); "
                             "give more characters")
    return rows[0]


def get_run(db: sqlite_utils.Database, run_id: str) -> dict[str, Any] | None:
    cursor = db.execute("SELECT * FROM runs WHERE id = ?", [run_id])
    row = cursor.fetchone()
    if row is None:
        return None
    run = dict(zip([d[0] for d in cursor.description], row))
    run["config"] = json.loads(run["config_json"]) if run.get("config_json") else {}
    final = json.loads(run["totals_json"]) if run.get("totals_json") else {}
    run["totals"] = {**final, **{k: run[k] for k in TOTAL_KEYS}}
    run["created_at"] = iso_utc(run["created_utc"])
    run["finished_at"] = iso_utc(run["finished_utc"])
    return run


def event_dicts(db: sqlite_utils.Database, run_id: str) -> Iterator[dict[str, Any]]:
    """Events as `Event.to_dict()` dicts, in seq order, read page by page."""
    last = (-1 << 62, -1)
    while True:
        rows = db.execute(
            "SELECT id, seq, type, call_id, parent_id, ts_utc, payload_json FROM events "
            "WHERE run_id = ? AND (seq, id) > (?, ?) ORDER BY seq, id LIMIT ?",
            [run_id, last[0], last[1], EVENT_PAGE]).fetchall()
        if not rows:
            return
        for row_id, seq, kind, call_id, parent_id, ts, payload in rows:
            yield {**json.loads(payload), "type": kind, "run_id": run_id, "seq": seq, "ts": ts,
                   "call_id": call_id, "parent_id": parent_id}
        last = (rows[-1][1], rows[-1][0])


def events_of(dicts: Iterator[dict[str, Any]]) -> Iterator[ev.Event]:
    for data in dicts:
        try:
            yield ev.from_dict(data)
        except ValueError as exc:   # written by a newer version: skip, do not stop a replay
            log.warning("skipping event seq %s of run %s: %s", data.get("seq"), data.get("run_id"), exc)


def calls(db: sqlite_utils.Database, run_id: str) -> list[dict[str, Any]]:
    cursor = db.execute("SELECT * FROM calls WHERE run_id = ? ORDER BY seq, id", [run_id])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r)) for r in cursor]


def sources(db: sqlite_utils.Database, run_id: str) -> list[dict[str, Any]]:
    cursor = db.execute("SELECT * FROM sources WHERE run_id = ? ORDER BY position", [run_id])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r)) for r in cursor]


def documents(db: sqlite_utils.Database, run_id: str, spool: str | None = None) -> list[Any]:
    """The run's documents: StoredDocuments from their blobs, or, for a big text the store did
    not copy (blobs.BLOB_MAX_CHARS), a Document that reads it back from its sidecar in `spool`
    or its own unchanged file (read_back)."""
    docs: list[Any] = []
    missing = []
    rows = sources(db, run_id)
    aliases: dict[str, list[str]] = {}
    for row in rows:
        detail = row["detail"] or ""
        if row["status"] == "skipped" and row["reason"] == "duplicate" and \
                detail.startswith("duplicate of "):
            aliases.setdefault(detail[len("duplicate of "):], []).append(row["path"])
    for row in rows:
        if row["status"] != "read":
            continue
        data = get_blob(db, row["text_sha256"]) if row["text_sha256"] else None
        spans: tuple[Span, ...] = ()
        if row["spans_sha256"]:
            raw = get_blob(db, row["spans_sha256"])
            if raw is not None:
                spans = tuple(Span(int(a), int(b), str(c)) for a, b, c in json.loads(raw))
        if data is None:
            doc = read_back(db, row, spans, tuple(aliases.get(row["path"], ())), spool)
            if doc is None:
                missing.append(row["path"])
            else:
                docs.append(doc)
            continue
        text = data.decode("utf-8")
        docs.append(StoredDocument(path=row["path"], text=text, format=row["format"],
                                   chars=row["chars"] or len(text), sha256=row["sha256"],
                                   text_sha256=row["text_sha256"], size=row["size"],
                                   source_path=row["source_path"], spans=spans,
                                   duplicates=tuple(aliases.get(row["path"], ()))))
    if missing:
        raise MissingTextsError(
            f"run {run_id} has no stored text for {len(missing)} document(s) (e.g. {missing[0]}); "
            "it was probably imported from an export made without --include-texts")
    return docs


def read_back(db: sqlite_utils.Database, row: dict[str, Any], spans: tuple, duplicates: tuple,
              spool: str | None) -> Any:
    """A sources row's document whose text is kept in a file, not in the store: its sidecar
    (`<text sha256>.txt` in `spool`), else the file it was read from when that file's bytes are
    the text and it is unchanged since (size, and the modification time the extracts table
    holds for it); None when neither is there."""
    import os
    from core.ingest.bigfile import SidecarText, sidecar_of
    from core.ingest.model import Document
    from core.ingest.text_back import READER
    text_sha, source = row["text_sha256"], row["source_path"]
    if not text_sha or not row["chars"]:
        return None
    doc = Document(path=row["path"], source_path=source or "", format=row["format"] or "text", text="",
                   chars=int(row["chars"]), size=int(row["size"] or 0), sha256=row["sha256"] or "",
                   spans=spans, duplicates=duplicates, text_sha256=text_sha)
    sidecar = sidecar_of(spool, text_sha) if spool else None
    if sidecar and os.path.exists(sidecar):
        return doc.without_text(SidecarText(sidecar))
    extract = db.execute("SELECT size, mtime_ns, sha256 FROM extracts WHERE source_path = ?",
                         [source]).fetchone() if source and text_sha == row["sha256"] else None
    if extract is None or extract[0] != row["size"] or extract[2] != row["sha256"]:
        return None
    try:
        st = os.stat(source)
    except OSError:
        return None
    if (st.st_size, st.st_mtime_ns) != (extract[0], extract[1]):
        return None
    return doc.but(mtime_ns=int(extract[1])).without_text(READER)


def skipped(db: sqlite_utils.Database, run_id: str) -> list[StoredSkip]:
    return [StoredSkip(r["path"], r["reason"], r["detail"], r["source_path"]) for r in sources(db, run_id)
            if r["status"] == "skipped"]
