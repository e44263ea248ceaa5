"""The model list for pickers: litellm's chat models with prices and context
windows, plus the models of custom OpenAI-compatible endpoints.

    models = list_models(settings.endpoints, fetch_remote=True)
    models.skipped        # [(endpoint name, reason)] for endpoints that did not answer

A custom endpoint's model is listed as "<endpoint>/<model>": the name the
settings and the CLI accept (app/settings.py routes it to the endpoint).
Fetching an endpoint's GET {base_url}/models never raises: a failure is a
skipped entry with its reason.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Iterable

from core import providers

log = logging.getLogger(__name__)

SOURCES = ("litellm", "endpoint", "remote")


def _fetch_errors() -> tuple[type[BaseException], ...]:
    import httpx
    return (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError)


@dataclass(frozen=True)
class ModelEntry:
    id: str                          # what to put in --root/--sub and the settings
    provider: str                    # core.providers name, or the endpoint's name
    input_per_m: float | None        # USD per million tokens; None = unknown
    output_per_m: float | None
    context_window: int | None
    source: str                      # litellm | endpoint | remote


class ModelList(list):
    """A list of ModelEntry that also says which endpoints were skipped and why."""

    def __init__(self, entries: Iterable[ModelEntry] = (), skipped: list[tuple[str, str]] | None = None):
        super().__init__(entries)
        self.skipped: list[tuple[str, str]] = skipped or []


def litellm_models() -> list[ModelEntry]:
    """litellm's known chat models (its bundled cost map; no network)."""
    from core.price_map import model_cost     # litellm's map, without litellm's import
    entries = []
    for model_id, info in model_cost().items():
        if not isinstance(info, dict) or info.get("mode") != "chat" or model_id == "sample_spec":
            continue
        owner = str(info.get("litellm_provider") or "")
        entries.append(ModelEntry(
            id=model_id,
            provider=providers.provider_for_prefix(owner) or providers.provider_for_model(model_id),
            input_per_m=_per_m(info.get("input_cost_per_token")),
            output_per_m=_per_m(info.get("output_cost_per_token")),
            context_window=_int(info.get("max_input_tokens") or info.get("max_tokens")),
            source="litellm"))
    entries.sort(key=lambda e: (e.provider, e.id))
    return entries


# litellm's providers that are a server on the user's computer, and the discovery kind
# (core/discovery.py) that says it runs: their catalogue is listed only while it does.
LOCAL_SERVER_PROVIDERS = {"ollama": "ollama", "ollama_chat": "ollama", "lm_studio": "lmstudio",
                          "llamafile": "llamacpp", "hosted_vllm": "vllm"}


def without_idle_servers(entries: Iterable[ModelEntry], running: Iterable[str]) -> list[ModelEntry]:
    """The entries less litellm's catalogue of a local server kind that does not run here
    (ollama/deepseek-v3.1:671b-cloud is not "free" while no Ollama answers)."""
    up = set(running)
    return [e for e in entries
            if e.source != "litellm" or LOCAL_SERVER_PROVIDERS.get(e.provider, "") in ("", *up)]


def endpoint_models(endpoints: Iterable[Any]) -> list[ModelEntry]:
    """The models each custom endpoint lists in the settings."""
    return [ModelEntry(f"{e.name}/{m}", e.name, None, None, None, "endpoint")
            for e in endpoints for m in e.models]


def list_models(settings_endpoints: Iterable[Any] = (), *, fetch_remote: bool = False,
                timeout_s: float = 2.0) -> ModelList:
    endpoints = list(settings_endpoints or [])
    found = ModelList(endpoint_models(endpoints))
    if fetch_remote:
        import httpx
        fetch_errors = _fetch_errors()
        with httpx.Client(timeout=timeout_s) as client:
            for endpoint in endpoints:
                try:
                    response = client.get(_models_url(endpoint.base_url), headers=_headers(endpoint))
                except fetch_errors as exc:
                    _skip(found, endpoint, _reason(exc))
                    continue
                _add_remote(found, endpoint, response)
    found.extend(litellm_models())
    return found


async def list_models_async(settings_endpoints: Iterable[Any] = (), *, fetch_remote: bool = False,
                            timeout_s: float = 2.0) -> ModelList:
    """Same as list_models; endpoints are asked concurrently and litellm's
    import runs in a thread so a GUI's event loop stays responsive."""
    endpoints = list(settings_endpoints or [])
    found = ModelList(endpoint_models(endpoints))
    if fetch_remote and endpoints:
        import httpx
        fetch_errors = _fetch_errors()
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            results = await asyncio.gather(
                *(client.get(_models_url(e.base_url), headers=_headers(e)) for e in endpoints),
                return_exceptions=True)
        for endpoint, result in zip(endpoints, results):
            if isinstance(result, fetch_errors):
                _skip(found, endpoint, _reason(result))
            elif isinstance(result, BaseException):
                raise result
            else:
                _add_remote(found, endpoint, result)
    found.extend(await asyncio.to_thread(litellm_models))
    return found


def _add_remote(found: ModelList, endpoint: Any, response: Any) -> None:
    if response.status_code != 200:
        _skip(found, endpoint, f"GET /models answered HTTP {response.status_code}")
        return
    try:
        data = response.json().get("data")
        ids = [str(item["id"]) for item in data if isinstance(item, dict) and item.get("id")]
    except (ValueError, AttributeError, TypeError, KeyError) as exc:
        _skip(found, endpoint, f"GET /models answered something unexpected ({exc})")
        return
    listed = {e.id for e in found}
    for model in ids:
        entry_id = f"{endpoint.name}/{model}"
        if entry_id not in listed:
            found.append(ModelEntry(entry_id, endpoint.name, None, None, None, "remote"))
            listed.add(entry_id)


def _skip(found: ModelList, endpoint: Any, reason: str) -> None:
    log.info("models of endpoint %s not listed: %s", endpoint.name, reason)
    found.skipped.append((endpoint.name, reason))


def _models_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/models"


def _headers(endpoint: Any) -> dict[str, str]:
    """Endpoints that need a key get it from the keychain (or its env var): the key its
    own URL may carry (core/routing.py)."""
    if not getattr(endpoint, "needs_key", False):
        return {}
    from core.routing import route
    from core.secrets import KeyStore
    key = route(f"{endpoint.name}/models", endpoints=[endpoint], keys=KeyStore()).key
    return {"Authorization": f"Bearer {key}"} if key else {}


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return f"unreachable ({type(exc).__name__}: {text})"


def _per_m(per_token: Any) -> float | None:
    try:
        return round(float(per_token) * 1_000_000, 6) if per_token is not None else None
    except (TypeError, ValueError):
        return None


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None
