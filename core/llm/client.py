"""ModelClient: one model call, with our retries and typed errors.

Each attempt goes through one Transport (core/llm/transport.py: send one attempt,
return text, finish reason and usage, or raise a typed LLMError): the direct client
(core/llm/openai_http.py) for a model the user serves themselves at an
OpenAI-compatible URL and for OpenAI's own API (the model families whose parameter
rules core/llm/openai_rules.py knows), litellm (core/llm/litellm_route.py) for every other; RLMSTUDIO_DESKTOP_HTTP=litellm sends every
call through litellm. Both pass one contract suite (test_transport_contract.py).
This module owns what is around the attempts: retries, the meter, cancellation.

    client = ModelClient(key_for=keys.lookup, api_base_for=config.api_base_for)
    reply = await client.complete("openai/gpt-4o-mini", messages, max_tokens=4096,
                                  stream=True, on_delta=print)

- The key is passed per call (api_key=...), never through os.environ; so is
  the api_base. A custom endpoint without a key gets a placeholder key, since
  the OpenAI client insists on one and local servers ignore it.
- litellm's and the openai SDK's own retries are off; ours are the only ones:
  429, 5xx, timeouts, connection errors, bodies that are not JSON and streams cut
  mid-way are retried with exponential backoff and jitter, honouring Retry-After
  (capped by backoff_max_s). 400/401/403/404 and context-window errors are not.
- A streamed call reports text deltas through `on_delta`; when an attempt fails
  and is retried, `on_retry(attempt, error)` is called first and the deltas start
  over with the new attempt's reply.
- Usage comes from the provider; if it sends none (some local servers do not
  honour stream_options.include_usage), tokens are estimated and the
  Completion says so (usage_estimated=True).
- `stop(piece) -> bool` (streamed calls): asked after every piece; True ends the
  reading there: the stream is closed (so the server stops generating) and the
  Completion has what arrived, with finish_reason "cut" and estimated usage (the
  server never sent its count). core/engine/reply_reader.py decides for root replies.
- Cancelling the awaiting task cancels the HTTP request: CancelledError goes
  through untouched and the transport closes the connection. Nothing is awaited
  after a cancellation, and the estimate needs no litellm (core/llm/pricing.py).
- A `meter` (AttemptMeter) sees every attempt: `await meter.begin(attempt)` before
  it is sent (the budget reserves its worst case there, and may refuse by raising; it
  returns the max_tokens that attempt may ask for, lower when the cap affords less),
  `meter.end(usage)` when it is over, whatever the outcome (AttemptUsage). So a
  retry reserves again, and the backoff in between holds no reservation.
  What a failed or cancelled attempt is taken to have used (`attempt_usage`):
    an HTTP error status (429, 5xx, 4xx) or no connection at all: nothing
      (the provider answered with an error, or never saw the request);
    anything else (a stream cut mid-way, a timeout, a body that is not JSON,
      a cancellation): its input tokens plus the tokens of the text received
      so far, both estimated (usage_estimated=True), since providers bill
      what they processed and streamed;
    except an attempt that ended before the whole request was on the connection
      (a cancel or a timeout while it connects), on a transport that reports it
      (the direct route): nothing, and outcome "unsent": the provider never saw it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from core.llm.errors import LLMError, classify
from core.llm import openai_http
from core.llm.litellm_route import LITELLM
from core.llm.pricing import estimate_text_tokens, estimate_tokens
from core.llm.transport import CallbackFailed, Reply, Request, Transport

log = logging.getLogger(__name__)

NO_KEY = "no-key"    # sent to a custom endpoint when the user gave no key


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    duration_ms: int          # the successful attempt only, from request to last byte
    model: str
    finish_reason: str | None
    attempts: int
    usage_estimated: bool


@dataclass(frozen=True)
class AttemptUsage:
    """What one attempt used, as far as the engine can know."""
    input_tokens: int
    output_tokens: int
    estimated: bool           # not the provider's own count
    outcome: str              # "ok" | "failed" | "cancelled" | "unsent" (never reached the provider)
    error: LLMError | None = None


class AttemptMeter(Protocol):
    async def begin(self, attempt: int) -> int | None: ...   # the attempt's max_tokens (None: as asked)
    def end(self, usage: AttemptUsage) -> None: ...


def attempt_usage(model: str, messages: list[dict], received: str, error: LLMError | None,
                  *, cancelled: bool = False, sent: bool = True) -> AttemptUsage:
    """The usage of an attempt that did not complete (see the module docstring)."""
    if not sent:
        return AttemptUsage(0, 0, False, "unsent", error)
    outcome = "cancelled" if cancelled else "failed"
    if error is not None and (error.status is not None or error.kind == "unreachable"):
        return AttemptUsage(0, 0, False, outcome, error)
    return AttemptUsage(estimate_tokens(model, messages), estimate_text_tokens(model, received),
                        True, outcome, error)


_JITTER = random.Random()


class ModelClient:
    def __init__(self, *, key_for: Callable[[str], str | None],
                 api_base_for: Callable[[str], str | None], max_retries: int = 4,
                 timeout_s: float = 600.0, backoff_base_s: float = 0.5,
                 backoff_max_s: float = 30.0) -> None:
        self.key_for = key_for
        self.api_base_for = api_base_for
        self.max_retries = max(0, max_retries)
        self.timeout_s = timeout_s
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._random = _JITTER                # one for the process: a grid makes a client per run

    async def complete(self, model: str, messages: list[dict], *, max_tokens: int,
                       stream: bool = False, on_delta: Callable[[str], None] | None = None,
                       on_retry: Callable[[int, LLMError], None] | None = None,
                       reasoning_effort: str | None = None,
                       temperature: float | None = None,
                       meter: AttemptMeter | None = None,
                       stop: Callable[[str], bool] | None = None) -> Completion:
        kwargs = self._call_kwargs(model, messages, max_tokens, reasoning_effort, temperature)
        transport = transport_for(model, kwargs.get("api_base"))
        await transport.prepare()
        attempt = 0
        while True:
            attempt += 1
            received: list[str] = []
            if meter is not None:
                granted = await meter.begin(attempt)      # the cap may grant fewer tokens
                kwargs["max_tokens"] = granted or max_tokens
            started = time.monotonic()
            sent = _Sent(not transport.reports_sent)
            try:
                raw = await transport.send(_request(kwargs, stream, self.timeout_s, sent),
                                           lambda text: _deliver(text, received, on_delta, stop))
            except CallbackFailed as failed:
                if meter is not None:
                    meter.end(attempt_usage(model, messages, "".join(received), None))
                raise failed.error from None
            except asyncio.CancelledError:
                if meter is not None:    # no await here: the task is being cancelled
                    meter.end(attempt_usage(model, messages, "".join(received), None, cancelled=True,
                                            sent=sent.done))
                raise
            except (LLMError, Exception) as exc:
                error = classify(exc, model, self.api_base_for(model))
                if meter is not None:
                    meter.end(attempt_usage(model, messages, "".join(received), error, sent=sent.done))
            else:
                reply = self._completion(model, messages, raw, started, attempt)
                if meter is not None:
                    meter.end(AttemptUsage(reply.input_tokens, reply.output_tokens,
                                           reply.usage_estimated, "ok"))
                return reply
            error.attempts = attempt
            if not error.retryable or attempt > self.max_retries:
                if attempt > 1:
                    error.message = f"{error.message} (gave up after {attempt} attempts)"
                log.info("call to %s failed: %r %s", model, error, error.detail)
                raise error
            wait = self.retry_wait(attempt, error.retry_after)
            log.info("call to %s failed (%s, attempt %d); retrying in %.2f s",
                     model, error.kind, attempt, wait)
            if on_retry is not None:
                on_retry(attempt, error)
            await asyncio.sleep(wait)

    def retry_wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if retry_after is not None:
            return min(retry_after, self.backoff_max_s)
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
        return ceiling / 2 + self._random.uniform(0, ceiling / 2)     # "equal jitter"

    # -- one attempt

    def _call_kwargs(self, model: str, messages: list[dict], max_tokens: int,
                     reasoning_effort: str | None, temperature: float | None) -> dict[str, Any]:
        api_base = self.api_base_for(model)
        key = self.key_for(model)
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": max_tokens}
        if api_base:
            kwargs["api_base"] = api_base
        if key:
            kwargs["api_key"] = key
        elif api_base:
            kwargs["api_key"] = NO_KEY
        if reasoning_effort:
            kwargs["reasoning_effort"] = reasoning_effort
        if temperature is not None:
            kwargs["temperature"] = temperature
        return kwargs

    def _completion(self, model: str, messages: list[dict], raw: Reply,
                    started: float, attempt: int) -> Completion:
        prompt_tokens, completion_tokens = raw.prompt_tokens, raw.completion_tokens
        estimated = prompt_tokens is None
        if estimated:
            prompt_tokens = estimate_tokens(model, messages)
            completion_tokens = completion_tokens or estimate_text_tokens(model, raw.text)
        return Completion(text=raw.text, input_tokens=int(prompt_tokens),
                          output_tokens=int(completion_tokens or 0),
                          duration_ms=int((time.monotonic() - started) * 1000), model=model,
                          finish_reason=raw.finish_reason, attempts=attempt,
                          usage_estimated=estimated)


def _request(kwargs: dict[str, Any], stream: bool, timeout_s: float, sent: "_Sent") -> Request:
    return Request(kwargs["model"], kwargs["messages"], kwargs["max_tokens"], stream,
                   kwargs.get("api_base"), kwargs.get("api_key"), timeout_s,
                   kwargs.get("temperature"), kwargs.get("reasoning_effort"),
                   None if sent.done else sent)


class _Sent:
    """Whether an attempt's whole request went out (Request.on_sent calls it)."""
    __slots__ = ("done",)

    def __init__(self, done: bool) -> None:
        self.done = done

    def __call__(self) -> None:
        self.done = True


def _deliver(text: str, parts: list[str], on_delta: Callable[[str], None] | None,
             stop: Callable[[str], bool] | None = None) -> bool:
    """A piece of a streamed reply: kept, and handed to the caller's callbacks (whose
    failure is the caller's bug, never retried). True: stop reading here."""
    parts.append(text)
    try:
        if on_delta is not None:
            on_delta(text)
        return bool(stop is not None and stop(text))
    except Exception as exc:
        raise CallbackFailed(exc) from exc


def transport_for(model: str, api_base: str | None) -> Transport:
    """The route `model` at `api_base` takes: the direct client when it serves it
    (openai_http.serves), else litellm."""
    if openai_http.serves(model, api_base):
        return openai_http.DIRECT
    return LITELLM


def needs_litellm(config: Any) -> bool:
    """True when some model of `config` (a core.config.RunConfig) is called through litellm,
    so its import should start at once; False when every call takes the direct route
    (the user's own OpenAI-compatible servers, OpenAI's own API: core/llm/openai_http.py)."""
    models = [config.root_model, config.sub_model]
    models += [routed for routed, _ in getattr(config, "sub_call_models", {}).values()]
    return not all(openai_http.serves(m, config.api_base_for(m)) for m in models)
