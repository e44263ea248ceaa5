"""The model list: litellm's bundled prices, custom endpoints, and their
GET /models over real HTTP on 127.0.0.1 (and a closed port)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from app.settings import Endpoint
from core.catalog import list_models, list_models_async
from core.providers import PROVIDERS, provider_for_model
from tests.support.openai_server import ScriptedOpenAI


@pytest.fixture(scope="module")
def models():
    return list_models([Endpoint("lab", "http://127.0.0.1:1/v1", ["qwen3", "phi4"])])


@pytest.fixture
def models_server():
    """GET .../models on 127.0.0.1: one model "m"; under /broken a 500, under
    /garbage a 200 that is not JSON. Yields (base url, Authorization headers seen)."""
    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            status, body = 200, json.dumps({"data": [{"id": "m"}]}).encode()
            if "/broken/" in self.path:
                status = 500
            elif "/garbage/" in self.path:
                body = b"<html>no"
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]             # nobody listens once the socket is closed


def test_litellm_chat_models_with_prices_and_context(models):
    by_id = {m.id: m for m in models}
    mini = by_id["gpt-4o-mini"]
    assert (mini.provider, mini.source) == ("openai", "litellm")
    assert (mini.input_per_m, mini.output_per_m, mini.context_window) == (0.15, 0.6, 128000)
    assert by_id["claude-haiku-4-5"].provider == "anthropic"
    assert by_id["deepseek/deepseek-chat"].provider == "deepseek"
    assert len([m for m in models if m.source == "litellm"]) > 500
    assert not any("embedding" in m.id for m in models if m.provider == "openai")   # chat only
    assert models.skipped == []


def test_custom_endpoint_models_are_listed_by_endpoint_name(models):
    local = [m for m in models if m.source == "endpoint"]
    assert [(m.id, m.provider) for m in local] == [("lab/qwen3", "lab"), ("lab/phi4", "lab")]
    assert local[0].input_per_m is None and local[0].context_window is None


def test_fetch_remote_lists_a_servers_models_and_skips_a_closed_port(closed_port):
    with ScriptedOpenAI() as server:
        server.script("served-a", replies=["x"])
        server.script("qwen3", replies=["x"])
        endpoints = [Endpoint("lab", server.url, ["qwen3"]),
                     Endpoint("gone", f"http://127.0.0.1:{closed_port}/v1", ["m1"])]
        models = list_models(endpoints, fetch_remote=True, timeout_s=2.0)
    sources = {m.id: m.source for m in models if m.provider in ("lab", "gone")}
    assert sources == {"lab/qwen3": "endpoint", "lab/served-a": "remote", "gone/m1": "endpoint"}
    assert [name for name, _ in models.skipped] == ["gone"]
    assert "unreachable" in models.skipped[0][1] and "ConnectError" in models.skipped[0][1]


async def test_async_variant_fetches_concurrently(closed_port):
    with ScriptedOpenAI() as server:
        server.script("m-remote", replies=["x"])
        endpoints = [Endpoint("a", server.url, []), Endpoint("b", server.url, ["x"]),
                     Endpoint("c", f"http://127.0.0.1:{closed_port}/v1", [])]
        models = await list_models_async(endpoints, fetch_remote=True, timeout_s=2.0)
    assert {"a/m-remote", "b/m-remote", "b/x"} <= {m.id for m in models}
    assert [name for name, _ in models.skipped] == ["c"]
    assert "unreachable" in models.skipped[0][1]
    assert any(m.id == "gpt-4o-mini" for m in models)


def test_endpoint_that_needs_a_key_gets_it_as_bearer(home, monkeypatch, models_server):
    """Only an endpoint marked needs_key sends its own key; others send none."""
    url, seen = models_server
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_LOCKED_API_KEY", "locked-key-7777")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-travel-0000")
    models = list_models([Endpoint("locked", url, [], needs_key=True), Endpoint("open", url, [])],
                         fetch_remote=True)
    assert {"locked/m", "open/m"} <= {m.id for m in models}
    assert seen == ["Bearer locked-key-7777", None]


def test_bad_answers_are_skipped_with_their_reason(models_server):
    url, _ = models_server
    models = list_models([Endpoint("broken", url + "/broken", []),
                          Endpoint("garbage", url + "/garbage", []),
                          Endpoint("badurl", "http://[::1/v1", [])], fetch_remote=True)
    skipped = dict(models.skipped)
    assert "HTTP 500" in skipped["broken"]
    assert "unexpected" in skipped["garbage"]
    assert "unreachable" in skipped["badurl"]


@pytest.mark.parametrize("model, provider", [
    ("gpt-4o", "openai"), ("o3-mini", "openai"), ("openai/gpt-4o", "openai"),
    ("anthropic/claude-haiku-4-5", "anthropic"), ("claude-sonnet-4", "anthropic"),
    ("gemini/gemini-2.5-flash", "gemini"), ("together_ai/meta/x", "together"),
    ("fireworks_ai/accounts/fireworks/models/x", "fireworks"), ("azure/my-deploy", "azure"),
    ("cohere_chat/command-r", "cohere"), ("grok-4", "xai"), ("ollama_chat/llama3", "ollama"),
    ("openrouter/anthropic/claude-3", "openrouter"), ("bedrock/anthropic.claude", "bedrock"),
    ("lab/qwen3", "lab"), ("ollama/llama3", "ollama")])
def test_provider_for_model(model, provider):
    assert provider_for_model(model, [Endpoint("lab", "http://h/v1", [])]) == provider


def test_custom_endpoint_name_shadows_a_litellm_provider():
    assert provider_for_model("ollama/llama3", ["ollama"]) == "ollama"
    assert provider_for_model("openai/gpt-4o", [{"name": "openai"}]) == "openai"
    assert provider_for_model("mistral/x", [Endpoint("mistral", "http://h/v1", [])]) == "mistral"


def test_every_test_model_belongs_to_its_provider():
    for p in PROVIDERS.values():
        if p.test_model:
            assert provider_for_model(p.test_model) == p.name, p.name
        assert p.needs_key == bool(p.env_vars), p.name
