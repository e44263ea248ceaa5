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
import logging
from typing import Any

from core.config import Price, RunConfig
from core.models import ModelSpec, NoPriceMap, check_distinct, resolve_spec  # noqa: F401  (NoPriceMap: the pickers)
from core.routing import endpoint_for_url, endpoint_named, route

from app.settings_file import (  # noqa: F401  (the settings' form and file, named here for every caller)
    CAP_NAMES, RECENT_LIMIT, REASONING_EFFORTS, SETTINGS_VERSION, THEMES, Endpoint, ModelSettings, Settings,
    default_caps, load_settings, save_settings, settings_from_dict, settings_to_dict)

log = logging.getLogger(__name__)


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
