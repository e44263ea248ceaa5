"""One contract for every route to a model (core/llm/transport.py), run against both
routes on the scripted server over real HTTP: the direct client (core/llm/openai_http.py)
and litellm (core/llm/litellm_route.py), each for a model of one's own server ("openai/m" at
its URL) and for OpenAI's own API ("openai/gpt-4o-mini" without a URL: the scripted server
poses as api.openai.com through OPENAI_BASE_URL, as litellm reads it; no internet).
Each case calls `transport.send` for one attempt;
retries, meters and cancellation above it are test_client.py's (which also runs on both).

Where litellm breaks the contract and cannot be brought to it without patching litellm,
the case is a strict xfail naming what litellm does instead (so a litellm release that
starts to comply turns it red, and the list below stays true)."""

import asyncio
import time

import pytest

from core.llm import openai_http
from core.llm.errors import LLMError
from core.llm.litellm_route import LITELLM
from core.llm.client import transport_for
from core.llm.transport import CallbackFailed, Request
from tests.support.openai_server import Body, CutStream, EndStream, Hang, Malformed, Reply, Status

MESSAGES = [{"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Name a prime number, käse."}]
ROUTES = {"direct": openai_http.DIRECT, "litellm": LITELLM}
AGENTS = {"direct": "rlm-studio", "litellm": "AsyncOpenAI/"}
PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


class Route(str):
    """A route ("direct", "litellm") and what it is sent to: a server of one's own, or
    OpenAI's own API (the scripted server posing as it)."""
    transport: object
    model: str                     # the routed model name
    scripted: str                  # the name the server scripts it under
    openai: bool

    def __new__(cls, name: str, openai: bool, monkeypatch) -> "Route":
        route = super().__new__(cls, f"{name}-openai" if openai else name)
        route.transport, route.openai, route.monkeypatch = ROUTES[name], openai, monkeypatch
        route.scripted = "gpt-4o-mini" if openai else "m"
        route.model = f"openai/{route.scripted}"
        return route


@pytest.fixture(params=[(r, o) for r in sorted(ROUTES) for o in (False, True)],
                ids=lambda p: f"{p[0]}-openai" if p[1] else p[0])
def route(request, openai_server, monkeypatch):
    name, openai = request.param
    broken = request.node.get_closest_marker("litellm_breaks")
    if broken is not None and name == "litellm":
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"litellm: {broken.args[0]}"))
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)
    for var in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_ORGANIZATION", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(var, raising=False)
    yield Route(name, openai, monkeypatch)
    agents = {r.headers.get("user-agent", "") for r in openai_server.history}
    assert all(a.startswith(AGENTS[name]) for a in agents), agents


def litellm_breaks(reason):
    """Mark a case litellm's route fails (a strict xfail there): litellm does `reason` instead."""
    return pytest.mark.litellm_breaks(reason)


def request_for(route, server, stream=False, **kw):
    kw.setdefault("max_tokens", 64)
    kw.setdefault("timeout_s", 30.0)
    kw.setdefault("api_key", "sk-test")
    api_base = kw.pop("api_base", server.url)
    if route.openai:                  # OpenAI's own API: no URL, OPENAI_BASE_URL says where it is
        route.monkeypatch.setenv("OPENAI_BASE_URL", api_base)
        api_base = None
    return Request(route.model, MESSAGES, stream=stream, api_base=api_base, **kw)


async def send(route, request, pieces=None):
    await route.transport.prepare()
    return await route.transport.send(request, (pieces if pieces is not None else []).append)


async def failure(route, server, action, stream, **kw):
    server.script(route.scripted, replies=[action])
    pieces = []
    with pytest.raises(LLMError) as info:
        await send(route, request_for(route, server, stream, **kw), pieces)
    return info.value, pieces


def test_both_routes_are_transports(monkeypatch):
    monkeypatch.delenv("RLMSTUDIO_DESKTOP_HTTP", raising=False)
    assert transport_for("openai/qwen3", "http://127.0.0.1:8000/v1") is openai_http.DIRECT
    assert transport_for("anthropic/claude-haiku-4-5", None) is LITELLM
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HTTP", "litellm")
    assert transport_for("openai/qwen3", "http://127.0.0.1:8000/v1") is LITELLM
    assert {ROUTES[name].name for name in ROUTES} == set(ROUTES)


# ---------------------------------------------------------------- what is sent

@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("extra", [{}, {"temperature": 0.3, "reasoning_effort": "low"}])
async def test_the_body_and_headers(route, openai_server, stream, extra):
    openai_server.script(route.scripted, replies=["Seven."])
    await send(route, request_for(route, openai_server, stream, **extra))
    [seen] = openai_server.history
    expected = {"model": route.scripted, "messages": MESSAGES, **({"temperature": 0.3} if extra else {}),
                "max_tokens": 64, **({"reasoning_effort": "low"} if extra and not route.openai else {})}
    # (gpt-4o-mini takes no reasoning_effort: both routes drop it, core/llm/openai_rules.py)
    if stream:
        expected |= {"stream": True, "stream_options": {"include_usage": True}}
    assert seen.body == expected
    assert seen.headers["authorization"] == "Bearer sk-test"
    assert seen.headers["content-type"] == "application/json"


# ---------------------------------------------------------------- what comes back

@pytest.mark.parametrize("stream", [False, True])
async def test_text_finish_reason_and_usage(route, openai_server, stream):
    openai_server.script(route.scripted, replies=[Reply("cut sh", finish_reason="length", usage=(11, 3))])
    reply = await send(route, request_for(route, openai_server, stream))
    assert (reply.text, reply.finish_reason, reply.prompt_tokens, reply.completion_tokens) == \
           ("cut sh", "length", 11, 3)


async def test_streamed_pieces_arrive_in_order(route, openai_server):
    text = "Two, three, five, seven, eleven and thirteen are all prime."
    openai_server.script(route.scripted, replies=[text], chunk_chars=4)
    pieces = []
    reply = await send(route, request_for(route, openai_server, True), pieces)
    assert "".join(pieces) == text == reply.text and len(pieces) == 15


@pytest.mark.parametrize("stream", [False, True])
async def test_no_usage_from_the_server_is_none_not_a_guess(route, openai_server, stream):
    openai_server.script(route.scripted, replies=["A reply without usage."], send_usage=False)
    reply = await send(route, request_for(route, openai_server, stream))
    assert reply.text == "A reply without usage." and reply.prompt_tokens is None


# ---------------------------------------------------------------- every failure kind

STATUS_CASES = [
    (Status(429, retry_after=0.2), "rate_limit", 429, True),
    (Status(500, message="boom"), "server", 500, True),
    (Status(503), "server", 503, True),
    (Status(401), "auth", 401, False),
    (Status(403), "auth", 403, False),
    (Status(404), "bad_request", 404, False),
    (Status(400, message="This model's maximum context length is 10 tokens"), "context_window", 400, False),
    (Status(400, message="bad thing"), "bad_request", 400, False),
    pytest.param(Status(422, message="unprocessable"), "bad_request", 422, False,
                 marks=litellm_breaks("a 422 is sent again by litellm itself (drop_params), and its "
                                      "second answer is what the caller gets")),
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("action, kind, status, retryable", STATUS_CASES, ids=repr)
async def test_an_error_status(route, openai_server, stream, action, kind, status, retryable):
    error, _ = await failure(route, openai_server, action, stream)
    assert (error.kind, error.status, error.retryable) == (kind, status, retryable)
    assert len(openai_server.history) == 1                 # one attempt is one request
    assert error.retry_after == action.retry_after
    if action.message:
        assert action.message in error.message


@pytest.mark.parametrize("stream", [False, True])
async def test_a_body_that_is_not_json(route, openai_server, stream):
    error, _ = await failure(route, openai_server, Malformed(), stream)
    assert (error.kind, error.status, error.retryable) == ("bad_response", None, True)


@pytest.mark.parametrize("stream", [False, True])
async def test_a_reply_cut_mid_way_keeps_what_came(route, openai_server, stream):
    error, pieces = await failure(route, openai_server, CutStream(after_chars=12), stream)
    assert (error.kind, error.status, error.retryable) == ("bad_response", None, True)
    if stream:
        assert "".join(pieces) == "x" * 12          # the client estimates from what came


async def test_a_stream_that_ends_without_done_or_finish_reason_is_not_a_reply(route, openai_server):
    # Issue 28: the direct route returned the 5 characters as a complete reply.
    error, pieces = await failure(route, openai_server, EndStream(after_chars=5), True)
    assert (error.kind, error.status, error.retryable) == ("bad_response", None, True)
    assert "".join(pieces) == "xxxxx"


ERROR_BODY = {"error": {"message": "unknown parameter 'foo'", "type": "invalid_request_error"}}


async def test_a_200_with_an_error_body_is_a_refused_request(route, openai_server):
    # Issue 28: the direct route returned an empty success.
    error, _ = await failure(route, openai_server, Body(ERROR_BODY), False)
    assert (error.kind, error.retryable) == ("bad_request", False)
    assert "unknown parameter 'foo'" in error.message


async def test_a_200_with_an_error_body_follows_its_code(route, openai_server):
    body = {"error": {"message": "slow down", "code": 429}}
    error, _ = await failure(route, openai_server, Body(body), False)
    assert (error.kind, error.status, error.retryable) == ("rate_limit", 429, True)


async def test_an_error_event_in_a_stream_is_a_server_error(route, openai_server):
    error, _ = await failure(route, openai_server, Body({"error": {"message": "KV cache full"}}), True)
    assert (error.kind, error.status, error.retryable) == ("server", None, True)
    assert "KV cache full" in error.message


NOT_OBJECTS = [[], None, "hello", 7]


@pytest.mark.parametrize("value", NOT_OBJECTS, ids=repr)
async def test_a_body_that_is_not_an_object(route, openai_server, value):
    error, _ = await failure(route, openai_server, Body(value), False)
    assert (error.kind, error.status, error.retryable) == ("bad_response", None, True)


@pytest.mark.parametrize("value", [
    [], "hello", 7,
    pytest.param(None, marks=litellm_breaks("`data: null` is skipped: an empty success")),
    {"id": "x"}], ids=repr)
async def test_a_stream_event_that_is_not_a_chunk(route, openai_server, value):
    error, _ = await failure(route, openai_server, Body(value), True)
    assert (error.kind, error.status, error.retryable) == ("bad_response", None, True)


@pytest.mark.parametrize("value", [{"id": "x"}, {"choices": []}, {"choices": "x"}, {"choices": [5]},
                                   {"choices": [{"message": "x"}]}], ids=repr)
async def test_a_completion_without_a_choice(route, openai_server, value):
    error, _ = await failure(route, openai_server, Body(value), False)
    assert (error.kind, error.status, error.retryable) == ("bad_response", None, True)


@pytest.mark.parametrize("stream", [False, True])
async def test_a_server_that_hangs_times_out(route, openai_server, stream):
    error, _ = await failure(route, openai_server, Hang(5), stream, timeout_s=0.3)
    assert (error.kind, error.retryable) == ("timeout", True)


async def test_nobody_listening_is_unreachable(route, openai_server):
    with pytest.raises(LLMError) as info:
        await send(route, request_for(route, openai_server, api_base="http://127.0.0.1:9/v1"))
    assert (info.value.kind, info.value.status, info.value.retryable) == ("unreachable", None, True)


# ---------------------------------------------------------------- the caller's side

async def test_a_failing_callback_is_the_callers_error(route, openai_server):
    openai_server.script(route.scripted, replies=["some text"])

    def explode(piece):
        raise CallbackFailed(KeyError("caller bug"))

    await route.transport.prepare()
    with pytest.raises(CallbackFailed) as info:
        await route.transport.send(request_for(route, openai_server, True), explode)
    assert isinstance(info.value.error, KeyError)


@pytest.mark.parametrize("stream", [False, True])
async def test_cancelling_closes_the_request(route, openai_server, stream):
    openai_server.script(route.scripted, fn=lambda r: "late", latency_s=10)
    task = asyncio.create_task(send(route, request_for(route, openai_server, stream)))
    while not openai_server.history:
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [seen] = openai_server.history
    deadline = time.monotonic() + 10
    while seen.finished is None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert seen.disconnected and seen.status is None


# ---------------------------------------------------------------- proxies

async def test_a_proxy_from_the_environment_is_used(route, openai_server, monkeypatch):
    openai_server.script(route.scripted, fn=lambda r: "direct")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")            # nothing listens there
    with pytest.raises(LLMError) as info:
        await send(route, request_for(route, openai_server))
    assert info.value.kind == "unreachable" and openai_server.history == []


@pytest.mark.parametrize("no_proxy", [
    "127.0.0.1", "localhost,127.0.0.1", "*",
    pytest.param("127.0.0.0/8", marks=litellm_breaks("CIDR NO_PROXY entries are not matched "
                                                     "(urllib's rules): the call goes to the proxy")),
    pytest.param("10.0.0.0/8, 127.0.0.1/32", marks=litellm_breaks("CIDR NO_PROXY entries are not "
                                                                 "matched")),
])
async def test_no_proxy_bypasses_it(route, openai_server, monkeypatch, no_proxy):
    openai_server.script(route.scripted, fn=lambda r: "direct")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    reply = await send(route, request_for(route, openai_server))
    assert reply.text == "direct" and len(openai_server.history) == 1
