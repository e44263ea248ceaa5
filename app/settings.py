"""Settings shared by the CLI and the window: one JSON file in the data directory.

    s = load_settings()                    # defaults when missing; a corrupt file is kept as .bad
    s.endpoints.append(Endpoint("ollama-local", "http://127.0.0.1:11434/v1", ["llama3.1:8b"]))
    s.models["ollama-local/llama3.1:8b"] = ModelSettings(free=True)
    save_settings(s)                       # atomic: temp file + os.replace
    cfg = build_run_config(s, root="ollama-local/llama3.1:8b", overrides={"max_depth": 2})

Keys are never part of the settings (they live in the keychain, core/secrets.py):
fields that look like secrets are dropped on load and on save, with a warning.
A model of a custom endpoint is named "<endpoint>/<model>"; build_run_config
turns it into litellm's "openai/<model>" with the endpoint's URL as api_base.
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
from core.models import ModelSpec, NoPriceMap, check_distinct, resolve_spec  # noqa: F401
from core.routing import endpoint_for_url, endpoint_named, route

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


# --- settings + flags -> RunConfig ---------------------------------------------------
def route_model(model: str, endpoints: list[Endpoint]) -> tuple[str, str | None]:
    """(litellm model string, api_base): "<endpoint>/<m>", or a bare name an
    endpoint lists, becomes ("openai/<m>", endpoint URL); others stay as they are.
    The same routing as every call's (core/routing.py), without looking up a key."""
    found = route(model, endpoints=endpoints)
    return found.model, found.api_base


def build_run_config(settings: Settings, *, root: str | None = None, sub: str | None = None,
                     api_base: str | None = None, overrides: dict[str, Any] | None = None) -> RunConfig:
    """Settings merged with the CLI's flags (flags win), as one RunConfig."""
    overrides = dict(overrides or {})
    names = {f.name for f in dataclasses.fields(RunConfig)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise ValueError(f"unknown run settings: {', '.join(unknown)}")
    root_name = (root or settings.root_model).strip()
    if not root_name:
        raise ValueError("no root model: pass --root MODEL (e.g. openai/gpt-4o-mini) "
                         "or choose one in the settings")
    sub_name = (sub or settings.sub_model or root_name).strip()
    root_model, root_base = route_model(root_name, settings.endpoints)
    sub_model, sub_base = route_model(sub_name, settings.endpoints)

    main_base = api_base or root_base
    sub_override = overrides.pop("sub_api_base", None)
    if sub_override:
        sub_base = sub_override
    elif main_base and sub_base is None and sub_model != root_model and not api_base:
        # (with --api-base the flag serves both models, as documented)
        raise ValueError(
            f"the root model {root_name} is served by {main_base} but the sub model {sub_name} is not; "
            "the sub model would be sent there too. Pick a sub model from an endpoint, "
            "or give its server with --sub-api-base")
    if sub_base == main_base:
        sub_base = None

    kwargs: dict[str, Any] = {}
    for name, value in settings.caps.items():
        if name in names and name not in ("root_model", "sub_model", "prices"):
            kwargs[name] = value
        else:
            log.warning("settings: unknown cap %r ignored", name)

    specs = run_specs(settings, [root_name, sub_name, *settings.sub_call_models],
                      prices=overrides.pop("prices", None) or {}, api_base=api_base)
    prices: dict[str, Price] = {spec.name: spec.price for spec in specs if spec.price is not None}
    efforts: dict[str, str] = {}
    notes: dict[str, str] = {}
    windows: dict[str, int] = {}
    one_block: dict[str, bool] = {}
    temperatures: dict[str, float] = {}
    for spec in specs:            # the rules of the run's own models, by the name each routes to
        rules = spec.rules
        if rules.get("temperature") is not None:
            temperatures[spec.routed] = rules["temperature"]
        if rules.get("one_block_per_turn") is not None:
            one_block[spec.routed] = rules["one_block_per_turn"]
        ms = settings.models.get(spec.name)
        if ms is not None and ms.context_window:
            windows[spec.routed] = ms.context_window
        if rules.get("reasoning_effort"):
            efforts[spec.routed] = rules["reasoning_effort"]
        if str(rules.get("prompt_note") or "").strip():
            notes[spec.routed] = rules["prompt_note"].strip()
    efforts.update(overrides.pop("reasoning_effort", None) or {})
    notes.update(overrides.pop("prompt_notes", None) or {})

    for model, key in ((root_model, "root_max_tokens"), (sub_model, "sub_max_tokens")):
        ms = _model_settings(settings, model, root_name if key == "root_max_tokens" else sub_name)
        if ms is not None and ms.max_tokens:
            kwargs[key] = ms.max_tokens

    kwargs["require_full_sandbox"] = settings.require_full_sandbox
    kwargs.update(overrides)
    kwargs["sub_call_models"] = sub_call_routes(
        settings, (root_name, root_model, main_base), (sub_name, sub_model, sub_base or main_base))
    windows.update(kwargs.pop("context_windows", None) or {})
    one_block.update(kwargs.pop("one_block_per_turn", None) or {})
    temperatures.update(kwargs.pop("root_temperature", None) or {})
    labels: dict[str, str] = {}
    for routed, name in ((root_model, root_name), (sub_model, sub_name)):
        if routed != name:
            labels.setdefault(routed, name)    # the name the user picked is what is shown
    return RunConfig(root_model=root_model, sub_model=sub_model, api_base=main_base,
                     sub_api_base=sub_base, prices=prices, specs=tuple(specs), reasoning_effort=efforts,
                     prompt_notes=notes, context_windows=windows, model_labels=labels,
                     one_block_per_turn=one_block, root_temperature=temperatures, **kwargs)


def run_specs(settings: Settings, names: list[str], *, prices: dict[str, Price] | None = None,
              api_base: str | None = None) -> list[ModelSpec]:
    """One ModelSpec per distinct model name of a run (core/models.py), resolved once from the
    names the user picked; raises ValueError when two of them are one model name on two
    endpoints. `api_base` (--api-base) serves the run's models that name no endpoint."""
    from core.llm.pricing import PriceBook    # lazy: its price map is read only when a run is built
    price_map = PriceBook()
    specs = [resolve_spec(name, endpoints=settings.endpoints, models=settings.models, prices=prices,
                          api_base=api_base if api_base and not _names_endpoint(name, settings) else None,
                          price_map=price_map)
             for name in dict.fromkeys(n for n in names if n)]
    check_distinct(specs)
    return specs


def priced_now(config: RunConfig, settings: Settings, flags: dict[str, Price] | None = None) -> RunConfig:
    """A stored run's config (a fork's, a re-run's) billed at the prices in force now: each of
    its models re-resolved by the name the user picked, against today's settings and `flags`
    (--price), with the stored route kept (where the calls go does not change). The prices
    the parent ran at are not used; the new run stores the ones it used."""
    routed_models = [config.root_model, config.sub_model,
                     *(routed for routed, _base in config.sub_call_models.values())]
    specs: list[ModelSpec] = []
    # lazy: its price map is read only when a run is built
    from core.llm.pricing import PriceBook
    price_map = PriceBook()
    for routed in dict.fromkeys(routed_models):
        name = config.label(routed)
        for picked, (target, _base) in config.sub_call_models.items():
            if target == routed and name == routed:
                name = picked
        base = config.api_base_for(routed)
        if name == routed and base:       # a run stored without the picked name: its endpoint's
            name = _picked_at(routed, base, settings) or name
        spec = resolve_spec(name, endpoints=settings.endpoints, models=settings.models, prices=flags,
                            api_base=None if _names_endpoint(name, settings) else base, price_map=price_map)
        if (spec.routed, spec.api_base) != (routed, base):
            spec = dataclasses.replace(spec, routed=routed, api_base=base)
        specs.append(spec)
    check_distinct(specs)
    return config.replace(specs=tuple(specs),
                          prices={spec.name: spec.price for spec in specs if spec.price is not None})


def model_spec(settings: Settings, name: str, *, price_map: Any = None) -> ModelSpec:
    """The spec of one model as the pickers and Settings show it (no run, no flags);
    `price_map` NoPriceMap(): from the settings alone, without reading litellm's map."""
    if price_map is None:
        return run_specs(settings, [name])[0]
    return resolve_spec(name, endpoints=settings.endpoints, models=settings.models, price_map=price_map)


def _picked_at(routed: str, base: str, settings: Settings) -> str | None:
    """"lab/root" for a routed "openai/root" sent to lab's URL, when lab lists it."""
    endpoint = endpoint_for_url(base, settings.endpoints)
    rest = routed.partition("/")[2]
    return f"{endpoint.name}/{rest}" if endpoint is not None and rest in endpoint.models else None


def _names_endpoint(name: str, settings: Settings) -> bool:
    return endpoint_named(name, settings.endpoints) is not None


def sub_call_routes(settings: Settings, root: tuple[str, str, str | None],
                    sub: tuple[str, str, str | None]) -> dict[str, tuple[str, str | None]]:
    """RunConfig.sub_call_models: each model the user enabled for sub-calls (and the names
    the user gave root and sub, when routing renamed them) -> (litellm model, its own URL).
    The run's api_base never serves an extra model: a provider's model goes to its provider."""
    routes: dict[str, tuple[str, str | None]] = {}
    taken = {root[1]: root[2], sub[1]: sub[2]}
    for name, routed, base in (root, sub):
        if name != routed:
            routes[name] = (routed, base)
    for name in settings.sub_call_models:
        routed, base = route_model(name, settings.endpoints)
        if routed in taken and taken[routed] != base:
            raise ValueError(
                f"the sub-call model {name} ({routed} at {base or 'its provider'}) has the same name as "
                f"a model of this run served by {taken[routed] or 'its provider'}; remove it from the "
                "sub-call models or rename the endpoint's model")
        taken[routed] = base
        routes.setdefault(name, (routed, base))
    return routes


def _model_settings(settings: Settings, routed: str, name: str) -> ModelSettings | None:
    if name in settings.models:
        return settings.models[name]
    return settings.models.get(routed)


def ocr_default(settings: Settings) -> bool:
    """Settings > Documents' OCR (the settings file's ingest.ocr), without reading the rest."""
    ingest = settings.extra.get("ingest")
    return isinstance(ingest, dict) and ingest.get("ocr") is True


def ingest_options(settings: Settings, *, ocr: bool | None = None,
                   max_file_mb: float | None = None) -> "IngestOptions":
    """How documents are read, from the settings file's "ingest" entry, e.g.
    {"ocr": true, "ocr_language": "eng+deu", "archives": true, "tables": true, "max_file_mb": 0};
    `ocr` and `max_file_mb` (the --ocr and --max-file-mb flags) win over the file. Bad values
    are ignored with a warning. max_file_mb 0 (the default) reads a file on disk of any size."""
    # lazy: free in the window, +111 modules in ask (where it runs)
    from core.ingest.model import IngestOptions
    raw = settings.extra.get("ingest")
    raw = raw if isinstance(raw, dict) else {}
    values: dict[str, Any] = {}
    for name in ("ocr", "archives", "tables"):
        if isinstance(raw.get(name), bool):
            values[name] = raw[name]
        elif name in raw:
            log.warning("settings: ingest.%s must be true or false; ignored", name)
    language = raw.get("ocr_language")
    if isinstance(language, str) and language.replace("+", "").replace("_", "").isalnum():
        values["ocr_language"] = language
    elif language is not None:
        log.warning("settings: ingest.ocr_language must look like 'eng' or 'eng+deu'; ignored")
    if ocr is not None:
        values["ocr"] = ocr
    limit = raw.get("max_file_mb") if max_file_mb is None else max_file_mb
    if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit >= 0:
        values["max_file_bytes"] = int(limit * 1024 * 1024)
    elif limit is not None:
        log.warning("settings: ingest.max_file_mb must be a number of MB, 0 for any size; ignored")
    return IngestOptions(**values)
