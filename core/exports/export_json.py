"""The JSON export: complete and re-importable (format "rlm-studio-run", version 1).

    {"format": "rlm-studio-run", "version": 1, "exported_utc": ...,
     "manifest": {app_version, exported_by, models, inputs, prompt_settings, caps},
     "run": {...}, "config": {...}, "events": [...], "calls": [...],
     "sources": [{path, sha256, text_sha256, chars, ... (+ "text", "spans" with include_texts)}]}

Events are `Event.to_dict()` dicts. Local bookkeeping (owner pid/host/token of the
writing process) is not exported.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from core.store.errors import RunNotFound
from core.store.import_json import FORMAT, VERSION

LOCAL_COLUMNS = ("owner_pid", "owner_host", "owner_token", "config_json", "totals_json", "imported_utc",
                 "config", "created_at", "finished_at")
PROMPT_KEYS = ("root_max_tokens", "sub_max_tokens", "reasoning_effort", "prompt_notes", "max_output_chars")
CAP_KEYS = ("max_depth", "max_iterations", "max_cost_usd", "max_sub_calls", "max_wall_seconds",
            "cell_timeout_s", "concurrency", "memory_limit_mb")


def app_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("rlm-studio")
    except PackageNotFoundError:
        return "unknown"


def build(store: Any, run_id: str, *, include_texts: bool = False) -> dict[str, Any]:
    from core.exports.export_citations import citation_check
    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run with id {run_id!r}")
    config = run.get("config") or {}
    calls = store.calls(run_id)
    sources = store.sources(run_id)
    for row in sources:
        row.pop("id", None)
        row.pop("run_id", None)
        if include_texts and row["status"] == "read":
            text = store.blob(row["text_sha256"]) if row["text_sha256"] else None
            spans = store.blob(row["spans_sha256"]) if row["spans_sha256"] else None
            row["text"] = None if text is None else text.decode("utf-8")
            row["spans"] = None if spans is None else json.loads(spans)
    for row in calls:
        row.pop("run_id", None)
    events = list(store.event_dicts(run_id))
    models = sorted({m for m in [run.get("root_model"), run.get("sub_model"), *(c.get("model") for c in calls)] if m})
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_utc": time.time(),
        "manifest": {
            "app_version": run.get("version") or "",
            "exported_by": app_version(),
            "models": models,
            "root_model": run.get("root_model"),
            "sub_model": run.get("sub_model"),
            "inputs": [{k: s.get(k) for k in ("path", "format", "size", "chars", "sha256", "text_sha256")}
                       for s in sources if s["status"] == "read"],
            "prompt_settings": {k: config.get(k) for k in PROMPT_KEYS if k in config},
            "caps": {k: config.get(k) for k in CAP_KEYS if k in config},
            "texts_included": include_texts,
            **trust_manifest(run, sources, calls, events),
        },
        # values the answer states that nothing the run read holds (core/support.py);
        # None: not checked (no answer, or a run stored before the check existed)
        "unsupported": (run.get("totals") or {}).get("unsupported"),
        "run": {k: v for k, v in run.items() if k not in LOCAL_COLUMNS},
        "citations": citation_check(store, run_id, run.get("answer")),
        "config": config,
        "events": events,
        "calls": calls,
        "sources": sources,
    }


def trust_manifest(run: dict[str, Any], sources: list, calls: list, events: list) -> dict[str, Any]:
    """System prompt, first message, prompt notes, settings (see core/trust/manifest.py)."""
    from core.trust.manifest import build_manifest, first_turn_messages
    return build_manifest(run, sources, calls, first_turn_messages(events))


def write_text_atomically(path: Path, text: str) -> None:
    """Write next to `path`, then rename: a reader never sees half an export."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1)


def write(store: Any, run_id: str, path: Path, *, include_texts: bool = False) -> None:
    write_text_atomically(path, dumps(build(store, run_id, include_texts=include_texts)))
