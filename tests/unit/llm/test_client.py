"""ModelClient against the scripted server over real HTTP (litellm unmocked).

Every test runs twice: once on the direct route a model of the user's own
OpenAI-compatible server takes (core/llm/openai_http.py), once with every call
forced through litellm (RLMSTUDIO_DESKTOP_HTTP=litellm); the server's log says which
one really sent each request (its User-Agent)."""

import asyncio
import os
import time

import pytest

from core.llm.client import NO_KEY, ModelClient
from core.llm.errors import LLMError
from tests.support.openai_server import Body, CutStream, EndStream, Hang, Malformed, Reply, Status

AGENTS = {"direct": "rlm-studio", "litellm": "AsyncOpenAI/"}


@pytest.fixture(autouse=True, params=sorted(AGENTS))
def transport(request, monkeypatch, openai_server):
    if request.param == "litellm":
        monkeypatch.setenv("RLMSTUDIO_DESKTOP_HTTP", "litellm")
    else:
        monkeypatch.delenv("RLMSTUDIO_DESKTOP_HTTP", raising=False)
    yield request.param
    agents = {r.headers.get("user-agent", "") for r in openai_server.history}
    assert all(a.startswith(AGENTS[request.param]) for a in agents), agents


MESSAGES = [{"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Name a prime number."}]


def client_for(server, key="sk-test", **kw):
    kw.setdefault("backoff_base_s", 0.01)
    return ModelClient(key_for=lambda model: key, api_base_for=lambda model: server.url, **kw)


async def test_plain_call(openai_server):
    openai_server.script("m", replies=["Seven."])
    reply = await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=64)
    assert reply.text == "Seven." and reply.model == "openai/m"
    assert (reply.input_tokens, reply.output_tokens) == (9, 2)   # the server's ceil(chars / 4)
    assert reply.finish_reason == "stop" and reply.attempts == 1 and not reply.usage_estimated
    [req] = openai_server.history
    assert req.model == "m" and req.max_tokens == 64 and req.messages == MESSAGES and not req.stream


async def test_streaming_deltas_in_order_and_usage(openai_server):
    text = "Two, three, five, seven, eleven and thirteen are all prime."
    openai_server.script("m", replies=[text], chunk_chars=4)
    deltas = []
    reply = await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=64,
                                                     stream=True, on_delta=deltas.append)
    assert "".join(deltas) == text == reply.text and len(deltas) == 15
    assert (reply.input_tokens, reply.output_tokens) == (9, 15) and not reply.usage_estimated
    assert openai_server.history[0].stream
    assert openai_server.history[0].body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("stream", [False, True])
async def test_missing_usage_is_estimated(openai_server, stream):
    openai_server.script("m", fn=lambda r: "A reply without any usage numbers.", send_usage=False)
    reply = await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=64, stream=stream)
    assert reply.usage_estimated and reply.input_tokens > 0 and reply.output_tokens > 0


async def test_finish_reason_length_is_reported(openai_server):
    openai_server.script("m", replies=[Reply("cut sh", finish_reason="length")])
    reply = await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=2)
    assert reply.finish_reason == "length" and reply.text == "cut sh"


async def test_429_with_retry_after_then_success(openai_server):
    openai_server.script("m", replies=[Status(429, retry_after=0.3), "ok"])
    retries = []
    reply = await client_for(openai_server).complete(
        "openai/m", MESSAGES, max_tokens=8, on_retry=lambda n, err: retries.append((n, err)))
    first, second = openai_server.history
    assert reply.text == "ok" and reply.attempts == 2
    assert second.started - first.finished >= 0.29            # the server's wait was honoured
    [(attempt, error)] = retries
    assert attempt == 1 and error.kind == "rate_limit" and error.retry_after == 0.3


async def test_retry_after_is_capped_by_backoff_max(openai_server):
    openai_server.script("m", replies=[Status(503, retry_after=60), "ok"])
    reply = await client_for(openai_server, backoff_max_s=0.05).complete("openai/m", MESSAGES,
                                                                         max_tokens=8)
    assert reply.text == "ok" and reply.attempts == 2


async def test_500_then_success(openai_server):
    openai_server.script("m", replies=[Status(500, message="boom"), "fine"])
    reply = await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8)
    assert reply.text == "fine" and reply.attempts == 2


async def test_500_forever_gives_up_after_max_retries(openai_server):
    openai_server.script("m", fn=lambda r: Status(500, message="boom"))
    with pytest.raises(LLMError) as info:
        await client_for(openai_server, max_retries=2).complete("openai/m", MESSAGES, max_tokens=8)
    err = info.value
    assert err.kind == "server" and err.status == 500 and err.attempts == 3
    assert len(openai_server.history) == 3 and "3 attempts" in str(err)


async def test_hang_with_small_timeout_is_a_timeout(openai_server):
    openai_server.script("m", fn=lambda r: Hang(5))
    with pytest.raises(LLMError) as info:
        await client_for(openai_server, max_retries=1, timeout_s=0.3).complete(
            "openai/m", MESSAGES, max_tokens=8)
    assert info.value.kind == "timeout" and info.value.attempts == 2
    assert len(openai_server.history) == 2


async def test_stream_that_hangs_after_headers_times_out(openai_server):
    openai_server.script("m", fn=lambda r: Hang(5))
    with pytest.raises(LLMError) as info:
        await client_for(openai_server, max_retries=0, timeout_s=0.3).complete(
            "openai/m", MESSAGES, max_tokens=8, stream=True)
    assert info.value.kind == "timeout"


@pytest.mark.parametrize("stream", [False, True])
async def test_malformed_is_retried_then_an_error(openai_server, stream):
    openai_server.script("m", fn=lambda r: Malformed())
    with pytest.raises(LLMError) as info:
        await client_for(openai_server, max_retries=1).complete("openai/m", MESSAGES, max_tokens=8,
                                                               stream=stream)
    assert info.value.kind == "bad_response" and info.value.attempts == 2
    assert len(openai_server.history) == 2


async def test_malformed_then_success(openai_server):
    openai_server.script("m", replies=[Malformed(), "good"])
    reply = await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8)
    assert reply.text == "good" and reply.attempts == 2


async def test_cut_stream_is_retried_and_deltas_start_over(openai_server):
    openai_server.script("m", replies=[CutStream(after_chars=12), "the whole reply"], chunk_chars=4)
    seen = []
    reply = await client_for(openai_server).complete(
        "openai/m", MESSAGES, max_tokens=8, stream=True, on_delta=lambda d: seen.append(d),
        on_retry=lambda n, err: seen.append(f"<retry {n} {err.kind}>"))
    assert reply.text == "the whole reply" and reply.attempts == 2
    retry_at = next(i for i, s in enumerate(seen) if s.startswith("<retry"))
    assert seen[retry_at] == "<retry 1 bad_response>"
    assert "".join(seen[retry_at + 1:]) == "the whole reply"


async def test_cut_body_is_retried(openai_server):
    openai_server.script("m", replies=[CutStream(after_chars=30), "complete"])
    reply = await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8)
    assert reply.text == "complete" and reply.attempts == 2


async def test_a_stream_that_stops_without_done_or_finish_reason_is_retried(openai_server):
    # Issue 28: the direct route took the first 5 characters for the whole reply.
    openai_server.script("m", replies=[EndStream(after_chars=5), "the whole reply"])
    retries = []
    reply = await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8, stream=True,
                                                     on_retry=lambda n, err: retries.append(err.kind))
    assert (reply.text, reply.attempts, retries) == ("the whole reply", 2, ["bad_response"])


async def test_a_200_with_an_error_body_is_a_refused_request_not_an_empty_reply(openai_server):
    # Issue 28: the direct route returned "" as a successful reply.
    openai_server.script("m", replies=[Body({"error": {"message": "unknown parameter 'foo'"}}), "never"])
    with pytest.raises(LLMError) as info:
        await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8)
    assert (info.value.kind, info.value.attempts) == ("bad_request", 1)
    assert "unknown parameter 'foo'" in str(info.value) and len(openai_server.history) == 1


@pytest.mark.parametrize("body", [[], None, "hello", {"id": "no choices"}], ids=repr)
async def test_a_body_that_is_not_a_completion_is_retried(openai_server, body):
    openai_server.script("m", replies=[Body(body), "fine"])
    retries = []
    reply = await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8,
                                                     on_retry=lambda n, err: retries.append(err.kind))
    assert reply.text == "fine" and reply.attempts == 2 and len(retries) == 1


@pytest.mark.parametrize("code", [401, 403])
async def test_auth_errors_name_the_provider_and_are_not_retried(openai_server, code):
    openai_server.script("m", fn=lambda r: Status(code, message="Incorrect API key provided"))
    with pytest.raises(LLMError) as info:
        await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8)
    err = info.value
    assert err.kind == "auth" and err.status == code and err.provider == "openai"
    assert "OpenAI" in str(err) and "rlm-studio keys set openai" in str(err)
    assert "OPENAI_API_KEY" in str(err) and len(openai_server.history) == 1


@pytest.mark.parametrize("failure, kind", [
    (Status(400, message="Invalid value for 'temperature'"), "bad_request"),
    (Status(404), "bad_request"),
    (Status(400, message="This model's maximum context length is 8192 tokens. However, your "
                         "messages resulted in 9000 tokens."), "context_window"),
])
async def test_client_errors_are_not_retried(openai_server, failure, kind):
    openai_server.script("m", fn=lambda r: failure)
    with pytest.raises(LLMError) as info:
        await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8)
    assert info.value.kind == kind and info.value.attempts == 1
    assert len(openai_server.history) == 1


async def test_unreachable_server(openai_server):
    client = ModelClient(key_for=lambda m: "k", api_base_for=lambda m: "http://127.0.0.1:9/v1",
                         max_retries=1, backoff_base_s=0.01)
    with pytest.raises(LLMError) as info:
        await client.complete("openai/m", MESSAGES, max_tokens=8)
    assert info.value.kind == "unreachable" and info.value.attempts == 2


async def test_cancellation_stops_the_http_request(openai_server):
    openai_server.script("m", fn=lambda r: "too late", latency_s=10)
    task = asyncio.create_task(client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8))
    deadline = time.monotonic() + 10
    while not openai_server.history and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [req] = openai_server.history
    while req.finished is None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert req.disconnected and req.status is None      # the server saw the hang-up, sent nothing


@pytest.mark.parametrize("stream, cancels", [(True, 1), (False, 2), (True, 2)])
async def test_cancelling_a_stream_or_cancelling_twice_stops_the_request(openai_server, stream, cancels):
    # Twice: a run's Stop and its cell's cancel can reach the same call in one loop pass.
    openai_server.script("m", fn=lambda r: "x", latency_s=10)
    task = asyncio.create_task(client_for(openai_server).complete(
        "openai/m", MESSAGES, max_tokens=8, stream=stream))
    while not openai_server.history:
        await asyncio.sleep(0.02)
    for _ in range(cancels):
        task.cancel()
        await asyncio.sleep(0)
    with pytest.raises(asyncio.CancelledError):
        await task
    req = openai_server.history[0]
    deadline = time.monotonic() + 10
    while req.finished is None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert req.disconnected and req.status is None


async def test_key_goes_to_the_server_and_not_into_the_environment(openai_server):
    key = "sk-secret-key-4711"
    before = dict(os.environ)
    openai_server.script("m", replies=["ok"])
    await client_for(openai_server, key=key).complete("openai/m", MESSAGES, max_tokens=8)
    assert openai_server.history[0].headers["Authorization"] == f"Bearer {key}"
    assert key not in "".join(os.environ.values())
    assert dict(os.environ) == before


async def test_custom_endpoint_without_key_gets_a_placeholder(openai_server):
    openai_server.script("m", replies=["ok"])
    await client_for(openai_server, key=None).complete("openai/m", MESSAGES, max_tokens=8)
    assert openai_server.history[0].api_key == NO_KEY


async def test_temperature_reaches_the_server(openai_server):
    openai_server.script("m", replies=["ok"])
    await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8, temperature=0.25)
    assert openai_server.history[0].body["temperature"] == 0.25


async def test_a_failing_on_delta_is_not_retried(openai_server):
    openai_server.script("m", replies=["some text", "more"])

    def explode(delta):
        raise KeyError("caller bug")

    with pytest.raises(KeyError):
        await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=8, stream=True,
                                                 on_delta=explode)
    assert len(openai_server.history) == 1


async def test_three_hundred_concurrent_calls(openai_server):
    openai_server.script("sub", fn=lambda r: "echo " + r.prompt, latency_s=0.5)
    client = client_for(openai_server)
    replies = await asyncio.gather(*(
        client.complete("openai/sub", [{"role": "user", "content": f"q{i}"}], max_tokens=8)
        for i in range(300)))
    assert [r.text for r in replies] == [f"echo q{i}" for i in range(300)]
    assert len(openai_server.history) == 300 and openai_server.max_in_flight > 100


def test_retry_wait_backs_off_with_jitter_and_honours_retry_after():
    client = ModelClient(key_for=lambda m: None, api_base_for=lambda m: None,
                         backoff_base_s=0.5, backoff_max_s=4.0)
    waits = [[client.retry_wait(n, None) for _ in range(50)] for n in (1, 2, 3, 4, 5, 6)]
    for n, ws in enumerate(waits, start=1):
        ceiling = min(4.0, 0.5 * 2 ** (n - 1))
        assert all(ceiling / 2 <= w <= ceiling for w in ws) and len(set(ws)) > 1
    assert client.retry_wait(1, 2.5) == 2.5 and client.retry_wait(1, 100) == 4.0
