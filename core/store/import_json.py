"""Importing a JSON export: validate everything first, then write it in one transaction.

A file that is not an RLM Studio run export, is malformed, or comes from a newer
format version is refused with ImportError_ and nothing is written. Importing a
run whose id is already in the database writes nothing and returns that id (an
export is a copy of the same run; delete the stored one first to replace it).
A run exported while it was still running is imported as 'interrupted'.

A run file is hostile input (core/store/import_checks.py): ids must be in the app's own
form, every number finite and in range, every field within its size, and the config
keeps nothing that decides where calls go or whose key they carry (`import_run` returns
what it dropped, and the config records it under "import_dropped").
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

from core.store.blobs import Blob, put_blob
from core.config import RunConfig
from core.store import import_checks as checks
from core.store.db import write_transaction
from core.store.errors import ImportError_
from core.store.migrations import backfill_subtree_costs
from core.store.projection import dumps

log = logging.getLogger(__name__)

FORMAT = "rlm-studio-run"      # what core/exports/export_json.py writes
VERSION = 2                      # 2 (m007): an rlm row's cost_usd is its own, its subtree in subtree_cost_usd;
                                 # version 1 files are read and backfilled. An older app refuses 2 rather than
                                 # reading a nested RLM's cost as $0

SCALARS = (str, int, float, bool, type(None))
NOT_IMPORTED = {"owner_pid", "owner_host", "owner_token", "config_json", "totals_json", "imported_utc"}


def _fail(path: Path, why: str) -> ImportError_:
    return ImportError_(f"cannot import {path}: {why}")


def load(path: Path) -> dict[str, Any]:
    try:
        size = path.stat().st_size
        if size > checks.MAX_FILE_BYTES:
            raise _fail(path, f"it is {size:,} bytes, more than a run file may be ({checks.MAX_FILE_BYTES:,})")
        raw = path.read_bytes()
    except OSError as exc:
        raise _fail(path, exc.strerror or str(exc)) from exc
    try:
        data = checks.checked_json(raw)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _fail(path, f"not a JSON file ({str(exc)[:200]})") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _fail(path, f'not an RLM Studio run export (expected "format": "{FORMAT}")')
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _fail(path, f"malformed: bad format version {version!r}")
    if version > VERSION:
        raise _fail(path, f"it was written by a newer RLM Studio (format version {version}; this version "
                          f"reads up to {VERSION}). Update RLM Studio to import it.")
    problem = checks.check_numbers(data, "")
    _require(path, problem is None, (problem or "").lstrip("."))
    validate(path, data)
    problem = checks.check_sizes(data, "", text_ok=("text", "spans"))
    _require(path, problem is None, (problem or "").lstrip("."))
    return data


def _require(path: Path, ok: bool, why: str) -> None:
    if not ok:
        raise _fail(path, f"malformed: {why}")


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _rows(path: Path, data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    rows = data.get(key)
    _require(path, isinstance(rows, list), f'"{key}" must be a list')
    for i, row in enumerate(rows):
        _require(path, isinstance(row, dict), f"{key}[{i}] must be an object")
    return rows


def validate(path: Path, data: dict[str, Any]) -> None:
    run = data.get("run")
    _require(path, isinstance(run, dict), '"run" must be an object')
    run_id = run.get("id")
    _require(path, isinstance(run_id, str) and checks.RUN_ID.fullmatch(run_id) is not None,
             f"run.id {str(run_id)[:80]!r} is not a run id (letters, digits, '-' and '_', at most 64)")
    _require(path, isinstance(run.get("question"), str), "run.question must be a string")
    _require(path, isinstance(run.get("status"), str), "run.status must be a string")
    _require(path, _is_num(run.get("created_utc")), "run.created_utc must be a number")
    _require(path, isinstance(data.get("config"), dict), '"config" must be an object')
    parent = run.get("parent_run_id")
    _require(path, parent is None or (isinstance(parent, str) and checks.RUN_ID.fullmatch(parent) is not None),
             f"run.parent_run_id {str(parent)[:80]!r} is not a run id")
    config, _dropped = clean_config(data["config"])
    for f in dataclasses.fields(RunConfig):
        kind = str(f.type).split("[")[0].split("|")[0].strip()
        value = config.get(f.name)
        if value is not None and kind in _KINDS and (not isinstance(value, _KINDS[kind])
                                                     or (kind != "bool" and isinstance(value, bool))):
            raise _fail(path, f"malformed: config.{f.name} must be {'a number' if kind in ('int', 'float') else kind}, "
                              f"not {type(value).__name__} {str(value)[:40]!r}")
    try:
        RunConfig.from_public_dict(config)
    except (TypeError, ValueError) as exc:
        raise _fail(path, f"malformed: config: {str(exc)[:200]}") from exc
    for key, value in run.items():
        _require(path, key in ("totals",) or isinstance(value, SCALARS), f"run.{key} must be a plain value")
    seqs = set()
    for i, e in enumerate(_rows(path, data, "events")):
        _require(path, isinstance(e.get("type"), str) and e["type"], f"events[{i}].type must be a string")
        _require(path, isinstance(e.get("seq"), int) and not isinstance(e.get("seq"), bool),
                 f"events[{i}].seq must be an integer")
        _require(path, _is_num(e.get("ts")), f"events[{i}].ts must be a number")
        _require(path, e.get("run_id", run_id) == run_id, f"events[{i}] belongs to another run")
        for key in ("call_id", "parent_id"):
            value = e.get(key)
            _require(path, value is None or (isinstance(value, str) and checks.CALL_ID.fullmatch(value)),
                     f"events[{i}].{key} {str(value)[:80]!r} is not a call id")
        seqs.add(e["seq"])
    for i, c in enumerate(_rows(path, data, "calls")):
        _require(path, isinstance(c.get("id"), str) and checks.CALL_ID.fullmatch(c["id"]) is not None,
                 f"calls[{i}].id {str(c.get('id'))[:80]!r} is not a call id")
        _require(path, c.get("parent_id") is None
                 or (isinstance(c["parent_id"], str) and checks.CALL_ID.fullmatch(c["parent_id"]) is not None),
                 f"calls[{i}].parent_id is not a call id")
        _require(path, isinstance(c.get("kind"), str), f"calls[{i}].kind must be a string")
        _require(path, isinstance(c.get("status"), str), f"calls[{i}].status must be a string")
        _require(path, all(isinstance(v, SCALARS) for v in c.values()), f"calls[{i}] has a non-plain value")
    ids = [c["id"] for c in data["calls"]]
    _require(path, len(ids) == len(set(ids)), "calls contain a duplicate id")
    for i, s in enumerate(_rows(path, data, "sources")):
        _require(path, isinstance(s.get("path"), str), f"sources[{i}].path must be a string")
        _require(path, s.get("status") in ("read", "skipped"), f'sources[{i}].status must be "read" or "skipped"')
        _require(path, isinstance(s.get("position"), int), f"sources[{i}].position must be an integer")
        text = s.get("text")
        if text is not None:
            _require(path, isinstance(text, str), f"sources[{i}].text must be a string")
            _require(path, hashlib.sha256(text.encode("utf-8")).hexdigest() == s.get("text_sha256"),
                     f"sources[{i}].text does not match its text_sha256")
        spans = s.get("spans")
        _require(path, spans is None or isinstance(spans, list), f"sources[{i}].spans must be a list")
        for key, value in s.items():
            _require(path, key in ("text", "spans") or isinstance(value, SCALARS),
                     f"sources[{i}].{key} must be a plain value")


_KINDS = {"int": int, "float": (int, float), "bool": bool, "str": str, "dict": dict}


def clean_config(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The file's config without what decides where calls go or whose key they carry."""
    return checks.clean_config(config, {f.name for f in dataclasses.fields(RunConfig)})


def _event_value(key: str, value: Any) -> Any:
    """An event's field as stored: a config (RunStarted's, which forks, verify and rebuilds
    read) cleaned like the run's, so that no reader finds the file's URLs or key owners."""
    if key == "config" and isinstance(value, dict):
        return clean_config(value)[0]
    return value


def _columns(db: Any, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def _insert(db: Any, table: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    allowed = set(_columns(db, table))
    names = sorted({k for row in rows for k in row if k in allowed})
    db.conn.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                        [[row.get(n) for n in names] for row in rows])


def import_run(store: Any, path: Path) -> str:
    data = load(path)
    run = dict(data["run"])
    run_id = run["id"]
    if store.get_run(run_id) is not None:
        log.info("run %s from %s is already in the database; nothing imported", run_id, path)
        return run_id
    totals = run.pop("totals", None)
    row = {k: v for k, v in run.items() if k not in NOT_IMPORTED}
    config, dropped = clean_config(data["config"])
    if dropped:
        config["import_dropped"] = dropped
        log.info("%s: %s", path, checks.describe_dropped(dropped))
    row.update(config_json=dumps(config), imported_utc=time.time(),
               totals_json=dumps(totals) if isinstance(totals, dict) else None)
    if row["status"] == "running":
        row["status"] = "interrupted"
        row["error"] = row.get("error") or "exported before the run finished"
    events = [{"run_id": run_id, "seq": e["seq"], "type": e["type"], "call_id": e.get("call_id"),
               "parent_id": e.get("parent_id"), "ts_utc": e["ts"],
               "payload_json": dumps({k: _event_value(k, v) for k, v in e.items()
                                      if k not in ("type", "run_id", "seq", "ts", "call_id", "parent_id")})}
              for e in data["events"]]
    calls = [{**c, "run_id": run_id} for c in data["calls"]]
    sources, blobs = [], []
    for s in data["sources"]:
        s = dict(s)
        text, spans = s.pop("text", None), s.pop("spans", None)
        s.pop("id", None)
        if text is not None:
            blobs.append(Blob.of(text.encode("utf-8"), s["text_sha256"]))
        if spans is not None and s.get("spans_sha256"):
            raw = json.dumps(spans, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            if hashlib.sha256(raw).hexdigest() == s["spans_sha256"]:
                blobs.append(Blob.of(raw, s["spans_sha256"]))
            else:
                log.warning("spans of %s do not match their sha256; not imported", s["path"])
        sources.append({**s, "run_id": run_id})
    try:
        with store._lock, write_transaction(store.db):
            db = store.db
            _insert(db, "runs", [row])
            _insert(db, "events", events)
            _insert(db, "calls", calls)
            if calls and not any("subtree_cost_usd" in c for c in calls):     # exported before m007
                backfill_subtree_costs(db, [run_id])
            _insert(db, "sources", sources)
            for blob in blobs:
                put_blob(db, blob)
    except sqlite3.Error as exc:       # rolled back: nothing of the file is in the database
        raise _fail(path, f"the database refused it ({exc})") from exc
    return run_id
