"""LLMError: every way a model call can fail, in one typed exception.

litellm wraps the openai SDK, which wraps httpx, which (here) wraps aiohttp, and
the outermost exception often says less than the innermost one: a body that is
not JSON arrives as litellm.InternalServerError(500) with a JSONDecodeError
inside, a refused connection as InternalServerError(500) with a
ConnectionRefusedError inside. So `classify` walks the whole cause chain and
decides by what actually happened. Classes are matched by name, so this module
imports neither litellm nor httpx.

kinds:  auth, rate_limit, server, timeout, unreachable, bad_response (not JSON,
        a stream cut mid-way), context_window, bad_request, cancelled
"""

from __future__ import annotations

import email.utils
import time
from typing import Iterator

from core import providers

KINDS = ("auth", "rate_limit", "server", "timeout", "unreachable", "bad_response",
         "context_window", "bad_request", "cancelled")
RETRYABLE = frozenset({"rate_limit", "server", "timeout", "unreachable", "bad_response"})


class LLMError(Exception):
    """A failed model call. `str(error)` is the message to show the user."""

    def __init__(self, kind: str, message: str, *, provider: str = "", model: str = "",
                 status: int | None = None, retry_after: float | None = None,
                 attempts: int = 1, detail: str = "") -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown LLMError kind {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.provider = provider
        self.model = model
        self.status = status
        self.retry_after = retry_after     # seconds the server asked us to wait
        self.attempts = attempts
        self.detail = detail               # the provider's own words, for logs

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return (f"LLMError(kind={self.kind!r}, model={self.model!r}, status={self.status}, "
                f"attempts={self.attempts})")


def provider_of(model: str) -> str:
    """Who serves `model`: "openai/gpt-4o" -> "openai", "claude-3-5-haiku" ->
    "anthropic"; unknown bare names ask litellm (when it is loaded), else "openai"."""
    found = providers.provider_for_model(model)
    if found:
        return found
    from core.llm.litellm_import import loaded
    lm = loaded()
    if lm is not None:
        try:
            _, owner, _, _ = lm.get_llm_provider(model)
            return providers.provider_for_model(f"{owner}/x") or owner
        except Exception as exc:    # litellm raises BadRequestError for names it cannot place
            if type(exc).__name__ not in ("BadRequestError", "ValueError"):
                raise
    return "openai"


def key_hint(provider: str) -> str:
    """How the user gives `provider` a key, in one sentence."""
    names = providers.env_vars(provider)
    env = f" or the {names[0]} environment variable" if names else ""
    return f"Set its key with `rlm-studio keys set {provider}`{env}."


# ---------------------------------------------------------------- classify

def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _names(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


_TIMEOUT = {"Timeout", "APITimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout",
            "WriteTimeout", "PoolTimeout", "SocketTimeoutError", "ServerTimeoutError", "TimeoutError"}
_UNREACHABLE = {"ConnectError", "ClientConnectorError", "ConnectionRefusedError",
                "ClientConnectorDNSError", "gaierror", "InvalidURL", "UnsupportedProtocol"}
_CUT = {"ReadError", "RemoteProtocolError", "ClientPayloadError", "ServerDisconnectedError",
        "ContentLengthError", "TransferEncodingError", "IncompleteRead", "MidStreamFallbackError",
        "ConnectionResetError", "BrokenPipeError"}
_BAD_BODY = {"JSONDecodeError"}


def _http_status(exc: BaseException) -> int | None:
    """The status the server really sent (not the 500 litellm invents for a
    connection error): from an httpx/openai exception that carries a response."""
    for link in _chain(exc):
        response = getattr(link, "response", None)
        code = getattr(response, "status_code", None)
        if isinstance(code, int) and "HTTPStatusError" in _names(link):
            return code
        if isinstance(code, int) and type(link).__module__.startswith("openai") \
                and "APIStatusError" in _names(link):
            return code
    return None


def _litellm_status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def retry_after_of(exc: BaseException) -> float | None:
    """Seconds from a Retry-After (or retry-after-ms) header anywhere in the chain."""
    for link in _chain(exc):
        for headers in (getattr(getattr(link, "response", None), "headers", None),
                        getattr(link, "litellm_response_headers", None), getattr(link, "headers", None)):
            seconds = _parse_retry_after(headers)
            if seconds is not None:
                return seconds
    return None


def _parse_retry_after(headers: object) -> float | None:
    if not headers or not hasattr(headers, "get"):
        return None
    try:
        ms = headers.get("retry-after-ms") or headers.get("Retry-After-Ms")
        if ms:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after") or headers.get("Retry-After")
    except (TypeError, ValueError):
        return None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _innermost(exc: BaseException, kinds: set[str]) -> str:
    """The words of the deepest exception in the chain whose class is in `kinds`."""
    found = exc
    for link in _chain(exc):
        if _names(link) & kinds and str(link).strip():
            found = link
    return _detail(found)


def _detail(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 400 else text[:400] + "..."


def server_name(api_base: str | None) -> str:
    """"the server at 127.0.0.1:11434" for a URL that is not a cloud provider's own."""
    from urllib.parse import urlsplit
    try:
        netloc = urlsplit(api_base or "").netloc
    except ValueError:
        netloc = ""
    return f"the server at {netloc or api_base}"


def _own_server(provider: str, api_base: str | None) -> bool:
    """True when `api_base` is a server of the user's (Ollama, LM Studio, a custom URL),
    reached through the OpenAI-compatible route, not the provider's own service."""
    if not api_base:
        return False
    known = providers.get(provider)
    official = getattr(known, "api_base", "") or ""
    host = api_base.split("//", 1)[-1].split("/", 1)[0]
    return not (official and host in official) and "api.openai.com" not in api_base


def who_answers(model: str, api_base: str | None) -> tuple[str, str, str, str]:
    """(provider, who answered, who could not be reached, the model as messages name it):
    "openai/x" at 127.0.0.1 is "the OpenAI-compatible server at 127.0.0.1:..." and "x"."""
    provider = provider_of(model)
    display = providers.get(provider).display if providers.get(provider) else provider
    reach = display
    if _own_server(provider, api_base):
        reach = server_name(api_base)
        display = (f"the OpenAI-compatible {reach.removeprefix('the ')}" if provider == "openai"
                   else reach)
        model = model.removeprefix("openai/")
    return provider, display, reach, model


def classify(exc: BaseException, model: str, api_base: str | None = None) -> LLMError:
    """Turn any exception raised by a litellm call into an LLMError. With `api_base`
    (a local or custom server) the messages name that server, not the route's provider:
    "openai/x" at 127.0.0.1 is not OpenAI."""
    if isinstance(exc, LLMError):
        return exc
    routed = model
    provider, display, reach, model = who_answers(model, api_base)
    names: set[str] = set()
    for link in _chain(exc):
        names |= _names(link)
    status = _http_status(exc)
    detail = _detail(exc)

    def make(kind: str, message: str, code: int | None = status) -> LLMError:
        return LLMError(kind, message, provider=provider, model=routed, status=code,
                        retry_after=retry_after_of(exc), detail=detail)

    if "CancelledError" in _names(exc):
        return make("cancelled", f"The call to {model} was cancelled.")
    if isinstance(exc, TimeoutError):      # our own deadline (asyncio.timeout) ran out
        return make("timeout", f"The call to {model} ({reach}) timed out.", None)
    if names & _BAD_BODY:
        return make("bad_response", f"{display} sent a reply for {model} that is not valid JSON.")
    if status is None and (event := _stream_error_event(exc)) is not None:
        return make("server", f"{display} failed while answering for {model}: {event}", None)
    if status is None and any(words in str(link) for link in _chain(exc) for words in _NOT_A_REPLY):
        return make("bad_response", f"{display} sent a reply for {model} that is not a complete reply: "
                                    f"{detail}", None)
    if status is None:        # no HTTP status: a transport problem (or litellm's own)
        if names & _TIMEOUT:
            return make("timeout", f"The call to {model} ({reach}) timed out.", None)
        if names & _UNREACHABLE:
            return make("unreachable", f"Could not connect to {reach} for {model}: "
                                       f"{_innermost(exc, _UNREACHABLE)}", None)
        if names & _CUT:
            return make("bad_response", f"The connection to {reach} dropped in the middle of "
                                        f"the reply from {model}.", None)
        if "APIConnectionError" in names:
            return make("unreachable", f"Could not reach {reach} for {model}: {detail}", None)
        status = _litellm_status(exc)
    if _missing_key(detail):
        return make("auth", f"No API key for {display} was given for {model}. {key_hint(provider)}",
                    status if status in (401, 403) else None)
    if "ContextWindowExceededError" in names or (status == 400 and _mentions_context(detail)):
        return make("context_window", f"The prompt is larger than the context window of {model}. "
                                      f"({detail})", status)
    if status in (401, 403) or names & {"AuthenticationError", "PermissionDeniedError"}:
        code = status or (401 if "AuthenticationError" in names else 403)
        what = "rejected the API key" if code == 401 else "refused access"
        return make("auth", f"{display} {what} for {model} (HTTP {code}). {key_hint(provider)}", code)
    if status == 429 or "RateLimitError" in names:
        return make("rate_limit", f"{display} is rate-limiting calls to {model} (HTTP 429).", 429)
    if status == 408 or names & _TIMEOUT:
        return make("timeout", f"The call to {model} ({display}) timed out.", status)
    if status is not None and status >= 500:
        return make("server", f"{display} had a server error on {model} (HTTP {status}): {detail}")
    if status == 404 or "NotFoundError" in names:
        return make("bad_request", f"{display} does not know the model {model} (HTTP 404): {detail}",
                    404)
    if status is not None and 400 <= status < 500:
        return make("bad_request", f"{display} refused the request for {model} (HTTP {status}): "
                                   f"{detail}")
    if names & {"APIError", "OpenAIError", "ServiceUnavailableError", "InternalServerError"}:
        return make("server", f"{display} failed on {model}: {detail}")
    return make("bad_request", f"The call to {model} failed: {type(exc).__name__}: {detail}")


# litellm's words (with an "HTTP 500" of its own making) for a 200 whose body is not a
# completion: not an object, no choices, choices that are not a list, a choice not a dict
_NOT_A_REPLY = ("Empty or invalid response from LLM endpoint", "LiteLLM: provider returned",
                "Invalid response object")


def _stream_error_event(exc: BaseException) -> str | None:
    """The message of an error event inside a stream, as the openai SDK raises it (a bare
    openai.APIError, without a status), anywhere in the chain; None when there is none."""
    for link in _chain(exc):
        if type(link).__name__ == "APIError" and type(link).__module__.split(".")[0] == "openai":
            return _detail(link)
    return None


def _mentions_context(text: str) -> bool:
    lowered = text.lower()
    return "context length" in lowered or "context_length" in lowered or "context window" in lowered


def _missing_key(text: str) -> bool:
    lowered = text.lower()
    return ("missing credentials" in lowered or "api_key client option must be set" in lowered
            or "api key not found" in lowered or "no api key" in lowered)
