"""The reproducibility manifest of a run (part of the JSON export): what went in
and with which settings, so someone else can tell whether a run can be repeated.

    manifest = build_manifest(run, sources, calls, first_turn_messages)

inputs (path, format, size, chars, sha256 of the file, sha256 of the text), model
ids (root, sub, every model a call used), the system prompt and the first user
message exactly as sent, the prompt notes that applied, the settings (the full
RunConfig as stored) and the app version that made the run.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from core.call_ids import ROOT, CallId

INPUT_KEYS = ("path", "format", "size", "chars", "sha256", "text_sha256")


def first_turn_messages(events: Iterable[Any]) -> list[dict[str, Any]]:
    """new_messages of the top-level RLM's first turn (system prompt and first user message)."""
    for e in events:
        if e.get("type") == "RootTurnStarted" and e.get("call_id") == CallId.for_turn(ROOT, 1):
            return list(e.get("new_messages") or [])
    return []


def build_manifest(run: dict[str, Any], sources: Sequence[dict[str, Any]], calls: Sequence[dict[str, Any]],
                   messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from core.engine.prompts import model_notes
    config = run.get("config") or {}
    root = run.get("root_model") or config.get("root_model") or ""
    system = next((m.get("content") for m in messages if m.get("role") == "system"), None)
    first_user = next((m.get("content") for m in messages if m.get("role") == "user"), None)
    return {
        "app_version": run.get("version") or "",
        "inputs": [{k: s.get(k) for k in INPUT_KEYS} for s in sources if s.get("status") == "read"],
        "models": sorted({m for m in [root, run.get("sub_model"), *(c.get("model") for c in calls)] if m}),
        "root_model": root,
        "sub_model": run.get("sub_model"),
        "system_prompt": system,
        "first_message": first_user,
        # the notes that were appended to that system prompt (built-in per model, then the user's)
        "prompt_notes": [n for n in model_notes(root, config.get("prompt_notes") or {}) if system and n in system],
        "user_prompt_notes": config.get("prompt_notes") or {},
        "settings": config,
        "continues_run": run.get("parent_run_id"),
        "conversation_inherited": any(m.get("role") == "assistant" for m in messages),
    }
