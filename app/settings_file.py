"""The settings' form and file: the dataclasses, and the JSON file in the data
directory read and written (app/settings.py re-exports every name here).

Keys are never part of the settings (they live in the keychain, core/secrets.py):
fields that look like secrets are dropped on load and on save, with a warning.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.config import Price, RunConfig
from core.paths import settings_path
from core.providers import is_valid_name

log = logging.getLogger(__name__)

SETTINGS_VERSION = 1
THEMES = ("system", "light", "dark")
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
CAP_NAMES = ("max_depth", "max_iterations", "max_cost_usd", "max_sub_calls", "max_wall_seconds",
             "cell_timeout_s", "concurrency", "memory_limit_mb")
RECENT_LIMIT = 20
_SECRET_NAME = re.compile(r"^(api[_-]?keys?|keys?|secrets?|passwords?|access[_-]?tokens?|auth(orization)?)$",
                          re.IGNORECASE)


def default_caps() -> dict[str, Any]:
    defaults = {f.name: f.default for f in dataclasses.fields(RunConfig)}
    return {name: defaults[name] for name in CAP_NAMES}


@dataclass
class Endpoint:
    """An OpenAI-compatible server: Ollama, LM Studio, llama.cpp, vLLM, a proxy."""
    name: str                       # also the keychain entry when needs_key
    base_url: str                   # e.g. http://127.0.0.1:11434/v1
    models: list[str] = field(default_factory=list)
    needs_key: bool = False
    # Its models run on this computer (free) or are paid; None: not said, decided by the
    # address (core/endpoint_cost.py: loopback and private addresses are free).
    runs_here: bool | None = None


@dataclass
class ModelSettings:
    price: Price | None = None      # USD per million tokens, overrides litellm's
    free: bool = False              # local models: cost 0
    max_tokens: int | None = None   # output headroom (thinking models need more)
    reasoning_effort: str | None = None
    prompt_note: str | None = None  # appended to the root's system prompt for this model
    context_window: int | None = None   # max input tokens, overrides litellm's model info
    # Read the root's reply only to its first closed block; None: the default for the model's
    # size (core/local_defaults.py: on for models of at most 4B).
    one_block_per_turn: bool | None = None
    # The root's sampling temperature; None: the default for the model's size
    # (core/local_defaults.py: 0.2 for models of at most 4B, else the provider's own).
    temperature: float | None = None


@dataclass
class Settings:
    root_model: str = ""
    sub_model: str = ""             # "" = the root model
    sub_call_models: list[str] = field(default_factory=list)   # more models llm_query(model=) may use
    endpoints: list[Endpoint] = field(default_factory=list)
    models: dict[str, ModelSettings] = field(default_factory=dict)
    caps: dict[str, Any] = field(default_factory=default_caps)
    theme: str = "system"
    require_full_sandbox: bool = False   # refuse to run model code when a sandbox layer is missing
    recent_folders: list[str] = field(default_factory=list)
    recent_questions: list[str] = field(default_factory=list)
    ui: dict[str, Any] = field(default_factory=dict)
    ray_address: str = ""            # HOST:PORT of a Ray cluster the window's grids run on ("" = here)
    extra: dict[str, Any] = field(default_factory=dict)             # unknown keys, kept as they were
    warnings: list[str] = field(default_factory=list, compare=False)   # from loading; never saved

    def endpoint(self, name: str) -> Endpoint | None:
        return next((e for e in self.endpoints if e.name == name), None)

    def remember_folder(self, path: str) -> None:
        self.recent_folders = _remember(self.recent_folders, path)

    def remember_question(self, question: str) -> None:
        self.recent_questions = _remember(self.recent_questions, question)


def _remember(items: list[str], item: str) -> list[str]:
    return ([item] + [i for i in items if i != item])[:RECENT_LIMIT]


# --- the file --------------------------------------------------------------------
def load_settings(path: Path | None = None) -> Settings:
    """The settings on disk; defaults when the file is missing. A file that is
    not valid JSON is renamed to settings.json.bad and defaults are returned,
    with the reason in `settings.warnings` (and the log)."""
    path = path or settings_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings()
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("the top level is not a JSON object")
    except ValueError as exc:
        bad = path.with_name(path.name + ".bad")
        os.replace(path, bad)
        message = f"The settings file {path} could not be read ({exc}); it was kept as {bad} and defaults are used."
        log.warning("%s", message)
        return Settings(warnings=[message])
    return settings_from_dict(data)


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write atomically (a temp file in the same directory, then os.replace)."""
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(settings_to_dict(settings), indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def settings_to_dict(s: Settings) -> dict[str, Any]:
    data: dict[str, Any] = dict(s.extra)
    data.update({
        "version": SETTINGS_VERSION,
        "root_model": s.root_model,
        "sub_model": s.sub_model,
        "sub_call_models": list(s.sub_call_models),
        "endpoints": [{"name": e.name, "base_url": e.base_url, "models": list(e.models),
                       "needs_key": bool(e.needs_key), "runs_here": e.runs_here} for e in s.endpoints],
        "models": {name: _model_to_dict(m) for name, m in s.models.items()},
        "caps": dict(s.caps),
        "theme": s.theme,
        "require_full_sandbox": bool(s.require_full_sandbox),
        "recent_folders": list(s.recent_folders),
        "recent_questions": list(s.recent_questions),
        "ui": dict(s.ui),
        "ray_address": s.ray_address,
    })
    return _without_secrets(data, [])


def _model_to_dict(m: ModelSettings) -> dict[str, Any]:
    return {"price": [m.price.input_per_m, m.price.output_per_m] if m.price else None,
            "free": m.free, "max_tokens": m.max_tokens, "reasoning_effort": m.reasoning_effort,
            "prompt_note": m.prompt_note, "context_window": m.context_window,
            "one_block_per_turn": m.one_block_per_turn, "temperature": m.temperature}


def settings_from_dict(data: dict[str, Any]) -> Settings:
    """Lenient: a bad entry is skipped with a warning, the rest is kept."""
    warnings: list[str] = []
    data = _without_secrets(data, warnings)
    known = {"version", "root_model", "sub_model", "sub_call_models", "endpoints", "models", "caps", "theme",
             "recent_folders", "recent_questions", "ui", "require_full_sandbox", "ray_address"}
    s = Settings(extra={k: v for k, v in data.items() if k not in known})
    s.root_model = _text(data.get("root_model"))
    s.sub_model = _text(data.get("sub_model"))
    s.sub_call_models = list(dict.fromkeys(
        m.strip() for m in _list(data.get("sub_call_models")) if isinstance(m, str) and m.strip()))
    for raw in _list(data.get("endpoints")):
        try:
            s.endpoints.append(_endpoint_from(raw))
        except (TypeError, ValueError) as exc:
            warnings.append(f"endpoint skipped: {exc}")
    for name, raw in (data.get("models") or {}).items() if isinstance(data.get("models"), dict) else ():
        try:
            s.models[str(name)] = _model_from(raw)
        except (TypeError, ValueError) as exc:
            warnings.append(f"settings of model {name!r} skipped: {exc}")
    _models_by_picked_name(s, warnings)
    caps = data.get("caps")
    if isinstance(caps, dict):
        for name, value in caps.items():
            try:
                s.caps[name] = _cap_value(name, value)
            except (TypeError, ValueError) as exc:
                warnings.append(f"cap {name} skipped: {exc}")
    theme = data.get("theme")
    s.theme = theme if theme in THEMES else "system"
    s.require_full_sandbox = data.get("require_full_sandbox") is True
    s.recent_folders = [str(x) for x in _list(data.get("recent_folders"))][:RECENT_LIMIT]
    s.recent_questions = [str(x) for x in _list(data.get("recent_questions"))][:RECENT_LIMIT]
    s.ui = data["ui"] if isinstance(data.get("ui"), dict) else {}
    s.ray_address = _text(data.get("ray_address"))
    for message in warnings:
        log.warning("settings: %s", message)
    s.warnings = warnings
    return s


def _models_by_picked_name(s: Settings, warnings: list[str]) -> None:
    """Settings of a model are kept by the name the user picks it by ("lab/small-3b"). A key
    in litellm's routed form ("openai/small-3b") for a model that one endpoint serves is moved
    to that endpoint's name, and said; one that several endpoints serve stays (it prices the
    provider's model of that name only) and the user is told to price each one."""
    for key in list(s.models):
        prefix, _, rest = key.partition("/")
        if prefix != "openai" or not rest:
            continue
        holders = [e.name for e in s.endpoints if rest in e.models]
        if len(holders) == 1 and f"{holders[0]}/{rest}" not in s.models:
            s.models[f"{holders[0]}/{rest}"] = s.models.pop(key)
            warnings.append(f"The settings of {key} are now those of {holders[0]}/{rest}, the endpoint "
                            "that serves it (a price belongs to a model on its endpoint).")
        elif len(holders) > 1:
            warnings.append(f"The settings of {key} could belong to {' or '.join(f'{h}/{rest}' for h in holders)}; "
                            f"they apply to neither. Give each its own price in Settings > Models.")


_CAP_TYPES = {"max_depth": (int, False), "max_iterations": (int, False), "max_sub_calls": (int, True),
              "concurrency": (int, False), "max_cost_usd": (float, True),
              "max_wall_seconds": (float, True), "cell_timeout_s": (float, False)}


def _cap_value(name: str, value: Any) -> Any:
    """Numbers as RunConfig wants them; None only where "no limit" makes sense."""
    if name not in _CAP_TYPES:
        return value
    kind, optional = _CAP_TYPES[name]
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{value!r} is not a number")
    if kind is int and value != int(value):
        raise ValueError(f"{value!r} is not a whole number")
    return kind(value)


def _endpoint_from(raw: Any) -> Endpoint:
    if not isinstance(raw, dict):
        raise TypeError(f"not an object: {raw!r}")
    name, base_url = _text(raw.get("name")), _text(raw.get("base_url"))
    if not is_valid_name(name):
        raise ValueError(f"bad endpoint name {name!r} (lower case letters, digits, '.', '_', '-')")
    if not base_url.startswith(("http://", "https://")):
        raise ValueError(f"endpoint {name}: base_url must start with http:// or https://")
    here = raw.get("runs_here")
    return Endpoint(name, base_url.rstrip("/"), [str(m) for m in _list(raw.get("models"))],
                    bool(raw.get("needs_key", False)), None if here is None else bool(here))


def _model_from(raw: Any) -> ModelSettings:
    if not isinstance(raw, dict):
        raise TypeError(f"not an object: {raw!r}")
    price = raw.get("price")
    if price is not None:
        if not (isinstance(price, (list, tuple)) and len(price) == 2):
            raise ValueError("price must be [input_per_m, output_per_m]")
        price = Price(float(price[0]), float(price[1]))
    max_tokens = raw.get("max_tokens")
    effort = raw.get("reasoning_effort")
    if effort is not None and effort not in REASONING_EFFORTS:
        raise ValueError(f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}")
    note = raw.get("prompt_note")
    temperature = raw.get("temperature")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))
                                    or not 0 <= temperature <= 2):
        raise ValueError("temperature must be a number from 0 to 2")
    window = raw.get("context_window")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
        raise ValueError("context_window must be a whole number of tokens above 0")
    return ModelSettings(price=price, free=bool(raw.get("free", False)),
                         max_tokens=int(max_tokens) if max_tokens is not None else None,
                         reasoning_effort=effort, prompt_note=str(note) if note else None,
                         context_window=window, one_block_per_turn=None if raw.get("one_block_per_turn") is None
                         else bool(raw["one_block_per_turn"]),
                         temperature=float(temperature) if temperature is not None else None)


def _without_secrets(value: Any, warnings: list[str], where: str = "") -> Any:
    """Drop fields named like secrets (api_key, password, ...) anywhere in the tree."""
    if isinstance(value, dict):
        kept = {}
        for k, v in value.items():
            if isinstance(k, str) and _SECRET_NAME.match(k):
                message = f"dropped the field {where}{k}: keys belong in the keychain (rlm-studio keys set)"
                warnings.append(message)
                log.warning("settings: %s", message)
                continue
            kept[k] = _without_secrets(v, warnings, f"{where}{k}.")
        return kept
    if isinstance(value, list):
        return [_without_secrets(v, warnings, where) for v in value]
    return value


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
