"""Which key a model's call carries: one function for every run (the run service, and
app.runner's default), over core/routing.py (model, URL and key together)."""

from __future__ import annotations

from typing import Any, Callable


def route_key_for(config: Any, *, keys: Any = None, settings: Any = None) -> Callable[[str], str | None]:
    """The key each call of a run carries, from core/routing.py: the URL a model is sent to
    decides whose key it gets (an endpoint's to that endpoint, a provider's to that provider,
    none to an ad-hoc URL unless the run names one with api_key_from). `keys`/`settings`
    default to the keychain and the settings file."""
    from core.routing import RunRoutes
    if settings is None:                 # lazy: keyring and the settings cost the CLI's start
        from app.settings import load_settings
        settings = load_settings()
    if keys is None:
        from core.secrets import KeyStore
        keys = KeyStore()
    return RunRoutes(config, settings.endpoints, keys).key_for
