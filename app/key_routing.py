"""Which key a model's call carries: one function for every run (the run service, and
app.runner's default). When core/routing.py (model, URL and key together) lands, this
is where it is called instead."""

from __future__ import annotations

from typing import Any, Callable


def route_key_for(config: Any, *, keys: Any = None, settings: Any = None) -> Callable[[str], str | None]:
    """The routing of keys, for every run: keychain first, then the provider's
    environment variable; the URL a model's call goes to decides whose key it
    carries (an endpoint's key only to that endpoint; never a cloud key to a URL
    an endpoint owns). `keys`/`settings` default to the keychain and the settings file."""
    if keys is None:                     # lazy: keyring and the settings cost the CLI's start (docsperf)
        from core.secrets import KeyStore
        keys = KeyStore()
    if settings is None:
        from app.settings import load_settings
        settings = load_settings()
    return lambda model: keys.key_for_model(model, settings, api_base=config.api_base_for(model))
