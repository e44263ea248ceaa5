"""The direct route to the user's own OpenAI-compatible server (core/llm/openai_http.py):
which calls take it, and that it sends what litellm sends and fails the way litellm fails,
both checked against the scripted server over real HTTP in the same test."""

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.llm import openai_http
from core.llm.client import ModelClient, needs_litellm
from core.config import RunConfig
from core.llm.errors import LLMError
from tests.support.openai_server import CutStream, Malformed, Status

ROOT = Path(__file__).resolve().parents[3]
MESSAGES = [{"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Name a prime number, käse."}]


def client_for(server, **kw):
    kw.setdefault("backoff_base_s", 0.01)
    return ModelClient(key_for=lambda model: "sk-test", api_base_for=lambda model: server.url, **kw)


async def through(route, monkeypatch, call):
    if route == "litellm":
        monkeypatch.setenv("RLMSTUDIO_DESKTOP_HTTP", "litellm")
    else:
        monkeypatch.delenv("RLMSTUDIO_DESKTOP_HTTP", raising=False)
    try:
        return await call()
    finally:
        monkeypatch.delenv("RLMSTUDIO_DESKTOP_HTTP", raising=False)


@pytest.mark.parametrize("model, api_base, direct", [
    ("openai/qwen3", "http://127.0.0.1:11434/v1", True),
    ("openai/qwen3", "https://lab.example.org/v1", True),
    ("openai/gpt-4o", "https://api.openai.com/v1", True),         # OpenAI's own API (issue 28)
    ("openai/gpt-4o", "https://key@API.OPENAI.COM:443/v1", True),
    ("openai/gpt-4o", None, True),
    ("gpt-4o-mini", None, True),                                  # a bare OpenAI name: litellm's openai
    ("openai/o4-mini", None, True),
    ("openai/gpt-5-nano", None, True),
    ("openai/gpt-5.1", None, False),                              # rules only litellm knows
    ("openai/gpt-5-chat-latest", "https://api.openai.com/v1", False),
    ("openai/gpt-4o-search-preview", None, False),
    ("openai/gpt-5.1", "http://127.0.0.1:8000/v1", False),        # by name, whatever the URL (as litellm)
    ("claude-haiku-4-5", None, False),
    ("anthropic/claude-haiku-4-5", "http://127.0.0.1:8000", False),
    ("ollama/llama3", "http://127.0.0.1:11434", False),
    ("openai/", "http://127.0.0.1:8000", False),
])
def test_which_calls_go_direct(model, api_base, direct, monkeypatch):
    monkeypatch.delenv("RLMSTUDIO_DESKTOP_HTTP", raising=False)
    assert openai_http.serves(model, api_base) is direct
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HTTP", "litellm")
    assert openai_http.serves(model, api_base) is False


def test_needs_litellm_looks_at_every_model_of_the_run(monkeypatch):
    monkeypatch.delenv("RLMSTUDIO_DESKTOP_HTTP", raising=False)
    local = RunConfig(root_model="openai/big", sub_model="openai/small", api_base="http://127.0.0.1:8088/v1")
    assert not needs_litellm(local)
    assert needs_litellm(RunConfig(root_model="openai/big", sub_model="anthropic/claude-haiku-4-5",
                                   api_base="http://127.0.0.1:8088/v1", sub_api_base=None))
    extra = RunConfig(root_model="openai/big", sub_model="openai/small", api_base="http://127.0.0.1:8088/v1",
                      sub_call_models={"gpt": ("openai/gpt-5.1", None)})
    assert needs_litellm(extra)                     # a model whose rules only litellm knows
    openai = RunConfig(root_model="openai/gpt-4o", sub_model="openai/gpt-4o-mini")
    assert not needs_litellm(openai)                # OpenAI's own API is on the direct route


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("extra", [{}, {"temperature": 0.3, "reasoning_effort": "low"}])
async def test_the_request_is_the_one_litellm_sends(openai_server, monkeypatch, stream, extra):
    openai_server.script("m", fn=lambda r: "Seven.")
    replies = {}
    for route in ("direct", "litellm"):
        replies[route] = await through(route, monkeypatch, lambda: client_for(openai_server).complete(
            "openai/m", MESSAGES, max_tokens=64, stream=stream, **extra))
    direct, via_litellm = openai_server.history
    assert direct.headers["user-agent"] == "rlm-studio"
    assert via_litellm.headers["user-agent"].startswith("AsyncOpenAI/")
    assert direct.body == via_litellm.body
    assert direct.headers["authorization"] == via_litellm.headers["authorization"] == "Bearer sk-test"
    assert direct.headers["content-type"] == via_litellm.headers["content-type"] == "application/json"
    a, b = replies["direct"], replies["litellm"]
    assert (a.text, a.input_tokens, a.output_tokens, a.finish_reason, a.usage_estimated) == \
           (b.text, b.input_tokens, b.output_tokens, b.finish_reason, b.usage_estimated)


LITELLM_NOISE = re.compile(r"(?:(?:litellm\.)?[A-Za-z]+Error: )+OpenAIException - ")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("failure", [
    Status(429, retry_after=0.2), Status(500, message="boom"), Status(503), Status(401), Status(403),
    Status(404), Status(400, message="This model's maximum context length is 10 tokens"),
    Status(400, message="bad thing"), Malformed(),
    CutStream(after_chars=3)], ids=repr)
async def test_failures_are_the_errors_litellm_gives(openai_server, monkeypatch, stream, failure):
    errors = {}
    for route in ("direct", "litellm"):
        openai_server.script("m", replies=[failure])
        with pytest.raises(LLMError) as info:
            await through(route, monkeypatch, lambda: client_for(openai_server, max_retries=0).complete(
                "openai/m", MESSAGES, max_tokens=5, stream=stream))
        errors[route] = info.value
    a, b = errors["direct"], errors["litellm"]
    assert (a.kind, a.status, a.retry_after, a.retryable) == (b.kind, b.status, b.retry_after, b.retryable)
    # the same sentence; litellm adds its exception classes' names before the server's words
    assert a.message == LITELLM_NOISE.sub("", b.message)


async def test_a_422_is_refused_not_retried(openai_server):
    # The one place the routes differ: litellm turns a 422 into a retried "server error 500".
    openai_server.script("m", replies=[Status(422, message="unprocessable"), "never"])
    with pytest.raises(LLMError) as info:
        await client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=5)
    assert (info.value.kind, info.value.status, info.value.attempts) == ("bad_request", 422, 1)
    assert "(HTTP 422): unprocessable" in info.value.message and len(openai_server.history) == 1


async def test_unreachable_is_the_same_on_both_routes(monkeypatch):
    errors = {}
    for route in ("direct", "litellm"):
        client = ModelClient(key_for=lambda m: "k", api_base_for=lambda m: "http://127.0.0.1:9/v1",
                             max_retries=0)
        with pytest.raises(LLMError) as info:
            await through(route, monkeypatch, lambda: client.complete("openai/m", MESSAGES, max_tokens=5))
        errors[route] = info.value
    assert errors["direct"].kind == errors["litellm"].kind == "unreachable"
    assert errors["direct"].message == errors["litellm"].message


async def test_an_error_event_inside_a_stream_is_a_server_error_and_retried(openai_server):
    # A server that fails after it began to stream sends the error as an event (vLLM, llama.cpp).
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    calls = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            calls.append(self.path)
            events = ([{"error": {"message": "the KV cache is full", "code": 503}}] if len(calls) == 1 else
                      [{"choices": [{"delta": {"content": "fine"}, "finish_reason": "stop"}]},
                       {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}])
            body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    retried = []
    try:
        client = ModelClient(key_for=lambda m: None, api_base_for=lambda m: f"http://127.0.0.1:{server.server_port}/v1",
                             backoff_base_s=0.01)
        reply = await client.complete("openai/m", MESSAGES, max_tokens=5, stream=True,
                                      on_retry=lambda n, e: retried.append(e))
    finally:
        server.shutdown()
    assert reply.text == "fine" and (reply.input_tokens, reply.output_tokens) == (3, 1)
    assert calls == ["/v1/chat/completions"] * 2
    [error] = retried
    assert error.kind == "server" and "the KV cache is full" in error.message


async def test_cancelling_closes_the_connection_and_the_pool_closes(openai_server):
    openai_server.script("m", fn=lambda r: "late", latency_s=10)
    task = asyncio.create_task(client_for(openai_server).complete("openai/m", MESSAGES, max_tokens=5,
                                                                  stream=True))
    while not openai_server.history:
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pool = openai_http.session()
    await openai_http.close_clients()
    assert pool.closed and openai_http.session() is not pool
    await openai_http.close_clients()


FIRST_CALL_WITHOUT_LITELLM = r"""
import asyncio, importlib.machinery, sys

class Refuse:                            # litellm can be found (its price map file too),
    def create_module(self, spec):       # but importing it fails: this run must not need it
        return None
    def exec_module(self, module):
        raise ImportError("litellm is blocked in this test")

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] != "litellm":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = Refuse()
        return spec

sys.meta_path.insert(0, Block())
from core.llm.client import ModelClient
from core.llm.pricing import PriceBook
client = ModelClient(key_for=lambda m: "k", api_base_for=lambda m: sys.argv[1])
reply = asyncio.run(client.complete("openai/m", [{"role": "user", "content": "hi"}], max_tokens=5,
                                    stream=True))
price = PriceBook().price("gpt-4o-mini")
from core.llm import litellm_import
print(reply.text, reply.input_tokens, reply.output_tokens, price.input_per_m > 0)
try:
    litellm_import.litellm()
except ImportError as exc:
    print("blocked:", exc)
"""


def test_a_direct_call_and_a_price_need_no_litellm(openai_server):
    openai_server.script("m", replies=["no litellm here"])
    proc = subprocess.run([sys.executable, "-c", FIRST_CALL_WITHOUT_LITELLM, openai_server.url],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == ["no litellm here 1 4 True", "blocked: litellm is blocked in this test"]
    assert openai_server.history[0].headers["user-agent"] == "rlm-studio"


CANCEL_STALL = r"""
import asyncio, json, sys, time
from core.llm.client import ModelClient

class Meter:
    async def begin(self, attempt): return None
    def end(self, usage): self.usage = usage

async def main():
    client = ModelClient(key_for=lambda m: "k", api_base_for=lambda m: sys.argv[1])
    meter = Meter()
    prompt = [{"role": "user", "content": "word " * 20_000}]          # 100k characters
    task = asyncio.create_task(client.complete("openai/m", prompt, max_tokens=8, meter=meter))
    await asyncio.sleep(0.5)                       # the request is out, the server waits
    lags = []
    async def ticker():
        while True:
            t = time.perf_counter(); await asyncio.sleep(0.001); lags.append(time.perf_counter() - t)
    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await asyncio.sleep(0.1)
    tick.cancel()
    print(json.dumps({"lag_ms": max(lags) * 1000, "litellm": "litellm" in sys.modules,
                      "usage": [meter.usage.input_tokens, meter.usage.outcome, meter.usage.estimated]}))
asyncio.run(main())
"""


def test_a_cancelled_direct_call_does_not_stall_the_loop_or_load_litellm(openai_server):
    # Before issue 28 the cancelled attempt's estimate waited for litellm's import (started
    # after the request went out) on the loop: 2.2-2.9 s of lag, measured.
    openai_server.script("m", fn=lambda r: "late", latency_s=30)
    proc = subprocess.run([sys.executable, "-c", CANCEL_STALL, openai_server.url], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["lag_ms"] < 200 and report["litellm"] is False, report
    tokens, outcome, estimated = report["usage"]
    assert outcome == "cancelled" and estimated and 15_000 < tokens < 30_000


def test_the_proxy_comes_from_the_environment_and_no_proxy_bypasses_it(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                 "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert openai_http.proxy_for("https://lab.example.org/v1/chat/completions") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://plain.corp:8080")
    assert openai_http.proxy_for("https://lab.example.org/v1/chat/completions") == "http://proxy.corp:3128"
    assert openai_http.proxy_for("http://10.0.0.5:8000/v1/chat/completions") == "http://plain.corp:8080"
    monkeypatch.setenv("NO_PROXY", "lab.example.org,10.0.0.5")
    assert openai_http.proxy_for("https://lab.example.org/v1/chat/completions") is None
    assert openai_http.proxy_for("http://10.0.0.5:8000/v1/chat/completions") is None
    assert openai_http.proxy_for("https://other.example.org/v1") == "http://proxy.corp:3128"


def test_no_proxy_cidr_entries_cover_the_addresses_inside_them(monkeypatch):
    # Decided: as curl and requests read them (urllib never matches a CIDR entry, httpx only
    # the network's own address), so a lab server under NO_PROXY=10.0.0.0/8 is not proxied.
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                 "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("NO_PROXY", "example.org, 10.0.0.0/8,fd00::/8 ,192.168.1.0/24")
    for url in ("http://10.1.2.3:8000/v1", "https://[fd00::5]:8443/v1", "http://192.168.1.77/v1",
                "https://lab.example.org/v1"):
        assert openai_http.proxy_for(url) is None, url
    for url in ("http://11.0.0.1:8000/v1", "http://192.168.2.1/v1", "https://[fe80::1]/v1",
                "https://lab.example.com/v1", "http://10.example.net/v1"):
        assert openai_http.proxy_for(url) == "http://proxy.corp:3128", url


async def test_a_call_really_goes_through_the_proxy_unless_no_proxy_says_not(openai_server, monkeypatch):
    for name in ("http_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    openai_server.script("m", fn=lambda r: "direct")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")            # nothing listens there
    with pytest.raises(LLMError) as info:
        await client_for(openai_server, max_retries=0).complete("openai/m", MESSAGES, max_tokens=5)
    assert info.value.kind == "unreachable" and openai_server.history == []
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    reply = await client_for(openai_server, max_retries=0).complete("openai/m", MESSAGES, max_tokens=5)
    assert reply.text == "direct" and len(openai_server.history) == 1


class RecordingMeter:
    """An AttemptMeter that records what each attempt was taken to have used."""

    def __init__(self) -> None:
        self.begun = 0
        self.ended: list = []

    async def begin(self, attempt: int) -> None:
        self.begun += 1

    def end(self, usage) -> None:
        self.ended.append(usage)


async def test_a_call_cancelled_while_it_connects_sent_nothing_and_costs_nothing(monkeypatch):
    """The server's accept queue is full, so the connection is never made and the request never
    leaves: the attempt is "unsent", costs nothing and is no attempt for the budget (a cancel
    after the request went out is estimated: test_a_cancelled_direct_call_does_not_stall...)."""
    monkeypatch.delenv("RLMSTUDIO_DESKTOP_HTTP", raising=False)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    queued = socket.create_connection(listener.getsockname())      # fills the queue: the next connect waits
    try:
        meter = RecordingMeter()
        client = ModelClient(key_for=lambda m: "k", max_retries=0,
                             api_base_for=lambda m: f"http://127.0.0.1:{listener.getsockname()[1]}/v1")
        task = asyncio.create_task(client.complete("openai/m", MESSAGES, max_tokens=8, meter=meter))
        deadline = time.monotonic() + 30
        while not meter.begun and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        queued.close()
        listener.close()
    [usage] = meter.ended
    assert (usage.outcome, usage.input_tokens, usage.output_tokens, usage.estimated) == ("unsent", 0, 0, False)
