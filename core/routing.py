"""Where a model call goes and which key it carries: decided here, for the CLI and the window.

    r = route("groq/llama-3.3-70b-versatile", keys=KeyStore())
    # Route(model="groq/llama-3.3-70b-versatile", api_base=None, key=<Groq's key>, key_owner="groq")
    r = route("lab/qwen3", endpoints=settings.endpoints, keys=keys)
    # Route(model="openai/qwen3", api_base="http://10.0.0.5:8000/v1", key=<lab's key, or None>)

The URL decides the key, never the model name:
  - api_base is a configured endpoint's URL  -> that endpoint's key (none when it needs none);
  - api_base is a provider's own https host  -> that provider's key (api.openai.com, api.groq.com, ...);
  - no api_base: litellm sends the call to the model's provider -> that provider's key;
  - any other URL (an ad-hoc --api-base)     -> no key, unless the user said whose key goes
    there (`rlm-studio ask --api-key-from NAME`, RunConfig.api_key_from).
So the OpenAI key never goes to a custom URL, and one provider's key never to another's.

For a run, `RunRoutes(config, endpoints, keys)` is what the engine's ModelClient calls
(`key_for`, `api_base_for`), and `sub_call_model(requested, config)` is the allow-list of
`llm_query(..., model=...)`: the run's root and sub models plus the models the user enabled
for sub-calls (Settings.sub_call_models -> RunConfig.sub_call_models). Anything else raises
ModelNotAllowed, which the engine turns into that slot's error.

Keys are looked up through `keys.resolve(name) -> (key | None, source)` (core.secrets.KeyStore);
this module never logs a key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Protocol
from urllib.parse import urlsplit

from core import providers


class KeySource(Protocol):
    def resolve(self, provider: str) -> tuple[str | None, str]: ...


@dataclass(frozen=True)
class Route:
    model: str                 # the litellm model string to call
    api_base: str | None       # None: litellm's own URL for the model's provider
    key: str | None            # None: send no key (ModelClient sends a placeholder to a custom URL)
    key_owner: str             # provider or endpoint whose key this is ("" when none is sent)
    url_owner: str             # provider or endpoint that owns the URL ("" for an ad-hoc URL)

    def __repr__(self) -> str:          # never print a key
        key = "None" if self.key is None else "<key>"
        return (f"Route(model={self.model!r}, api_base={self.api_base!r}, key={key}, "
                f"key_owner={self.key_owner!r}, url_owner={self.url_owner!r})")


NOT_ALLOWED_MARK = "is not allowed in this run's sub-calls"     # in every ModelNotAllowed message


class ModelNotAllowed(Exception):
    """`model=` named a model this run may not call; the message names the allowed ones."""

    def __init__(self, requested: str, allowed: Iterable[str]) -> None:
        self.requested = requested
        self.allowed = tuple(allowed)
        super().__init__(
            f"model {requested!r} {NOT_ALLOWED_MARK}; allowed: "
            f"{', '.join(self.allowed)}. Call llm_query without model= to use the sub model. "
            "(The user can enable more models for sub-calls in Settings.)")


# --- URLs ------------------------------------------------------------------------------
def normalize_url(url: str) -> str:
    """Scheme and host in lower case, no trailing slash: the form URLs are compared in."""
    url = url.strip()
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return url.rstrip("/")
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}{query}"


def endpoint_for_url(api_base: str, endpoints: Iterable[Any]) -> Any | None:
    """The configured endpoint whose base URL is `api_base`, or None."""
    wanted = normalize_url(api_base)
    for endpoint in endpoints or ():
        if normalize_url(str(getattr(endpoint, "base_url", ""))) == wanted:
            return endpoint
    return None


def provider_for_url(api_base: str) -> str:
    """The provider whose own API host `api_base` is (https only), "" for any other URL."""
    parts = urlsplit(api_base.strip())
    if parts.scheme.lower() != "https" or not parts.hostname:
        return ""
    if parts.port not in (None, 443):
        return ""
    return providers.provider_for_host(parts.hostname)


def endpoint_named(model: str, endpoints: list[Any]) -> tuple[Any, str] | None:
    """("lab/qwen3" | a bare name an endpoint lists) -> (endpoint, "qwen3")."""
    prefix, sep, rest = model.partition("/")
    for endpoint in endpoints:
        if sep and prefix == endpoint.name:
            return endpoint, rest
    if not sep:
        for endpoint in endpoints:
            if model in (getattr(endpoint, "models", None) or []):
                return endpoint, model
    return None


# --- the one routing function ---------------------------------------------------------------
def route(model: str, *, api_base: str | None = None, endpoints: Iterable[Any] | None = (),
          keys: KeySource | None = None, key_from: str | None = None) -> Route:
    """Model, URL and key of one call (see the module docstring for the rule).

    A model named after a configured endpoint ("lab/qwen3", or a bare name it lists) becomes
    litellm's "openai/qwen3" at that endpoint's URL unless `api_base` is given. `key_from` is
    the user's explicit choice of whose key goes to an ad-hoc URL nobody owns."""
    endpoints = list(endpoints or ())
    model = model.strip()
    endpoint = None
    if not api_base:
        named = endpoint_named(model, endpoints)
        if named is not None:
            endpoint, rest = named
            model, api_base = f"openai/{rest}", endpoint.base_url
    if api_base:
        # the endpoint the name picked, not the first one found at its URL (two may share one)
        endpoint = endpoint or endpoint_for_url(api_base, endpoints)
        if endpoint is not None:
            if not getattr(endpoint, "needs_key", False):
                return Route(model, api_base, None, "", endpoint.name)
            return Route(model, api_base, _key(keys, endpoint.name), endpoint.name, endpoint.name)
        owner = provider_for_url(api_base)
        if owner:
            return Route(model, api_base, _key(keys, owner), owner, owner)
        if key_from:
            name = key_from.strip().lower()
            return Route(model, api_base, _key(keys, name), name, "")
        return Route(model, api_base, None, "", "")
    owner = providers.provider_for_model(model, endpoints)
    if not owner:
        return Route(model, None, None, "", "")
    known = providers.get(owner)
    if known is not None and not known.needs_key:
        return Route(model, None, None, "", owner)
    return Route(model, None, _provider_key(keys, owner), owner, owner)


def _key(keys: KeySource | None, name: str) -> str | None:
    if keys is None:
        return None
    return keys.resolve(name)[0]


def _provider_key(keys: KeySource | None, name: str) -> str | None:
    return _key(keys, name) or None


# --- a run: the allow-list and what the ModelClient calls ---------------------------------------
def allowed_sub_models(config: Any) -> dict[str, str]:
    """Names `model=` may use in this run -> the litellm model each one calls."""
    allowed = {config.sub_model: config.sub_model, config.root_model: config.root_model}
    for name, (routed, _base) in (getattr(config, "sub_call_models", None) or {}).items():
        allowed.setdefault(name, routed)
        allowed.setdefault(routed, routed)
    return allowed


def extra_sub_call_models(config: Any) -> list[str]:
    """The models the user enabled for sub-calls beyond the run's root and sub (what the
    root is told it may name in `model=`)."""
    own = {config.root_model, config.sub_model}
    return [name for name, (routed, _base) in (getattr(config, "sub_call_models", None) or {}).items()
            if routed not in own]


def sub_call_model(requested: str | None, config: Any) -> str:
    """The litellm model a sub-call with `model=requested` calls; raises ModelNotAllowed."""
    if requested is None or not str(requested).strip():
        return config.sub_model
    requested = str(requested).strip()
    allowed = allowed_sub_models(config)
    if requested in allowed:
        return allowed[requested]
    shown = list(dict.fromkeys([config.sub_model, config.root_model,
                                *(getattr(config, "sub_call_models", None) or {})]))
    raise ModelNotAllowed(requested[:200], shown)


def unkeyed_url_hint(config: Any, endpoints: Iterable[Any] | None = ()) -> str | None:
    """What to tell the user when the run's own URLs get no key because nobody owns them."""
    if getattr(config, "api_key_from", None):
        return None
    endpoints = list(endpoints or ())
    bare = [url for url in dict.fromkeys([config.api_base, config.sub_api_base])
            if url and endpoint_for_url(url, endpoints) is None and not provider_for_url(url)]
    if not bare:
        return None
    return (f"{', '.join(bare)} is not a configured endpoint or a provider's own URL, so no key was "
            "sent there. If it needs one, add --api-key-from NAME (a provider or endpoint whose key "
            "goes there), or configure it as an endpoint with its own key (docs/model-routing.md).")


class RunRoutes:
    """The routes of one run: `key_for` and `api_base_for` are what ModelClient takes."""

    def __init__(self, config: Any, endpoints: Iterable[Any] | None = (),
                 keys: KeySource | None = None) -> None:
        self.config = config
        self.endpoints = list(endpoints or ())
        self.keys = keys

    def route(self, model: str) -> Route:
        spec = {s.routed: s for s in getattr(self.config, "specs", ()) or ()}.get(model)
        base = self.config.api_base_for(model)
        named = endpoint_named(spec.name, self.endpoints) if spec is not None and base else None
        if named is not None and normalize_url(named[0].base_url) == normalize_url(base):
            # the endpoint the user picked decides the key, even when another shares its URL;
            # only ever for a call to that endpoint's own URL (a record never moves a key)
            return route(spec.name, endpoints=self.endpoints, keys=self.keys)
        return route(model, api_base=self.config.api_base_for(model), endpoints=self.endpoints,
                     keys=self.keys, key_from=getattr(self.config, "api_key_from", None))

    def key_for(self, model: str) -> str | None:
        return self.route(model).key

    def api_base_for(self, model: str) -> str | None:
        return self.config.api_base_for(model)
