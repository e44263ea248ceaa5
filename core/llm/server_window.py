"""A model's context window, as its own server reports it (for Auto: core/engine/mode.py).

    found = await server_window(api_base, model)     # ServerWindow(tokens=32768, source="llama.cpp") or None

Local servers know the window they serve and each says it its own way; all are asked at
once, each with a short timeout (WINDOW_TIMEOUT_S), and the first that names a window wins:

- llama.cpp: GET /props -> default_generation_settings.n_ctx (or n_ctx);
- vLLM: GET /v1/models -> the model's max_model_len;
- Ollama: POST /api/show {"model": name} -> num_ctx in its parameters (the window it
  serves), else model_info's <architecture>.context_length;
- LM Studio: GET /api/v0/models -> the model's loaded_context_length, else max_context_length.

An answer (or the lack of one) is cached per endpoint and model for the process's life
(a miss for MISS_TTL_S, so a server started later is asked again). No key is sent: these
routes are a local server's own. Cancelling the call cancels every request and closes the
client. The model's name on the server is the routed name without its provider prefix
("openai/qwen2.5-coder-1.5b" -> "qwen2.5-coder-1.5b").
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

WINDOW_TIMEOUT_S = 1.0
MISS_TTL_S = 60.0
_PREFIXES = ("openai/", "hosted_vllm/", "ollama_chat/", "ollama/", "lm_studio/", "llamacpp/", "vllm/")


@dataclass(frozen=True)
class ServerWindow:
    tokens: int
    source: str                  # "llama.cpp" | "vLLM" | "Ollama" | "LM Studio"


_cache: dict[tuple[str, str], tuple[ServerWindow | None, float]] = {}


def served_name(model: str) -> str:
    for prefix in _PREFIXES:
        if model.startswith(prefix):
            return model[len(prefix):]
    return model


def _root(api_base: str) -> str:
    base = api_base.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base


def _positive(value: Any) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def _from_props(data: Any, name: str) -> int | None:
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    return _positive((settings or {}).get("n_ctx") if isinstance(settings, dict) else None) \
        or _positive(data.get("n_ctx"))


def _from_model_list(data: Any, name: str, keys: tuple[str, ...]) -> int | None:
    items = data.get("data") if isinstance(data, dict) else None
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and str(item.get("id")) == name:
            for key in keys:
                n = _positive(item.get(key))
                if n:
                    return n
    return None


def _from_show(data: Any, name: str) -> int | None:
    if not isinstance(data, dict):
        return None
    match = re.search(r"^\s*num_ctx\s+(\d+)", str(data.get("parameters") or ""), re.MULTILINE)
    if match:
        return _positive(match.group(1))
    info = data.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if str(key).endswith(".context_length"):
                return _positive(value)
    return None


async def _ask(client: Any, method: str, url: str, name: str, read: Any, **kw: Any) -> int | None:
    import aiohttp
    try:
        async with client.request(method, url, allow_redirects=False, **kw) as response:
            if response.status != 200:
                return None
            return read(await response.json(content_type=None), name)
    except (aiohttp.ClientError, OSError, ValueError):
        return None


async def server_window(api_base: str | None, model: str, *, timeout_s: float = WINDOW_TIMEOUT_S
                        ) -> ServerWindow | None:
    if not api_base:
        return None
    name, root = served_name(model), _root(api_base)
    key = (root, name)
    cached = _cache.get(key)
    if cached is not None and (cached[0] is not None or time.monotonic() - cached[1] < MISS_TTL_S):
        return cached[0]
    # aiohttp, as the direct route's first request needs it anyway (started at launch:
    # app/main.py); httpx would add its own import before the first request
    import aiohttp
    asks = (
        ("llama.cpp", "GET", f"{root}/props", _from_props, {}),
        ("vLLM", "GET", f"{root}/v1/models", lambda d, n: _from_model_list(d, n, ("max_model_len",)), {}),
        ("Ollama", "POST", f"{root}/api/show", _from_show, {"json": {"model": name}}),
        ("LM Studio", "GET", f"{root}/api/v0/models",
         lambda d, n: _from_model_list(d, n, ("loaded_context_length", "max_context_length")), {}),
    )
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s), trust_env=False) as client:
        tasks = [asyncio.ensure_future(_ask(client, method, url, name, read, **kw))
                 for _, method, url, read, kw in asks]
        try:
            done, pending = await asyncio.wait(tasks, timeout=timeout_s + 0.25)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    found = None
    for (source, *_), task in zip(asks, tasks):
        if task in done and not task.cancelled() and task.exception() is None and task.result():
            found = ServerWindow(task.result(), source)
            break
    _cache[key] = (found, time.monotonic())
    if found:
        log.info("the server at %s reports a %d-token window for %s (%s)", root, found.tokens, name, found.source)
    return found


def forget() -> None:
    """Drop every cached answer (tests; Settings after an endpoint changed)."""
    _cache.clear()
