"""Local model servers found on 127.0.0.1: real HTTP servers, a closed port,
servers that answer garbage or nothing at all."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from core.discovery import HOST, KNOWN_SERVERS, ServerKind, discover, ports_to_probe, probe, summary
from tests.support.openai_server import ScriptedOpenAI


@pytest.fixture
def scripted():
    server = ScriptedOpenAI().start()
    server.script("qwen2.5-coder", replies=["hi"])
    server.script("llama3.1:8b", replies=["hi"])
    try:
        yield server
    finally:
        server.stop()


def serve(routes: dict[str, tuple[int, bytes]]):
    """A tiny HTTP server on 127.0.0.1 answering GET path -> (status, body)."""
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            code, body = routes.get(self.path, (404, b"no"))
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    httpd = ThreadingHTTPServer((HOST, 0), Handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return httpd


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


async def test_a_scripted_server_is_found_with_its_models(scripted):
    port = port_of(scripted.url)
    servers = await discover([port], known=False)
    assert len(servers) == 1
    found = servers[0]
    assert found.found and found.error == ""
    assert found.base_url == scripted.url == f"http://127.0.0.1:{port}/v1"
    assert set(found.models) == {"qwen2.5-coder", "llama3.1:8b"}
    assert found.kind == "openai" and found.endpoint_name == f"local-{port}"
    assert "1 models" not in summary(servers) and f"port {port} (2 models)" in summary(servers)


async def test_usual_ports_are_probed_too_and_found_servers_come_first(scripted):
    port = port_of(scripted.url)
    servers = await discover([port])
    assert {s.port for s in servers} >= {k.port for k in KNOWN_SERVERS} | {port}
    assert servers[0].port == port or servers[0].found     # found ones first
    assert all(s.base_url.startswith("http://127.0.0.1:") for s in servers)
    missing = [s for s in servers if not s.found]
    assert all(s.error for s in missing)


async def test_a_closed_port_says_nothing_is_listening():
    port = free_port()
    [server] = await discover([port], known=False)
    assert not server.found and server.error == "nothing is listening" and server.models == ()


async def test_garbage_answers_are_reasons_not_exceptions():
    httpd = serve({"/v1/models": (200, b"<html>hello</html>")})
    wrong = serve({"/v1/models": (200, json.dumps({"models": "nope"}).encode())})
    refusing = serve({"/v1/models": (401, b"{}")})
    try:
        ports = [httpd.server_address[1], wrong.server_address[1], refusing.server_address[1]]
        servers = {s.port: s for s in await discover(ports, known=False)}
    finally:
        for s in (httpd, wrong, refusing):
            s.shutdown()
            s.server_close()
    assert "not with a model list (not JSON)" in servers[ports[0]].error
    assert "not with a model list" in servers[ports[1]].error
    assert servers[ports[2]].error == "answered HTTP 401 to /v1/models"
    assert not any(s.found for s in servers.values())


async def test_a_server_that_never_answers_times_out():
    listener = socket.socket()
    listener.bind((HOST, 0))
    listener.listen(8)                       # the kernel accepts; nobody ever replies
    try:
        [server] = await discover([listener.getsockname()[1]], known=False, timeout_s=0.2)
    finally:
        listener.close()
    assert not server.found and server.error == "no answer within 0.2 s"


async def test_ollama_tags_are_merged_and_reveal_the_kind():
    tags = {"models": [{"name": "llama3.1:8b"}, {"name": "qwen2.5:7b"}]}
    models = {"object": "list", "data": [{"id": "llama3.1:8b", "owned_by": "library"}]}
    httpd = serve({"/api/tags": (200, json.dumps(tags).encode()),
                   "/v1/models": (200, json.dumps(models).encode())})
    port = httpd.server_address[1]
    try:
        async with httpx.AsyncClient(timeout=1, trust_env=False) as client:
            server = await probe(client, port, ServerKind("ollama", "Ollama", port))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert server.found and server.kind == "ollama" and server.name == "Ollama"
    assert server.models == ("llama3.1:8b", "qwen2.5:7b")
    assert server.endpoint_name == f"ollama-{port}"


async def test_llama_cpp_is_recognised_by_its_answer():
    models = {"object": "list", "data": [{"id": "qwen2.5-coder-1.5b.gguf", "owned_by": "llamacpp"}]}
    httpd = serve({"/v1/models": (200, json.dumps(models).encode())})
    try:
        [server] = await discover([httpd.server_address[1]], known=False)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert server.kind == "llamacpp" and server.name == "llama.cpp"


def test_ports_to_probe_keeps_the_usual_ones_and_drops_bad_extras():
    ports = dict(ports_to_probe([11434, 5001, "5002", "x", 0, 70000]))
    assert set(ports) == {11434, 1234, 8080, 8000, 5001, 5002}
    assert ports[11434].key == "ollama" and ports[5001] is None
