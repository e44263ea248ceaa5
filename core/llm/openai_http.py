"""One chat-completions attempt to an OpenAI-compatible server of the user's, over httpx.

litellm takes seconds to import and about 11 ms of CPU per call; for the
simplest and most common route it offers nothing we need: a model the user
serves themselves (Ollama, LM Studio, llama.cpp, vLLM, a lab endpoint) reached
as litellm's "openai/NAME" at the user's URL. litellm sends such a call to
`{api_base}/chat/completions` unchanged through the openai SDK. This module
sends the same request itself, so a run's first model request leaves before
litellm has finished importing, and each call costs a fraction of the CPU.

Which calls: `serves(model, api_base)` - an "openai/..." model at a URL that is
not OpenAI's own API (OpenAI's models need litellm's parameter mapping).
Every other route, and every call when RLM_STUDIO_HTTP=litellm is set, goes
through litellm. core/llm/client.py decides, and owns retries, the meter and
the typed errors; this module is one attempt.

The request is what litellm sends for the same call (a test compares the two
bodies on the scripted server): model without its "openai/" prefix, messages,
max_tokens, temperature and reasoning_effort when given, stream and
stream_options.include_usage when streamed; `Authorization: Bearer KEY`.

Failures are raised as the exceptions `core.llm.errors.classify` already
knows: httpx's own transport errors (ConnectError, ReadError,
RemoteProtocolError, timeouts), `StatusError` (an httpx.HTTPStatusError whose
text is the server's own error message) for a status other than 200,
json.JSONDecodeError for a body that is not JSON, `APIError` for an error
event inside a stream.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable

import httpx

PREFIX = "openai/"
OPENAI_HOSTS = ("api.openai.com",)
FORCE_LITELLM = "RLM_STUDIO_HTTP"          # =litellm: every call through litellm
MAX_ERROR_BODY = 64 * 1024

_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[bool, httpx.AsyncClient]]" = \
    weakref.WeakKeyDictionary()


def serves(model: str, api_base: str | None) -> bool:
    """True when this module sends `model`'s calls (see the module docstring)."""
    if os.environ.get(FORCE_LITELLM, "").strip().lower() == "litellm":
        return False
    if not api_base or not model.startswith(PREFIX) or len(model) == len(PREFIX):
        return False
    host = api_base.split("//", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1].split(":", 1)[0].lower()
    return host not in OPENAI_HOSTS


class StatusError(httpx.HTTPStatusError):
    """The server answered with an error status; the text is its own message."""


class APIError(Exception):
    """An error event inside a stream (`data: {"error": ...}`)."""


@dataclass
class Reply:
    """What one attempt got back."""
    text: str
    finish_reason: str | None
    prompt_tokens: int | None          # the server's own counts, None when it sent none
    completion_tokens: int | None


def body(model: str, messages: list[dict], *, max_tokens: int, stream: bool,
         temperature: float | None = None, reasoning_effort: str | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"model": model.removeprefix(PREFIX), "messages": messages}
    if temperature is not None:
        payload["temperature"] = temperature
    payload["max_tokens"] = max_tokens
    if reasoning_effort:
        payload["reasoning_effort"] = reasoning_effort
    if stream:
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
    return payload


def url_for(api_base: str) -> str:
    return api_base.rstrip("/") + "/chat/completions"


def headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json",
            "Accept": "application/json", "User-Agent": "rlm-studio"}


def client(api_base: str) -> httpx.AsyncClient:
    """The connection pool of the running event loop (one per loop, like litellm's), one for
    https and one for plain http: a plain-http pool never speaks TLS, so it skips loading the
    CA bundle (130 ms of a cold start here); https URLs verify certificates as usual. Redirects
    are not followed, so a plain-http request never turns into an https one."""
    pools = _clients.setdefault(asyncio.get_running_loop(), {})
    tls = not api_base.lower().startswith("http://")
    found = pools.get(tls)
    if found is None or found.is_closed:
        found = httpx.AsyncClient(timeout=None, verify=True if tls else False, limits=httpx.Limits(
            max_connections=None, max_keepalive_connections=256, keepalive_expiry=30.0))
        pools[tls] = found
    return found


async def close_clients() -> None:
    """Close the running loop's pools (before the loop ends)."""
    for found in _clients.pop(asyncio.get_running_loop(), {}).values():
        await found.aclose()


async def post(api_base: str, key: str, payload: dict[str, Any], timeout_s: float) -> Reply:
    """A call without streaming."""
    return await _cancelled_once(_post(api_base, key, payload, timeout_s))


async def stream(api_base: str, key: str, payload: dict[str, Any], timeout_s: float,
                 on_piece: Callable[[str], None]) -> Reply:
    """A streamed call: `on_piece(text)` for every piece of the reply as it arrives."""
    return await _cancelled_once(_stream(api_base, key, payload, timeout_s, on_piece))


async def _cancelled_once(request: Any) -> Reply:
    """Run one request in a task of its own that is cancelled at most once.

    httpcore closes a connection whose request was cancelled in an `except` block that
    itself awaits; a second cancellation of the same task (a run's Stop and a cell's
    cancel arrive together) interrupts that, and the connection stays open with the
    server still working on the request (measured: 1 cancel closes it, 2 do not). So
    the caller's task waits on this one through a shield and, when cancelled, cancels
    it exactly once; it closes its connection undisturbed."""
    task = asyncio.ensure_future(request)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.cancel()
        task.add_done_callback(_retrieve)
        raise


def _retrieve(task: "asyncio.Task[Any]") -> None:
    if not task.cancelled():
        task.exception()        # seen: a failure after the caller left is not "never retrieved"


async def _post(api_base: str, key: str, payload: dict[str, Any], timeout_s: float) -> Reply:
    response = await client(api_base).post(url_for(api_base), content=_encode(payload), headers=headers(key),
                                   timeout=timeout_s)
    if response.status_code != 200:
        _raise_status(response, response.content)
    data = json.loads(response.content)
    choice = (data.get("choices") or [None])[0] or {}
    message = choice.get("message") or {}
    return Reply(message.get("content") or "", choice.get("finish_reason"), *_usage(data.get("usage")))


async def _stream(api_base: str, key: str, payload: dict[str, Any], timeout_s: float,
                  on_piece: Callable[[str], None]) -> Reply:
    finish: str | None = None
    usage: tuple[int | None, int | None] = (None, None)
    parts: list[str] = []
    async with client(api_base).stream("POST", url_for(api_base), content=_encode(payload),
                               headers=headers(key), timeout=timeout_s) as response:
        if response.status_code != 200:
            _raise_status(response, await _read_some(response))
        async for event in _events(response):
            if isinstance(event.get("error"), (dict, str)):
                raise APIError(_error_text(event))
            choices = event.get("choices") or ()
            if choices:
                first = choices[0] or {}
                piece = (first.get("delta") or {}).get("content")
                if piece:
                    parts.append(piece)
                    on_piece(piece)
                finish = first.get("finish_reason") or finish
            if event.get("usage"):
                usage = _usage(event["usage"])
    return Reply("".join(parts), finish, *usage)


async def _events(response: httpx.Response) -> AsyncIterator[dict]:
    """The JSON payloads of a server-sent event stream, up to `data: [DONE]`."""
    async for line in response.aiter_lines():
        if not line.startswith("data:"):
            continue                      # blank separators, comments, event:/id: fields
        data = line[5:].strip()
        if data == "[DONE]":
            return
        if data:
            yield json.loads(data)


def _encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def _usage(usage: Any) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return (int(prompt) if isinstance(prompt, (int, float)) and prompt > 0 else None,
            int(completion) if isinstance(completion, (int, float)) and completion >= 0 else None)


async def _read_some(response: httpx.Response) -> bytes:
    got = bytearray()
    async for chunk in response.aiter_bytes():
        got += chunk
        if len(got) >= MAX_ERROR_BODY:
            break
    return bytes(got)


def _raise_status(response: httpx.Response, content: bytes) -> None:
    text = content[:MAX_ERROR_BODY].decode("utf-8", "replace")
    try:
        message = _error_text(json.loads(text))
    except (ValueError, AttributeError):
        message = text.strip()
    raise StatusError(message or f"HTTP {response.status_code}", request=response.request,
                      response=response)


def _error_text(data: Any) -> str:
    """The message of an OpenAI-style error body: {"error": {"message": ...}} or {"error": "..."}."""
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or json.dumps(error))
    return str(error)
