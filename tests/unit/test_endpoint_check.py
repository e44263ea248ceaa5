"""core.discovery.check_endpoint: GET {url}/models against real servers (the scripted one,
a closed port, a socket that never answers, a web server that is not OpenAI-compatible)."""

from __future__ import annotations

import asyncio
import functools
import http.server
import socket
import threading

import pytest

from core.discovery import check_endpoint
from tests.support.openai_server import ScriptedOpenAI


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_reached_lists_the_scripted_models(server):
    for name in ("root", "sub", "coder-7b"):
        server.script(name, replies=["x"])
    check = asyncio.run(check_endpoint(server.url))
    assert check.ok and check.summary() == "Reached: 3 models"
    assert set(check.models) == {"root", "sub", "coder-7b"} and check.status == 200


def test_a_closed_port_says_refused():
    check = asyncio.run(check_endpoint(f"http://127.0.0.1:{_closed_port()}/v1"))
    assert not check.ok and "refused" in check.error and "Is the server running" in check.error


def test_a_silent_server_says_timeout():
    with socket.socket() as sock:               # listens (the kernel accepts) but never answers
        sock.bind(("127.0.0.1", 0))
        sock.listen(4)
        check = asyncio.run(check_endpoint(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", timeout_s=0.3))
    assert not check.ok and check.error == "Not reached: no answer within 0.3 s."


def test_a_key_the_server_refuses_says_401():
    with ScriptedOpenAI(require_key="sk-lab-0123456789") as locked:
        locked.script("root", replies=["x"])
        none = asyncio.run(check_endpoint(locked.url))
        wrong = asyncio.run(check_endpoint(locked.url, "sk-wrong"))
        right = asyncio.run(check_endpoint(locked.url, "sk-lab-0123456789"))
    assert none.status == 401 and "refused a key (HTTP 401)" in none.error
    assert wrong.status == 401 and "refused this key (HTTP 401)" in wrong.error
    assert right.ok and right.models == ("root",)


@pytest.mark.parametrize("body", ["<html><body>Hello</body></html>", '{"models": []}'])
def test_a_web_server_that_is_not_openai_compatible(tmp_path, body):
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_text(body)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        check = asyncio.run(check_endpoint(f"http://127.0.0.1:{httpd.server_address[1]}/v1"))
        missing = asyncio.run(check_endpoint(f"http://127.0.0.1:{httpd.server_address[1]}/api"))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert check.status == 200 and "did not answer with an OpenAI-compatible model list" in check.error
    assert missing.status == 404 and "answered HTTP 404" in missing.error


def test_a_url_without_a_scheme_is_refused_before_any_request():
    check = asyncio.run(check_endpoint("127.0.0.1:1234/v1"))
    assert check.error.startswith("The URL must start with http:// or https://")
