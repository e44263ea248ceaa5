"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

Real HTTP (stdlib ThreadingHTTPServer, one thread per connection, HTTP/1.1
keep-alive), so litellm and httpx/aiohttp run their real code paths. litellm
reaches it with model "openai/<name>" and api_base=server.url; the server sees
"<name>".

    with ScriptedOpenAI() as server:
        server.script("root", replies=["first reply", Status(429, retry_after=0.2), "second"])
        server.script("sub", fn=lambda req: req.prompt.upper(), latency_s=0.5)
        server.fail_next("sub", Status(500))            # served before the script's reply
        ... litellm.acompletion(model="openai/root", api_base=server.url, api_key="k", ...)
        server.history, server.requests_for("sub"), server.max_in_flight

What a request gets, in order: the model's fail_next queue, then its `replies`
(in order), then `fn(request)`. Replies are a str, a Reply (text plus
finish_reason/usage) or a failure: Status, Hang, Malformed, CutStream, EndStream,
Body, Delay.
A model that was never scripted gets 404 (model_not_found); a script whose
replies ran out and has no fn gets 500 "script exhausted for model X".

Streaming follows OpenAI: `data: {chunk}\\n\\n` events over chunked transfer
encoding, a last chunk with finish_reason, a usage chunk (choices=[]) when
stream_options.include_usage is set, then `data: [DONE]`. CutStream drops the
connection mid-body, so the client sees an incomplete chunked read.

While a request waits (latency, Delay, Hang) the server watches the socket:
a client that hangs up is recorded (Request.disconnected) and nothing is sent,
which is how tests prove that a cancelled call really stopped its HTTP request.

Billing, as a provider would: `server.price(model, in_per_m, out_per_m)`, then
`server.billed_usd()` / `Request.billed` (prompt, completion tokens):
  an HTTP error status (429, 5xx, 4xx, no such model)   nothing
  a complete reply                                    its usage (sent or not)
  anything else the server accepted (a stream cut or  the prompt's tokens plus
    a client that hung up mid-stream, a Hang, a         ceil(chars sent / 4)
    malformed body, a client gone while waiting)
`Request.usage_sent` says whether the client was sent the usage; `sent_text` is
the reply text that went out.

In a test:  def test_x(openai_server): openai_server.script(...)
The lead re-exports the fixture from tests/conftest.py with one line:
    from tests.support.openai_server import openai_server  # noqa: F401
"""

from __future__ import annotations

import json
import math
import select
import socket
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

from tests.support.openai_actions import (  # noqa: F401  (re-exported: tests import them from here)
    Action, Body, CutStream, Delay, EndStream, Failure, Hang, Malformed, Reply, Status)


from tests.support.server_windows import answer_window_route  # noqa: E402


class _Headers(dict):
    """Request headers; lookups ignore case."""

    def __init__(self, items: Any = ()) -> None:
        super().__init__((k.lower(), v) for k, v in items)

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)


@dataclass
class Request:
    model: str
    messages: list[dict]
    stream: bool
    max_tokens: int | None
    headers: dict[str, str]
    body: dict
    started: float                      # time.monotonic() at arrival
    finished: float | None = None       # time.monotonic() when the response ended
    status: int | None = None           # HTTP status sent (None: nothing was sent)
    outcome: str = ""                   # "reply", "status", "hang", "malformed", "cut", "exhausted", ...
    disconnected: bool = False          # the client hung up before the response was complete
    disconnected_at: float | None = None  # time.monotonic() when the server saw the hang-up
    billed: tuple[int, int] = (0, 0)    # (prompt, completion) tokens the server bills (see above)
    usage_sent: bool = False            # the usage reached the client in the response
    sent_text: str = ""                 # reply text sent so far (streams: chunk by chunk)

    @property
    def prompt(self) -> str:
        """The content of the last user message (what a sub-call sent)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _content_text(message.get("content"))
        return ""

    @property
    def api_key(self) -> str | None:
        auth = self.headers.get("authorization") or ""
        return auth[7:] if auth.lower().startswith("bearer ") else None


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):   # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def default_usage(request: Request, reply: str) -> tuple[int, int]:
    chars = sum(len(_content_text(m.get("content"))) for m in request.messages)
    return max(1, math.ceil(chars / 4)), max(1, math.ceil(len(reply) / 4))


@dataclass
class _Script:
    replies: deque = field(default_factory=deque)
    fn: Callable[[Request], Any] | None = None
    latency_s: float = 0.0
    usage: Callable[[Request, str], tuple[int, int]] | None = None
    chunk_chars: int = 16
    send_usage: bool = True
    chunk_delay_s: float = 0.0
    failures: deque = field(default_factory=deque)
    scripted: bool = False


class _ClientGone(Exception):
    pass


# ---------------------------------------------------------------- server


class ScriptedOpenAI:
    def __init__(self, *, require_key: str | None = None) -> None:
        self.require_key = require_key
        self.history: list[Request] = []
        self.max_in_flight = 0
        self.url = ""
        self._in_flight = 0
        self._lock = threading.Lock()
        self._scripts: dict[str, _Script] = {}
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._sockets: set[socket.socket] = set()
        self._prices: dict[str, tuple[float, float]] = {}
        self._windows: dict[str, tuple[int, str]] = {}      # model -> (context window, server kind)
        self.window_delay_s = 0.0                           # how long the window routes take to answer
        self.window_asks: list[str] = []                    # the window routes asked, in order

    # -- the context window, as a local server reports it

    def report_window(self, model: str, tokens: int, kind: str) -> None:
        """Answer the window route of one server kind for `model` (its own name): "llama.cpp"
        (GET /props: default_generation_settings.n_ctx), "vllm" (GET /v1/models: max_model_len),
        "ollama" (POST /api/show: parameters num_ctx and model_info) or "lmstudio"
        (GET /api/v0/models: loaded_context_length)."""
        self._windows[model] = (tokens, kind)

    def _window_of(self, kind: str) -> dict[str, int]:
        return {m: n for m, (n, k) in self._windows.items() if k == kind}

    # -- billing

    def price(self, model: str, input_per_m: float, output_per_m: float) -> None:
        """USD per million tokens the server bills for `model` (its own name, e.g. "sub")."""
        self._prices[model] = (input_per_m, output_per_m)

    def request_usd(self, request: "Request") -> float:
        per_in, per_out = self._prices.get(request.model, (0.0, 0.0))
        return (request.billed[0] * per_in + request.billed[1] * per_out) / 1e6

    def billed_usd(self, requests: list["Request"] | None = None) -> float:
        """What the server billed for `requests` (default: every request so far)."""
        with self._lock:
            chosen = list(self.history) if requests is None else list(requests)
        return sum(self.request_usd(r) for r in chosen)

    # -- scripting

    def script(self, model: str, *, replies: list | None = None,
               fn: Callable[[Request], Any] | None = None, latency_s: float = 0.0,
               usage: Callable[[Request, str], tuple[int, int]] | None = None,
               chunk_chars: int = 16, send_usage: bool = True, chunk_delay_s: float = 0.0) -> None:
        """(Re)script `model`. Pending fail_next failures are kept. `chunk_chars`:
        text per stream chunk; send_usage=False: like servers that never report
        usage (no "usage" key, no usage chunk even when asked); `chunk_delay_s`: a
        pause before each streamed chunk, like a slow local model (a client that
        hangs up during one is recorded: Request.disconnected, disconnected_at)."""
        with self._lock:
            old = self._scripts.get(model)
            self._scripts[model] = _Script(
                replies=deque(replies or ()), fn=fn, latency_s=latency_s, usage=usage,
                chunk_chars=max(1, chunk_chars), send_usage=send_usage, chunk_delay_s=max(0.0, chunk_delay_s),
                failures=old.failures if old else deque(),
                scripted=True)

    def fail_next(self, model: str, *failures: Failure) -> None:
        with self._lock:
            self._scripts.setdefault(model, _Script()).failures.extend(failures)

    def requests_for(self, model: str) -> list[Request]:
        with self._lock:
            return [r for r in self.history if r.model == model]

    @property
    def in_flight(self) -> int:
        return self._in_flight

    # -- life

    def start(self) -> "ScriptedOpenAI":
        handler = type("Handler", (_Handler,), {"owner": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler, bind_and_activate=False)
        httpd.daemon_threads = True
        httpd.request_queue_size = 2048      # listen backlog: hundreds of connections at once
        httpd.allow_reuse_address = True
        httpd.server_bind()
        httpd.server_activate()
        self._httpd = httpd
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="scripted-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:       # end keep-alive connections so no client reuses them
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> "ScriptedOpenAI":
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- used by the handler

    def _next_action(self, request: Request) -> tuple[Action, _Script | None]:
        """Pick what `request` gets; Delays without a reply add up in front."""
        extra = 0.0
        while True:
            with self._lock:
                script = self._scripts.get(request.model)
                if script is None:
                    return Status(404, message=f"The model `{request.model}` does not exist"), None
                if script.failures:
                    action: Any = script.failures.popleft()
                elif script.replies:
                    action = script.replies.popleft()
                elif script.fn is None:
                    if not script.scripted:
                        return Status(404, message=f"The model `{request.model}` does not exist"), None
                    return Status(500, message=f"script exhausted for model {request.model}"), script
                else:
                    action = None
            if action is None:
                action = script.fn(request)
                if isinstance(action, Delay) and action.reply is None:
                    action = Delay(action.seconds, "")
            if isinstance(action, Delay) and action.reply is None:
                extra += action.seconds
                continue
            if extra:
                text = action.reply if isinstance(action, Delay) else action
                seconds = extra + (action.seconds if isinstance(action, Delay) else 0.0)
                return _Delayed(seconds, text), script
            return action, script

    def _enter(self, request: Request) -> None:
        with self._lock:
            self.history.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self, request: Request) -> None:
        with self._lock:
            self._in_flight -= 1
            if request.finished is None:
                request.finished = time.monotonic()


@dataclass(frozen=True)
class _Delayed:
    seconds: float
    then: Any


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedOpenAI
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True       # small SSE chunks go out at once, like a real API

    chat: Request | None = None          # the chat request being served (self.request is the socket)

    def log_message(self, format: str, *args: Any) -> None:   # quiet
        pass

    def send_response(self, code: int, message: str | None = None) -> None:
        if self.chat is not None:
            self.chat.status = code
        super().send_response(code, message)

    def _done(self) -> None:
        """Stamp the end before the last bytes go out, so a client that has
        read the whole response always finds `finished` set."""
        if self.chat is not None and self.chat.finished is None:
            self.chat.finished = time.monotonic()

    def setup(self) -> None:
        super().setup()
        with self.owner._lock:
            self.owner._sockets.add(self.connection)

    def finish(self) -> None:
        with self.owner._lock:
            self.owner._sockets.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    # -- routes

    def _window_route_safe(self) -> bool:
        try:
            return answer_window_route(self)
        except (BrokenPipeError, ConnectionResetError):     # the client gave up waiting (its timeout)
            self.close_connection = True
            return True

    def do_GET(self) -> None:
        if self._window_route_safe():
            return
        if self.path.rstrip("/").endswith("/models"):
            auth = self.headers.get("Authorization") or ""
            if self.owner.require_key is not None and auth != f"Bearer {self.owner.require_key}":
                self._json(401, _error_body(401, "Incorrect API key provided"))
                return
            with self.owner._lock:
                names = [m for m, s in self.owner._scripts.items() if s.scripted]
            vllm = self.owner._window_of("vllm")
            names += [m for m in vllm if m not in names]
            data = [{"id": n, "object": "model", "created": 0, "owned_by": "scripted",
                     **({"max_model_len": vllm[n]} if n in vllm else {})} for n in names]
            self._json(200, {"object": "list", "data": data})
        else:
            self._json(404, _error_body(404, f"no route {self.path}"))

    def do_POST(self) -> None:
        if self._window_route_safe():
            return
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, _error_body(404, f"no route {self.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._json(400, _error_body(400, "request body is not JSON"))
            return
        request = Request(
            model=str(body.get("model", "")), messages=list(body.get("messages") or []),
            stream=bool(body.get("stream")),
            max_tokens=body.get("max_tokens", body.get("max_completion_tokens")),
            headers=_Headers(self.headers.items()), body=body, started=time.monotonic())
        owner = self.owner
        owner._enter(request)
        self.chat = request
        try:
            self._serve(request)
        except (_ClientGone, BrokenPipeError, ConnectionResetError):
            request.disconnected = True
            request.disconnected_at = time.monotonic()
            self.close_connection = True
        finally:
            self.chat = None
            owner._leave(request)

    # -- serving one chat request

    def _serve(self, request: Request) -> None:
        owner = self.owner
        if owner.require_key is not None and request.api_key != owner.require_key:
            request.outcome = "status"
            self._status(request, Status(401, message="Incorrect API key provided"))
            return
        action, script = owner._next_action(request)
        latency = script.latency_s if script is not None else 0.0
        if isinstance(action, _Delayed):
            latency += action.seconds
            action = action.then
        if isinstance(action, Delay):
            latency += action.seconds
            action = action.reply or ""
        if not isinstance(action, Status):      # accepted: the prompt is processed and billed
            request.billed = (self._usage(request, Reply(""), script)["prompt_tokens"], 0)
        if latency > 0:
            self._wait(latency)
        if isinstance(action, Status):
            request.outcome = "status" if "exhausted" not in action.message else "exhausted"
            self._status(request, action)
        elif isinstance(action, Hang):
            request.outcome = "hang"
            self._wait(action.seconds)
            self.close_connection = True
        elif isinstance(action, Malformed):
            request.outcome = "malformed"
            self._malformed(request)
        elif isinstance(action, CutStream):
            request.outcome = "cut"
            self._cut(request, action, script)
        elif isinstance(action, EndStream):
            request.outcome = "ended"
            self._ended(request, action, script)
        elif isinstance(action, Body):
            request.outcome = "body"
            self._body(request, action)
        elif isinstance(action, (str, Reply)):
            request.outcome = "reply"
            reply = action if isinstance(action, Reply) else Reply(action)
            self._reply(request, reply, script)
        else:
            request.outcome = "status"
            self._status(request, Status(500, message=f"script gave {type(action).__name__}, "
                                                      "expected str, Reply or a failure"))

    def _wait(self, seconds: float) -> None:
        """Sleep, but notice a client that hangs up (raises _ClientGone) and a
        server that stops."""
        deadline = time.monotonic() + seconds
        sock = self.connection
        poller = select.poll()          # not select(): descriptors go past 1024 under load
        poller.register(sock, select.POLLIN | select.POLLHUP | select.POLLERR)
        while (left := deadline - time.monotonic()) > 0:
            if self.owner._stopping.is_set():
                raise _ClientGone()
            if poller.poll(min(left, 0.05) * 1000):
                try:
                    peek = sock.recv(1, socket.MSG_PEEK)
                except OSError:
                    raise _ClientGone() from None
                if not peek:
                    raise _ClientGone()
                self.owner._stopping.wait(min(left, 0.05))   # pipelined bytes: just sleep

    def _usage(self, request: Request, reply: Reply, script: _Script | None) -> dict[str, int]:
        if reply.usage is not None:
            prompt, completion = reply.usage
        elif script is not None and script.usage is not None:
            prompt, completion = script.usage(request, reply.text)
        else:
            prompt, completion = default_usage(request, reply.text)
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}

    def _reply(self, request: Request, reply: Reply, script: _Script | None) -> None:
        usage = self._usage(request, reply, script)
        send_usage = script is None or script.send_usage
        if not request.stream:
            body = _completion(request.model, reply.text, reply.finish_reason, usage)
            if not send_usage:
                del body["usage"]
            self._json(200, body)
            request.sent_text, request.usage_sent = reply.text, send_usage
            request.billed = (usage["prompt_tokens"], usage["completion_tokens"])
            return
        self._start_stream(request)
        size = script.chunk_chars if script is not None else 16
        pause = script.chunk_delay_s if script is not None else 0.0
        for chunk in _stream_chunks(request.model, reply.text, reply.finish_reason, size):
            if pause:
                self._wait(pause)         # a slow model; notices a client that hung up
            self._event(chunk)
            self._sent(request, chunk)
        if _wants_usage(request) and send_usage:
            self._event({**_chunk_envelope(request.model), "choices": [], "usage": usage})
            request.usage_sent = True
        request.billed = (usage["prompt_tokens"], usage["completion_tokens"])
        self._done()
        self._event_raw(b"data: [DONE]\n\n")
        self._chunk(b"")

    @staticmethod
    def _sent(request: Request, chunk: dict) -> None:
        """A stream chunk went out: its text is billed from now on."""
        piece = (chunk["choices"][0].get("delta") or {}).get("content") or ""
        if piece:
            request.sent_text += piece
            request.billed = (request.billed[0], math.ceil(len(request.sent_text) / 4))

    def _cut(self, request: Request, cut: CutStream, script: _Script | None) -> None:
        text = "x" * cut.after_chars
        if request.stream:
            self._start_stream(request)
            for chunk in _stream_chunks(request.model, text, None, script.chunk_chars if script else 16):
                if chunk["choices"][0]["finish_reason"] is None:
                    self._event(chunk)
                    self._sent(request, chunk)
        else:
            data = json.dumps(_completion(request.model, text * 4 + "tail", "stop", {})).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: min(len(data) - 1, max(1, cut.after_chars))])
        self.wfile.flush()
        self._drop()

    def _ended(self, request: Request, end: EndStream, script: _Script | None) -> None:
        if not request.stream:
            self._malformed(request)
            return
        self._start_stream(request)
        text = "x" * end.after_chars
        for chunk in _stream_chunks(request.model, text, None, script.chunk_chars if script else 16):
            self._event(chunk)
            self._sent(request, chunk)
        self._done()
        self._chunk(b"")

    def _body(self, request: Request, body: Body) -> None:
        data = json.dumps(body.value).encode()
        if not request.stream:
            self._send(200, data, "application/json")
            return
        self._start_stream(request)
        self._done()
        self._event_raw(b"data: " + data + b"\n\n")
        self._event_raw(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _malformed(self, request: Request) -> None:
        if request.stream:
            self._start_stream(request)
            self._done()
            self._event_raw(b"data: {this is not json\n\n")
            self._event_raw(b"data: [DONE]\n\n")
            self._chunk(b"")
        else:
            self._send(200, b"<html>this is not json", "application/json")

    def _status(self, request: Request, status: Status) -> None:
        headers = {}
        if status.retry_after is not None:
            headers["Retry-After"] = _fmt_seconds(status.retry_after)
        message = status.message or _DEFAULT_MESSAGES.get(status.code, f"HTTP {status.code}")
        self._json(status.code, _error_body(status.code, message), headers)

    # -- wire helpers

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _send(self, code: int, data: bytes, content_type: str,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._done()
        self.wfile.write(data)
        self.wfile.flush()

    def _json(self, code: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        self._send(code, json.dumps(payload).encode(), "application/json", headers)

    def _start_stream(self, request: Request) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _event(self, payload: dict) -> None:
        self._chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _event_raw(self, data: bytes) -> None:
        self._chunk(data)


# ---------------------------------------------------------------- payloads

_DEFAULT_MESSAGES = {
    400: "Bad request", 401: "Incorrect API key provided", 403: "Forbidden",
    404: "Not found", 429: "Rate limit reached", 500: "The server had an error",
    502: "Bad gateway", 503: "The engine is currently overloaded",
}
_ERROR_TYPES = {400: ("invalid_request_error", None), 401: ("invalid_request_error", "invalid_api_key"),
                403: ("invalid_request_error", None), 404: ("invalid_request_error", "model_not_found"),
                429: ("requests", "rate_limit_exceeded")}


def _error_body(code: int, message: str) -> dict:
    kind, err_code = _ERROR_TYPES.get(code, ("server_error", None))
    if "context length" in message.lower() or "context_length" in message.lower():
        err_code = "context_length_exceeded"
    return {"error": {"message": message, "type": kind, "param": None, "code": err_code}}


def _fmt_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


def _wants_usage(request: Request) -> bool:
    options = request.body.get("stream_options") or {}
    return bool(isinstance(options, dict) and options.get("include_usage"))


def _completion(model: str, text: str, finish_reason: str, usage: dict) -> dict:
    return {
        "id": "chatcmpl-" + uuid.uuid4().hex[:24], "object": "chat.completion",
        "created": int(time.time()), "model": model, "system_fingerprint": "fp_scripted",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "logprobs": None, "finish_reason": finish_reason}],
        "usage": usage,
    }


def _chunk_envelope(model: str) -> dict:
    return {"id": "chatcmpl-stream", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "system_fingerprint": "fp_scripted"}


def _stream_chunks(model: str, text: str, finish_reason: str | None, size: int) -> Iterator[dict]:
    envelope = _chunk_envelope(model)
    yield {**envelope, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                    "logprobs": None, "finish_reason": None}]}
    for start in range(0, len(text), size):
        yield {**envelope, "choices": [{"index": 0, "delta": {"content": text[start:start + size]},
                                        "logprobs": None, "finish_reason": None}]}
    if finish_reason is not None:
        yield {**envelope, "choices": [{"index": 0, "delta": {}, "logprobs": None,
                                        "finish_reason": finish_reason}]}


# ---------------------------------------------------------------- pytest fixture


def openai_server_fixture() -> Iterator[ScriptedOpenAI]:
    """A started ScriptedOpenAI, stopped after the test."""
    server = ScriptedOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


try:
    import pytest as _pytest
except ImportError:        # the module also works outside pytest (benchmarks)
    openai_server = None
else:
    openai_server = _pytest.fixture(name="openai_server")(openai_server_fixture)
