"""The config of a re-run, and where its calls go.

A run the user made keeps its stored config (their own URLs and key choices). A run that
came from a file (`runs import`) is hostile input: its models are routed through the
user's own settings by the names the run showed (an "<endpoint>/<model>" label goes to the
user's endpoint of that name), and only its question-shaped caps are kept; the file's URLs,
key owners, prices and machine limits never are (app/key_routing.py: describe_routes says
where the calls go before the first one).
"""

from __future__ import annotations

from typing import Any

# The caps of a stored run that a re-run of an imported run keeps (the rest is the user's).
KEPT_CAPS = ("mode", "max_depth", "max_iterations", "max_cost_usd", "max_sub_calls", "max_wall_seconds",
             "cell_timeout_s", "concurrency", "max_output_chars", "root_max_tokens", "sub_max_tokens")


def model_names(run: dict[str, Any]) -> tuple[str, str]:
    """(root, sub) as the run showed them: the user-facing label, else the routed name."""
    config = run.get("config") or {}
    labels = config.get("model_labels") or {}
    root = str(run.get("root_model") or config.get("root_model") or "")
    sub = str(run.get("sub_model") or config.get("sub_model") or root)
    return str(labels.get(root, root)), str(labels.get(sub, sub))


def imported_rerun_config(run: dict[str, Any], settings: Any, *, root: str | None = None,
                          sub: str | None = None, overrides: dict[str, Any] | None = None) -> Any:
    """The RunConfig of a re-run of an imported run: the user's settings and flags, the
    record's caps."""
    # lazy: free in the window (where it runs)
    from app.settings import build_run_config
    stored = run.get("config") or {}
    caps = {k: stored[k] for k in KEPT_CAPS if stored.get(k) is not None}
    caps.update({k: v for k, v in (overrides or {}).items() if v is not None})
    shown_root, shown_sub = model_names(run)
    return build_run_config(settings, root=root or shown_root, sub=sub or shown_sub, overrides=caps)
