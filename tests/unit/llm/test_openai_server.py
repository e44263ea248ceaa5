"""The scripted OpenAI server itself, spoken to over raw HTTP and through litellm."""

import asyncio
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urlparse

import pytest

from core.llm.litellm_import import litellm
from tests.support.openai_server import (CutStream, Delay, Hang, Malformed, Reply, ScriptedOpenAI,
                                         Status)

USER = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "What is 2+2?"}]


def post(server, model="m", messages=USER, key="sk-test", timeout=5, **extra):
    body = json.dumps({"model": model, "messages": messages, **extra}).encode()
    req = urllib.request.Request(server.url + "/chat/completions", data=body, headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.status, dict(resp.headers), resp.read()


def post_error(server, **kw):
    with pytest.raises(urllib.error.HTTPError) as info:
        post(server, **kw)
    err = info.value
    return err.code, dict(err.headers), json.loads(err.read())


def stream_events(server, model="m", include_usage=True):
    """Raw SSE events of a streamed request, as decoded JSON (or the raw line)."""
    url = urlparse(server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
    body = {"model": model, "messages": USER, "stream": True}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    conn.request("POST", url.path + "/chat/completions", json.dumps(body),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("Content-Type") == "text/event-stream"
    text = resp.read().decode()
    conn.close()
    events = [e[len("data: "):] for e in text.split("\n\n") if e]
    return [e if e == "[DONE]" else json.loads(e) for e in events]


def test_plain_reply_with_default_usage(openai_server):
    openai_server.script("m", replies=["four"])
    status, _, raw = post(openai_server, max_tokens=50)
    data = json.loads(raw)
    assert status == 200 and data["choices"][0]["message"]["content"] == "four"
    assert data["choices"][0]["finish_reason"] == "stop"
    # "be brief" + "What is 2+2?" = 8 + 12 chars -> 5 tokens; "four" -> 1
    assert data["usage"] == {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
    [req] = openai_server.requests_for("m")
    assert req.prompt == "What is 2+2?" and req.max_tokens == 50 and not req.stream
    assert req.headers["authorization"] == "Bearer sk-test" == req.headers["Authorization"]
    assert req.api_key == "sk-test" and req.finished >= req.started and req.outcome == "reply"


def test_replies_in_order_then_exhausted_and_unknown_model(openai_server):
    openai_server.script("m", replies=["one", Reply("two", finish_reason="length", usage=(7, 3))])
    assert json.loads(post(openai_server)[2])["choices"][0]["message"]["content"] == "one"
    second = json.loads(post(openai_server)[2])
    assert second["choices"][0]["finish_reason"] == "length" and second["usage"]["prompt_tokens"] == 7
    code, _, body = post_error(openai_server)
    assert code == 500 and body["error"]["message"] == "script exhausted for model m"
    code, _, body = post_error(openai_server, model="nobody")
    assert code == 404 and body["error"]["code"] == "model_not_found"


def test_fn_replies_and_custom_usage(openai_server):
    openai_server.script("sub", fn=lambda r: r.prompt.upper(), usage=lambda r, reply: (100, 200))
    data = json.loads(post(openai_server, model="sub")[2])
    assert data["choices"][0]["message"]["content"] == "WHAT IS 2+2?"
    assert data["usage"]["completion_tokens"] == 200


def test_models_list(openai_server):
    openai_server.script("a", replies=[])
    openai_server.script("b", fn=lambda r: "x")
    with urllib.request.urlopen(openai_server.url + "/models", timeout=5) as resp:
        data = json.loads(resp.read())
    assert sorted(m["id"] for m in data["data"]) == ["a", "b"]


def test_streaming_chunks_finish_reason_usage_and_done(openai_server):
    openai_server.script("m", replies=["abcdefghij" * 5, "again"], chunk_chars=8)
    events = stream_events(openai_server)
    assert events[-1] == "[DONE]"
    deltas = [e["choices"][0]["delta"].get("content", "") for e in events[:-2]]
    assert "".join(deltas) == "abcdefghij" * 5 and len([d for d in deltas if d]) == 7
    assert events[-3]["choices"][0]["finish_reason"] == "stop"
    assert events[-2]["choices"] == [] and events[-2]["usage"]["completion_tokens"] == 13
    without_usage = stream_events(openai_server, include_usage=False)
    assert all("usage" not in e for e in without_usage[:-1])


def test_require_key_gives_openai_style_401():
    with ScriptedOpenAI(require_key="sk-right") as server:
        server.script("m", fn=lambda r: "ok")
        code, _, body = post_error(server, key="sk-wrong")
        assert code == 401 and body["error"]["code"] == "invalid_api_key"
        assert post(server, key="sk-right")[0] == 200
        assert [r.status for r in server.history] == [401, 200]


def test_fail_next_comes_before_the_script(openai_server):
    openai_server.script("m", replies=["after"])
    openai_server.fail_next("m", Status(429, retry_after=1.5), Status(503, message="busy"))
    code, headers, body = post_error(openai_server)
    assert code == 429 and headers["Retry-After"] == "1.5" and body["error"]["code"] == "rate_limit_exceeded"
    code, _, body = post_error(openai_server)
    assert code == 503 and body["error"]["message"] == "busy"
    assert json.loads(post(openai_server)[2])["choices"][0]["message"]["content"] == "after"


def test_malformed_body(openai_server):
    openai_server.script("m", replies=[Malformed()])
    status, _, raw = post(openai_server)
    assert status == 200
    with pytest.raises(ValueError):
        json.loads(raw)


def test_cut_stream_and_cut_body_break_the_read(openai_server):
    openai_server.script("m", replies=[CutStream(after_chars=20), CutStream(after_chars=30)])
    url = urlparse(openai_server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
    conn.request("POST", url.path + "/chat/completions",
                 json.dumps({"model": "m", "messages": USER, "stream": True}))
    resp = conn.getresponse()
    with pytest.raises(http.client.IncompleteRead) as info:
        resp.read()
    assert b"xxxx" in info.value.partial and b"[DONE]" not in info.value.partial
    with pytest.raises(http.client.IncompleteRead):
        post(openai_server)
    assert [r.outcome for r in openai_server.history] == ["cut", "cut"]


def test_hang_records_the_client_hanging_up(openai_server):
    openai_server.script("m", replies=[Hang(5)])
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        post(openai_server, timeout=0.3)
    deadline = time.monotonic() + 3
    while openai_server.history[0].finished is None and time.monotonic() < deadline:
        time.sleep(0.02)
    [req] = openai_server.history
    assert req.disconnected and req.status is None and req.finished - req.started < 4


def test_delay_adds_latency_then_replies(openai_server):
    openai_server.script("m", replies=["late"])
    openai_server.fail_next("m", Delay(0.2))
    status, _, raw = post(openai_server)
    req = openai_server.history[0]
    assert json.loads(raw)["choices"][0]["message"]["content"] == "late"
    assert req.finished - req.started >= 0.2


def test_six_hundred_concurrent_connections(openai_server):
    openai_server.script("m", fn=lambda r: "ok", latency_s=1.0)
    url = urlparse(openai_server.url)
    body = json.dumps({"model": "m", "messages": USER})

    async def one():
        reader, writer = await asyncio.open_connection(url.hostname, url.port)
        writer.write((f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}").encode())
        await writer.drain()
        data = await reader.read()
        writer.close()
        return data

    async def main():
        return await asyncio.gather(*(one() for _ in range(600)))

    results = asyncio.run(main())
    assert all(r.startswith(b"HTTP/1.1 200") for r in results)
    assert len(openai_server.history) == 600 and openai_server.max_in_flight > 300


def test_history_is_complete_under_threads(openai_server):
    openai_server.script("m", fn=lambda r: r.prompt)
    threads = [threading.Thread(target=post, args=(openai_server,),
                                kwargs={"messages": [{"role": "user", "content": str(i)}]})
               for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(int(r.prompt) for r in openai_server.history) == list(range(40))


async def test_through_litellm_plain_and_streaming(openai_server):
    openai_server.script("m", replies=["plain reply", "streamed reply, in several chunks"], chunk_chars=5)
    lm = litellm()
    resp = await lm.acompletion(model="openai/m", api_base=openai_server.url, api_key="sk-1",
                                messages=USER, max_tokens=20)
    assert resp.choices[0].message.content == "plain reply" and resp.usage.prompt_tokens == 5
    stream = await lm.acompletion(model="openai/m", api_base=openai_server.url, api_key="sk-1",
                                  messages=USER, stream=True, stream_options={"include_usage": True})
    parts, finish, usage = [], None, None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            parts.append(chunk.choices[0].delta.content)
        if chunk.choices and chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
        usage = getattr(chunk, "usage", None) or usage
    assert "".join(parts) == "streamed reply, in several chunks" and len(parts) == 7
    assert finish == "stop" and usage.completion_tokens == 9
    assert [r.model for r in openai_server.history] == ["m", "m"]
    assert openai_server.history[1].stream and openai_server.history[0].api_key == "sk-1"
