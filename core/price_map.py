"""litellm's price map, read without importing litellm.

Importing litellm takes seconds (core/llm/litellm_import.py); a price or a
context window is needed before the first model call (the cap's worst case,
the window check). The map itself is one JSON file inside the installed
litellm release, `model_prices_and_context_window_backup.json`, the same file
litellm loads under LITELLM_LOCAL_MODEL_COST_MAP=True. This module reads it
(about 30 ms) and applies the two changes litellm makes when it loads it:

- the `fallback_generalizations` block is not a model and is removed;
- aliases: a row with `alias_of: NAME` is served as NAME's entry, and a row's
  `aliases: [...]` list adds names for it; an alias that collides with a
  model of its own or an earlier alias is skipped, as is a pointer to nothing.

A leaf (stdlib only), outside core/llm/ so that core/providers.py can name the provider of
a bare model from it without importing the model-call layer (which imports providers).

A test (tests/unit/llm/test_price_map.py) checks that every entry's prices and
context window equal `litellm.model_cost`'s for the installed release. When the
file cannot be found (a layout we do not know), the map is empty: every model is unpriced.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FILE_NAME = "model_prices_and_context_window_backup.json"
NOT_MODELS = ("fallback_generalizations",)

_lock = threading.Lock()
_map: dict[str, Any] | None = None


def model_cost() -> dict[str, Any]:
    """The price map: model name -> litellm's entry (prices per token, context window...)."""
    global _map
    if _map is None:
        with _lock:
            if _map is None:
                _map = _load()
    return _map


def map_file() -> Path | None:
    """Where the installed litellm keeps its bundled price map, found without importing it."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    for folder in (getattr(spec, "submodule_search_locations", None) or ()):
        path = Path(folder) / FILE_NAME
        if path.is_file():
            return path
    return None


def _load() -> dict[str, Any]:
    path = map_file()
    if path is None:
        # litellm (imported with LITELLM_LOCAL_MODEL_COST_MAP, core/llm/litellm_import.py) reads
        # this same file, so without it no price or window is known from litellm either.
        log.warning("litellm's price map file (%s) not found: no model has a known price or window", FILE_NAME)
        return {}
    with open(path, "rb") as f:
        raw = json.load(f)
    if not isinstance(raw, dict):
        raise ValueError(f"{path} is not a JSON object")
    return expand_aliases({k: v for k, v in raw.items() if k not in NOT_MODELS and isinstance(v, dict)})


def expand_aliases(rows: dict[str, dict]) -> dict[str, dict]:
    """Serve every alias as its owner's entry, the way litellm's loader does."""
    pointers = {name: row["alias_of"] for name, row in rows.items()
                if isinstance(row.get("alias_of"), str)}
    owners: dict[str, str] = {}
    for name, row in rows.items():
        aliases = row.get("aliases")
        if aliases is None or name in pointers or not isinstance(aliases, list):
            continue
        for alias in aliases:
            if (alias in rows and alias not in pointers) or alias in owners:
                continue
            owners[alias] = name
    for alias, target in pointers.items():
        if target in rows and target not in pointers and alias not in owners:
            owners[alias] = target
    for row in rows.values():
        row.pop("aliases", None)
    for alias in pointers.keys() - owners.keys():
        rows.pop(alias)
    for alias, owner in owners.items():
        rows[alias] = rows[owner]
    return rows
