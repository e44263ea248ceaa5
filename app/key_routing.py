"""Which key a model's call carries: `route_key_for`, the one entry point in app/ (the run
service, the runner, the window's calls outside a run, eval), over core/routing.py (model,
URL and key together)."""

from __future__ import annotations

from typing import Any, Callable


def route_key_for(config: Any, *, keys: Any = None, settings: Any = None) -> Callable[[str], str | None]:
    """The key each call of a run carries, from core/routing.py: the URL a model is sent to
    decides whose key it gets (an endpoint's to that endpoint, a provider's to that provider,
    none to an ad-hoc URL unless the run names one with api_key_from). `config` None: a call
    outside a run, routed by the model's name alone (its endpoint or provider). `keys` /
    `settings` default to the keychain and the settings file."""
    # lazy: free in the window, +10 modules in ask (where it runs)
    from core.routing import RunRoutes, route
    if settings is None:                 # lazy: keyring and the settings cost the CLI's start
        from app.settings import load_settings
        settings = load_settings()
    if keys is None:
        # lazy: +2 modules in the window, +12 modules in ask (where it runs)
        from core.secrets import KeyStore
        keys = KeyStore()
    if config is None:
        endpoints = settings.endpoints
        return lambda model: route(model, endpoints=endpoints, keys=keys).key
    return RunRoutes(config, settings.endpoints, keys).key_for


async def resolved_before_run(key_for: Callable[[str], str | None], config: Any) -> Callable[[str], str | None]:
    """`key_for` with the key of every model the run may call looked up now, in a thread:
    a keychain lookup (D-Bus, perhaps an unlock prompt) never runs on the engine's loop
    while calls are in flight. A model outside the run's set gets no key (routing
    refuses such a model before any call) and the miss is logged."""
    # lazy: free in the window, free in ask (where it runs)
    import logging
    # lazy: +1 modules in the window, +63 modules in ask (where it runs)
    from core.blocking import run_blocking
    # lazy: free in the window, +10 modules in ask (where it runs)
    from core.routing import allowed_sub_models
    models = sorted({config.root_model, config.sub_model, *allowed_sub_models(config).values()})

    def look_up() -> dict[str, Any]:
        found: dict[str, Any] = {}
        for model in models:
            try:
                found[model] = key_for(model)
            except Exception as exc:      # told by the call that needs the key, as before
                found[model] = exc
        return found
    keys = await run_blocking(look_up)

    def resolved(model: str) -> str | None:
        if model not in keys:
            logging.getLogger(__name__).warning("no key was looked up for %s before the run", model)
        key = keys.get(model)
        if isinstance(key, Exception):
            raise key
        return key
    return resolved


def route_lines(config: Any, endpoints: Any) -> list[str]:
    """Where each of the run's models goes and whose key it carries, one line per role:
    "root lab/x -> http://127.0.0.1:8000/v1 (key of lab)",
    "sub gpt-4o -> OpenAI's own URL, https://api.openai.com (key of openai)"."""
    from core.providers import PROVIDERS  # lazy: with the routing (below)
    # lazy: +16 modules, 46 ms at load 9 (first use only)
    from core.routing import RunRoutes
    routes = RunRoutes(config, endpoints, keys=None)
    lines = []
    for role, model in (("root", config.root_model), ("sub", config.sub_model)):
        r = routes.route(model)
        provider = PROVIDERS.get(r.url_owner)
        if r.api_base:
            where = r.api_base
        elif provider is not None:
            where = f"{provider.display}'s own URL" + (f", https://{provider.hosts[0]}" if provider.hosts else "")
        else:
            where = f"{r.url_owner}'s own URL" if r.url_owner else "the provider's own URL"
        key = f"key of {r.key_owner}" if r.key_owner else "no key"
        lines.append(f"{role} {config.label(model)} -> {where} ({key})")
    return lines


def describe_routes(config: Any, endpoints: Any) -> str:
    """"calls go to: root openai/x -> http://127.0.0.1:8000/v1 (key of lab); sub ... -> ..."."""
    return "calls go to: " + "; ".join(route_lines(config, endpoints))


def keys_to_send(config: Any, allowed: set[str], *, keys: Any = None, settings: Any = None,
                 how_to_allow: str = "unless you allow it for this grid with --ray-send-key {owner}"
                 ) -> dict[str, str | None]:
    """The key each of the run's models carries, for runs on other computers (a grid's cells
    on Ray): a model whose calls need a key gets it only when the user allowed its owner
    (provider or endpoint) for this grid; otherwise ValueError says which and how to allow it.
    A model that needs no key (a team's gateway, a local server) maps to None."""
    # lazy: free in the window, +10 modules in ask (where it runs)
    from core.routing import RunRoutes
    if settings is None:                 # lazy: keyring and the settings cost the CLI's start
        from app.settings import load_settings
        settings = load_settings()
    if keys is None:
        # lazy: +2 modules in the window, +12 modules in ask (where it runs)
        from core.secrets import KeyStore
        keys = KeyStore()
    routes = RunRoutes(config, settings.endpoints, keys)
    out: dict[str, str | None] = {}
    for model in dict.fromkeys([config.root_model, config.sub_model]):
        route = routes.route(model)
        if route.key is not None and route.key_owner not in allowed:
            raise ValueError(f"{config.label(model)} needs the key of {route.key_owner}, which stays on this "
                             f"computer {how_to_allow.format(owner=route.key_owner)}")
        out[model] = route.key
    return out
