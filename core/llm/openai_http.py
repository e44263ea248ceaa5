"""One chat-completions attempt to an OpenAI-compatible server of the user's, over aiohttp.

litellm takes seconds to import and about 11 ms of CPU per call; for the
simplest and most common route it offers nothing we need: a model the user
serves themselves (Ollama, LM Studio, llama.cpp, vLLM, a lab endpoint) reached
as litellm's "openai/NAME" at the user's URL. litellm sends such a call to
`{api_base}/chat/completions` unchanged through the openai SDK. This module
sends the same request itself, so a run's first model request leaves before
litellm has finished importing, and each call costs a fraction of the CPU.

Which calls: `serves(model, api_base)` - an "openai/NAME" model (or a bare OpenAI
name such as "gpt-4o-mini") whose parameter rules core/llm/openai_rules.py knows: a
model of the user's own server at its URL, and OpenAI's own API (no URL, or
api.openai.com), since issue 28. Every other route, and every call when
RLMSTUDIO_DESKTOP_HTTP=litellm is set, goes through litellm. core/llm/client.py decides, and
owns retries, the meter and the typed errors; this module is one attempt.

The request is what litellm sends for the same call (tests compare the two bodies on
the scripted server): model without its "openai/" prefix, messages, max_tokens,
temperature and reasoning_effort when given, stream and stream_options.include_usage
when streamed, then OpenAI's per-model rules (openai_rules.apply: max_completion_tokens,
no temperature where it is refused...); `Authorization: Bearer KEY`.

Transport: aiohttp, one session per event loop (what litellm itself uses
underneath for these calls). Not httpx: httpcore's connection pool walks every
connection for every request it places, and 64 concurrent calls over reused
keep-alive connections took 2-6 s instead of 0.6 s (measured: 1.9 million
is_idle calls in one such round).

`DIRECT` is this route's core/llm/transport.py Transport; every failure leaves
`send` as a typed LLMError (transport.typed_errors). Underneath, the request
functions raise what `core.llm.errors.classify` knows: aiohttp's own transport
errors (ClientConnectorError, ServerDisconnectedError, ClientPayloadError...),
`HTTPStatusError` for a status other than 200 (its text is the server's own
error message, its `response` has `status_code` and `headers`),
json.JSONDecodeError for a body that is not JSON; and the contract's own:
`BadReply` for a 200 that is not a complete reply (not an object, no choices, a
stream that stopped without [DONE] and without a finish reason), `ErrorBody` for
`{"error": ...}` as a body or a stream event.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from core.identity import env
from core.llm import openai_rules
from core.llm.transport import BadReply, CallbackFailed, ErrorBody, HTTPStatusError, Reply, Request, \
    error_message, error_status, typed_errors

if TYPE_CHECKING:
    import aiohttp

PREFIX = "openai/"
FORCE_LITELLM = "HTTP"          # RLMSTUDIO_DESKTOP_HTTP=litellm: every call through litellm (core/identity.py)
MAX_ERROR_BODY = 64 * 1024

_sessions: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession]" = \
    weakref.WeakKeyDictionary()
_closers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]" = weakref.WeakKeyDictionary()


def _aiohttp() -> Any:
    """aiohttp, imported at the first request, not with this module: its import is 0.15-0.5 s
    (it builds two SSL contexts from the system's certificates), which a run's start then
    spends while its REPL worker starts beside the first call instead of before both. The
    CLI's `ask` starts it in a thread at launch (app/main.py)."""
    import aiohttp
    return aiohttp


def serves(model: str, api_base: str | None) -> bool:
    """True when this module sends `model`'s calls (see the module docstring)."""
    if (env(FORCE_LITELLM) or "").strip().lower() == "litellm":
        return False
    name = routed_name(model)
    return name is not None and openai_rules.family(name) is not None


def routed_name(model: str) -> str | None:
    """The name sent for `model` on this route: "openai/NAME" -> NAME; a bare name of an
    OpenAI chat model in litellm's map -> itself (litellm sends it to OpenAI); else None."""
    if model.startswith(PREFIX):
        return model[len(PREFIX):] or None
    if "/" not in model and openai_rules.family(model) not in ("plain", None):
        return model
    return None


def body(model: str, messages: list[dict], *, max_tokens: int, stream: bool,
         temperature: float | None = None, reasoning_effort: str | None = None) -> dict[str, Any]:
    name = model.removeprefix(PREFIX)
    payload: dict[str, Any] = {"model": name, "messages": messages}
    if temperature is not None:
        payload["temperature"] = temperature
    payload["max_tokens"] = max_tokens
    if reasoning_effort:
        payload["reasoning_effort"] = reasoning_effort
    if stream:
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
    return openai_rules.apply(name, payload)


class DirectTransport:
    """core/llm/transport.py's Transport over this module."""
    name = "direct"
    reports_sent = True

    async def prepare(self) -> None:
        return None

    async def send(self, request: Request, on_piece: Callable[[str], Any]) -> Reply:
        payload = body(request.model, request.messages, max_tokens=request.max_tokens,
                       stream=request.stream, temperature=request.temperature,
                       reasoning_effort=request.reasoning_effort)
        sent = headers(request.api_key or "")
        if openai_rules.is_openai(request.api_base):
            sent.update(openai_rules.openai_headers())
        base = request.api_base or openai_rules.openai_api()
        with typed_errors(request):
            async with asyncio.timeout(request.timeout_s):
                if request.stream:
                    return await stream(base, sent, payload, request.timeout_s, on_piece, request.on_sent)
                return await post(base, sent, payload, request.timeout_s, request.on_sent)


DIRECT = DirectTransport()


def url_for(api_base: str) -> str:
    return api_base.rstrip("/") + "/chat/completions"


def headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json",
            "Accept": "application/json", "User-Agent": "rlm-studio"}


def session() -> aiohttp.ClientSession:
    """The connection pool of the running event loop (one per loop, like litellm's). No limit
    on connections: the engine's concurrency setting bounds the calls in flight. Not
    aiohttp's trust_env: it looks up ~/.netrc and the proxy variables in a thread for every
    request (two thread hops per call, most of the CPU the pool thread used in a 512-call
    fan-out), and a ~/.netrc entry for the host would clash with our Authorization header.
    The proxy is `proxy_for(url)`, from the environment, resolved once per host."""
    loop = asyncio.get_running_loop()
    found = _sessions.get(loop)
    if found is None or found.closed:
        aiohttp = _aiohttp()
        found = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=30.0),
                                      timeout=aiohttp.ClientTimeout(total=None), trust_env=False)
        _sessions[loop] = found
        _close_with_the_loop(loop, found)
    return found


_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
_proxies: dict[tuple, str | None] = {}


def proxy_for(url: str) -> str | None:
    """The proxy a request to `url` goes through: HTTP(S)_PROXY / ALL_PROXY unless NO_PROXY
    covers the host; None for none. Remembered per scheme, host and the variables' values.

    NO_PROXY follows urllib's rules (what aiohttp's trust_env uses: `*`, host names with or
    without a leading dot, matching the host and its subdomains, an optional :port) plus
    CIDR entries (`10.0.0.0/8`, `fd00::/8`) for IP hosts, the way curl and requests read
    them. Neither urllib nor httpx does: urllib never matches them, httpx matches only the
    network's own address (`all://10.0.0.0` with a path `/8`), so without this a lab URL
    under NO_PROXY=10.0.0.0/8 would go to the corporate proxy, prompts and key included."""
    from urllib.parse import urlsplit
    from urllib.request import getproxies, proxy_bypass
    parts = urlsplit(url)
    env = tuple(os.environ.get(n) or os.environ.get(n.upper()) for n in _PROXY_VARS)
    key = (parts.scheme, parts.hostname, env)
    if key not in _proxies:
        found = getproxies()
        proxy = found.get(parts.scheme) or found.get("all")
        if proxy and parts.hostname and (proxy_bypass(parts.hostname)
                                         or in_cidr(parts.hostname, env[-1] or "")):
            proxy = None
        _proxies[key] = proxy or None
    return _proxies[key]


def in_cidr(host: str, no_proxy: str) -> bool:
    """True when `host` is an IP address inside a CIDR entry of `no_proxy`."""
    import ipaddress
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False                      # a name: urllib's rules decide
    for entry in no_proxy.split(","):
        entry = entry.strip()
        if "/" not in entry:
            continue
        try:
            network = ipaddress.ip_network(entry.strip("[]"), strict=False)
        except ValueError:
            continue
        if address.version == network.version and address in network:
            return True
    return False


async def close_clients() -> None:
    """Close the running loop's pool (before the loop ends)."""
    loop = asyncio.get_running_loop()
    found = _sessions.pop(loop, None)
    gen = _closers.pop(loop, None)
    if found is not None:
        await found.close()
    if gen is not None:
        await gen.aclose()


def _close_with_the_loop(loop: asyncio.AbstractEventLoop, found: aiohttp.ClientSession) -> None:
    """Close the pool when a loop run by asyncio.run (or asyncio.Runner) ends, even if nobody
    called close_clients(): those close every live async generator before closing the loop
    (shutdown_asyncgens), and this one's `finally` closes the session."""
    async def closer() -> AsyncIterator[None]:
        try:
            yield
        finally:
            # Only on its own running loop (asyncio.run's shutdown_asyncgens): a generator
            # dropped with a loop that ended otherwise is closed without a loop to await on.
            if not found.closed and asyncio._get_running_loop() is loop:
                await found.close()

    gen = closer()
    _closers[loop] = gen                  # kept alive until the loop ends
    loop.create_task(gen.__anext__())     # its first step registers it with the loop


async def post(api_base: str, sent: dict[str, str], payload: dict[str, Any], timeout_s: float,
               on_sent: Callable[[], None] | None = None) -> Reply:
    """A call without streaming; `sent`: the request's headers (`headers(key)` and more);
    `on_sent()` once the whole request is on the connection."""
    return await _cancelled_once(_post(api_base, sent, payload, timeout_s, on_sent))


async def stream(api_base: str, sent: dict[str, str], payload: dict[str, Any], timeout_s: float,
                 on_piece: Callable[[str], Any], on_sent: Callable[[], None] | None = None) -> Reply:
    """A streamed call: `on_piece(text)` for every piece of the reply as it arrives. When it
    returns True the response is closed at once (the server sees the connection go and stops
    generating) and the Reply has what arrived, finish_reason "cut", no usage."""
    return await _cancelled_once(_stream(api_base, sent, payload, timeout_s, on_piece, on_sent))


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


async def _post(api_base: str, sent: dict[str, str], payload: dict[str, Any], timeout_s: float,
                on_sent: Callable[[], None] | None) -> Reply:
    url = url_for(api_base)
    async with session().post(url, data=_data(payload, on_sent), headers=sent, proxy=proxy_for(url),
                              timeout=_aiohttp().ClientTimeout(total=timeout_s)) as response:
        if response.status != 200:
            _raise_status(response, await response.content.read(MAX_ERROR_BODY))
        data = json.loads(await response.read())
    return _completion(data)


def _completion(data: Any) -> Reply:
    """The Reply of a chat.completion body; BadReply / ErrorBody when it is not one."""
    if not isinstance(data, dict):
        raise BadReply(f"the body is a JSON {type(data).__name__}, not an object")
    if "error" in data and data["error"] is not None:
        raise ErrorBody(error_message(data), error_status(data["error"]), in_stream=False)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadReply("the body has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise BadReply("the first choice has no message")
    content = message.get("content")
    return Reply(content if isinstance(content, str) else "", choices[0].get("finish_reason"),
                 *_usage(data.get("usage")))


async def _stream(api_base: str, sent: dict[str, str], payload: dict[str, Any], timeout_s: float,
                  on_piece: Callable[[str], Any], on_sent: Callable[[], None] | None) -> Reply:
    finish: str | None = None
    usage: tuple[int | None, int | None] = (None, None)
    parts: list[str] = []
    url = url_for(api_base)
    async with session().post(url, data=_data(payload, on_sent), headers=sent, proxy=proxy_for(url),
                              timeout=_aiohttp().ClientTimeout(total=timeout_s)) as response:
        if response.status != 200:
            _raise_status(response, await response.content.read(MAX_ERROR_BODY))
        ended = _Ended()
        async for event in _events(response, ended):
            if not isinstance(event, dict):
                raise BadReply(f"a stream event is a JSON {type(event).__name__}, not an object")
            if event.get("error") is not None:
                raise ErrorBody(error_message(event), None, in_stream=True)
            choices = event.get("choices") or ()
            first = choices[0] if isinstance(choices, list) and choices else None
            if isinstance(first, dict):
                ended.choices = True
                delta = first.get("delta")
                piece = delta.get("content") if isinstance(delta, dict) else None
                if isinstance(piece, str) and piece:
                    parts.append(piece)
                    if _hand_over(on_piece, piece):
                        response.close()      # not release(): the connection must not be reused
                        return Reply("".join(parts), "cut", None, None)
                finish = first.get("finish_reason") or finish
            if event.get("usage"):
                usage = _usage(event["usage"])
    if not ended.done and finish is None:
        raise BadReply("the stream ended without a finish reason and without [DONE]")
    if not ended.choices:
        raise BadReply("the stream carried no choices")
    return Reply("".join(parts), finish, *usage)


def _hand_over(on_piece: Callable[[str], Any], piece: str) -> bool:
    """True: the caller has read enough (the stream is closed there)."""
    try:
        return bool(on_piece(piece))
    except CallbackFailed:
        raise
    except Exception as exc:
        raise CallbackFailed(exc) from exc


class _Ended:
    done = False                       # `data: [DONE]` was seen
    choices = False                    # some event carried a choice


async def _events(response: aiohttp.ClientResponse, ended: _Ended) -> AsyncIterator[Any]:
    """The JSON payloads of a server-sent event stream, up to `data: [DONE]` (then
    `ended.done`). Lines are split here (aiohttp's own readline refuses lines over 64 KB;
    one event may carry a long reply)."""
    pending = b""
    async for chunk in response.content.iter_any():
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if not line.startswith(b"data:"):
                continue                  # blank separators, comments, event:/id: fields
            data = line[5:].strip()
            if data == b"[DONE]":
                ended.done = True
                return
            if data:
                yield json.loads(data)
    last = pending[5:].strip() if pending.startswith(b"data:") else b""
    if last == b"[DONE]":
        ended.done = True
    elif last:
        yield json.loads(last)


def _encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def _data(payload: dict[str, Any], on_sent: Callable[[], None] | None) -> Any:
    """The request's body; with `on_sent`, a body that calls it once aiohttp has written all of
    it to the connection (a cancel before that, e.g. while the connection is being made, sent
    the provider nothing)."""
    data = _encode(payload)
    if on_sent is None:
        return data
    global _SentBody
    if _SentBody is None:
        from aiohttp.payload import BytesPayload

        class SentBody(BytesPayload):
            def __init__(self, value: bytes, on_sent: Callable[[], None]) -> None:
                super().__init__(value, content_type="application/json")
                self.on_sent = on_sent

            async def write_with_length(self, writer: Any, content_length: int | None) -> None:
                await super().write_with_length(writer, content_length)
                self.on_sent()

        _SentBody = SentBody
    return _SentBody(data, on_sent)


_SentBody: Any = None


def _usage(usage: Any) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return (int(prompt) if isinstance(prompt, (int, float)) and prompt > 0 else None,
            int(completion) if isinstance(completion, (int, float)) and completion >= 0 else None)


def _raise_status(response: aiohttp.ClientResponse, content: bytes) -> None:
    text = content[:MAX_ERROR_BODY].decode("utf-8", "replace")
    try:
        message = error_message(json.loads(text))
    except (ValueError, AttributeError):
        message = text.strip()
    raise HTTPStatusError(message or f"HTTP {response.status}", response.status, response.headers)
