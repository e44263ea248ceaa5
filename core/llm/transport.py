"""The one contract every route to a model implements: send one attempt.

    transport = transport_for(model, api_base)          # openai_http.DIRECT or litellm_route.LITELLM
    await transport.prepare()                           # before the first attempt
    reply = await transport.send(request, on_piece)     # one attempt: a Reply, or an LLMError
    (transport_for: core/llm/client.py, which decides the route)

core/llm/client.py (ModelClient) owns everything around an attempt: retries and
their backoff, the meter (budget reservations), cancellation and what a failed
attempt is taken to have used. A transport owns one attempt only:

- the request: `Request` says what to send; the route turns it into its wire
  form (the direct route's body is the one litellm sends for the same call);
- the deadline: `request.timeout_s` for the whole attempt, a TimeoutError inside
  it is the `timeout` kind;
- streaming: with `request.stream`, `on_piece(text)` for every piece of the
  reply as it arrives (an exception from `on_piece` goes through untouched: it
  is the caller's, see CallbackFailed); when it returns True the caller has read
  enough: the stream is closed at once (the server stops generating) and the
  Reply has what arrived, finish_reason "cut", no usage;
- the reply: its text, finish reason and the provider's own usage (None when it
  sent none; the client estimates then, core/llm/pricing.py);
- failures: an `LLMError` of the right kind (core/llm/errors.py), never a
  route's own exception. A reply that is not a complete reply is an error,
  never an empty or truncated success:
    - a body or event that is not JSON, not a JSON object, or a completion
      without choices: bad_response (retried);
    - a stream cut mid-way, or one that ends without `data: [DONE]` and without
      a finish reason: bad_response (retried);
    - a 200 whose body is `{"error": ...}`: as the HTTP status its `code` names
      (429: rate_limit, 5xx: server...), else bad_request (not retried);
    - an error event inside a stream: server (retried: the server took the
      request and failed while answering; no status, so the attempt is taken to
      have used its prompt).
- cancellation: CancelledError goes through, and the HTTP request is closed.

tests/unit/llm/test_transport_contract.py runs the same cases against both
routes on the scripted server; where litellm cannot be made to comply without
patching it, the case says so (a strict xfail with the reason).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol

from core.llm.errors import LLMError, classify, who_answers


@dataclass(frozen=True)
class Request:
    """One attempt, as the client asks for it."""
    model: str                          # the routed name, e.g. "openai/qwen3"
    messages: list[dict]
    max_tokens: int
    stream: bool
    api_base: str | None
    api_key: str | None
    timeout_s: float
    temperature: float | None = None
    reasoning_effort: str | None = None
    # Called once the whole request has been handed to the connection, by a transport whose
    # `reports_sent` is True: an attempt cancelled before that never reached the provider.
    on_sent: Callable[[], None] | None = None


@dataclass
class Reply:
    """What one attempt got back."""
    text: str
    finish_reason: str | None
    prompt_tokens: int | None          # the provider's own counts, None when it sent none
    completion_tokens: int | None


class Transport(Protocol):
    name: str                          # "direct" | "litellm"
    reports_sent: bool                 # calls Request.on_sent (else every attempt counts as sent)

    async def prepare(self) -> None:
        """Whatever must be ready before the first attempt (litellm's import); not timed."""

    async def send(self, request: Request, on_piece: Callable[[str], Any]) -> Reply:
        """One attempt (see the module docstring)."""


class CallbackFailed(Exception):
    """`on_piece` raised: that is the caller's bug, not a provider failure; never retried."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class HTTPStatusError(Exception):
    """The server answered with an error status; the text is its own message (classify reads
    `response.status_code` and `response.headers`, as on httpx's exception)."""

    def __init__(self, message: str, status_code: int, headers: Any) -> None:
        super().__init__(message)
        self.response = _Status(status_code, headers)


@dataclass(frozen=True)
class _Status:
    status_code: int
    headers: Any                       # case-insensitive: Retry-After is read from it


class BadReply(Exception):
    """A 200 whose body or event is not a reply (not an object, no choices, a stream that
    stopped without an end): classified as bad_response."""


class ErrorBody(Exception):
    """A 200 whose body (or a stream event) is `{"error": ...}`; `status` is the error's own
    code when it is an HTTP status."""

    def __init__(self, message: str, status: int | None, *, in_stream: bool) -> None:
        super().__init__(message)
        self.status = status
        self.in_stream = in_stream


def error_status(error: Any) -> int | None:
    """The HTTP status an OpenAI-style error object names in its `code` (or `status`)."""
    if not isinstance(error, dict):
        return None
    for name in ("code", "status"):
        value = error.get(name)
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, int) and 400 <= value <= 599:
            return value
    return None


def error_message(data: Any) -> str:
    """The message of an OpenAI-style error body: {"error": {"message": ...}} or {"error": "..."}."""
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or json.dumps(error))
    return str(error)


@contextmanager
def typed_errors(request: Request) -> Iterator[None]:
    """Every failure of one attempt as an LLMError (CancelledError and CallbackFailed pass)."""
    try:
        yield
    except (LLMError, CallbackFailed):
        raise
    except ErrorBody as exc:
        raise _error_body(exc, request) from exc
    except BadReply as exc:
        provider, display, _, shown = who_answers(request.model, request.api_base)
        raise LLMError("bad_response", f"{display} sent a reply for {shown} that is not a complete "
                                       f"reply: {exc}", provider=provider, model=request.model,
                       detail=str(exc)) from exc
    except Exception as exc:
        raise classify(exc, request.model, request.api_base) from exc


def _error_body(exc: ErrorBody, request: Request) -> LLMError:
    if exc.status is not None and not exc.in_stream:
        return classify(HTTPStatusError(str(exc), exc.status, {}), request.model, request.api_base)
    provider, display, _, shown = who_answers(request.model, request.api_base)
    kind = "server" if exc.in_stream else "bad_request"
    what = "failed while answering" if exc.in_stream else "refused the request"
    return LLMError(kind, f"{display} {what} for {shown}: {exc}", provider=provider,
                    model=request.model, detail=str(exc))
