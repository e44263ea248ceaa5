"""ModelClient: one model call through litellm, with our retries and typed errors.

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
- Cancelling the awaiting task cancels the HTTP request: CancelledError goes
  through untouched and litellm's aiohttp transport closes the connection.
- A `meter` (AttemptMeter) sees every attempt: `await meter.begin(attempt)` before
  it is sent (the budget reserves its worst case there, and may refuse by raising),
  `meter.end(usage)` when it is over, whatever the outcome (AttemptUsage). So a
  retry reserves again, and the backoff in between holds no reservation.
  What a failed or cancelled attempt is taken to have used (`attempt_usage`):
    an HTTP error status (429, 5xx, 4xx) or no connection at all: nothing
      (the provider answered with an error, or never saw the request);
    anything else (a stream cut mid-way, a timeout, a body that is not JSON,
      a cancellation): its input tokens plus the tokens of the text received
      so far, both estimated (usage_estimated=True), since providers bill
      what they processed and streamed.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from core.llm.errors import LLMError, classify
from core.llm.litellm_import import litellm, litellm_async
from core.llm.pricing import estimate_text_tokens, estimate_tokens

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
    outcome: str              # "ok" | "failed" | "cancelled"
    error: LLMError | None = None


class AttemptMeter(Protocol):
    async def begin(self, attempt: int) -> None: ...
    def end(self, usage: AttemptUsage) -> None: ...


def attempt_usage(model: str, messages: list[dict], received: str, error: LLMError | None,
                  *, cancelled: bool = False) -> AttemptUsage:
    """The usage of an attempt that did not complete (see the module docstring)."""
    outcome = "cancelled" if cancelled else "failed"
    if error is not None and (error.status is not None or error.kind == "unreachable"):
        return AttemptUsage(0, 0, False, outcome, error)
    return AttemptUsage(estimate_tokens(model, messages), estimate_text_tokens(model, received),
                        True, outcome, error)


class _CallbackFailed(Exception):
    """An on_delta callback raised: that is the caller's bug, not a provider failure."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


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
        self._random = random.Random()

    async def complete(self, model: str, messages: list[dict], *, max_tokens: int,
                       stream: bool = False, on_delta: Callable[[str], None] | None = None,
                       on_retry: Callable[[int, LLMError], None] | None = None,
                       reasoning_effort: str | None = None,
                       temperature: float | None = None,
                       meter: AttemptMeter | None = None) -> Completion:
        kwargs = self._call_kwargs(model, messages, max_tokens, reasoning_effort, temperature)
        await litellm_async()   # the first import takes seconds: off the loop, and not part of
                                # any attempt's duration
        attempt = 0
        while True:
            attempt += 1
            received: list[str] = []
            if meter is not None:
                await meter.begin(attempt)
            try:
                if stream:
                    reply = await self._streamed(model, messages, kwargs, on_delta, attempt, received)
                else:
                    reply = await self._plain(model, messages, kwargs, attempt)
            except _CallbackFailed as failed:
                if meter is not None:
                    meter.end(attempt_usage(model, messages, "".join(received), None))
                raise failed.error from None
            except asyncio.CancelledError:
                if meter is not None:
                    meter.end(attempt_usage(model, messages, "".join(received), None, cancelled=True))
                raise
            except (LLMError, Exception) as exc:
                error = classify(exc, model, self.api_base_for(model))
                if meter is not None:
                    meter.end(attempt_usage(model, messages, "".join(received), error))
            else:
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
        kwargs: dict[str, Any] = {
            "model": model, "messages": messages, "max_tokens": max_tokens,
            "timeout": self.timeout_s, "num_retries": 0, "max_retries": 0,
        }
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

    async def _plain(self, model: str, messages: list[dict], kwargs: dict[str, Any],
                     attempt: int) -> Completion:
        started = time.monotonic()
        async with asyncio.timeout(self.timeout_s):
            response = await litellm().acompletion(**kwargs)
        choice = response.choices[0] if response.choices else None
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None) or ""
        finish = getattr(choice, "finish_reason", None)
        return self._completion(model, messages, text, getattr(response, "usage", None), finish,
                                started, attempt)

    async def _streamed(self, model: str, messages: list[dict], kwargs: dict[str, Any],
                        on_delta: Callable[[str], None] | None, attempt: int,
                        parts: list[str]) -> Completion:
        started = time.monotonic()
        finish: str | None = None
        usage: Any = None
        async with asyncio.timeout(self.timeout_s):
            stream = await litellm().acompletion(**kwargs, stream=True,
                                                 stream_options={"include_usage": True})
            async for chunk in stream:
                choices = getattr(chunk, "choices", None) or ()
                if choices:
                    delta = getattr(choices[0], "delta", None)
                    piece = getattr(delta, "content", None)
                    if piece:
                        parts.append(piece)
                        if on_delta is not None:
                            try:
                                on_delta(piece)
                            except Exception as exc:
                                raise _CallbackFailed(exc) from exc
                    finish = getattr(choices[0], "finish_reason", None) or finish
                usage = getattr(chunk, "usage", None) or usage
        usage = _provider_usage(stream, usage)
        return self._completion(model, messages, "".join(parts), usage, finish, started, attempt)

    def _completion(self, model: str, messages: list[dict], text: str, usage: Any,
                    finish: str | None, started: float, attempt: int) -> Completion:
        prompt_tokens = getattr(usage, "prompt_tokens", None) or 0
        completion_tokens = getattr(usage, "completion_tokens", None) or 0
        estimated = prompt_tokens <= 0
        if estimated:
            prompt_tokens = estimate_tokens(model, messages)
            completion_tokens = completion_tokens or estimate_text_tokens(model, text)
        return Completion(text=text, input_tokens=int(prompt_tokens),
                          output_tokens=int(completion_tokens),
                          duration_ms=int((time.monotonic() - started) * 1000), model=model,
                          finish_reason=finish, attempts=attempt, usage_estimated=estimated)


def _provider_usage(stream: Any, seen: Any) -> Any:
    """The usage the provider itself sent in the stream, or None.

    At the end of a stream litellm adds a usage chunk of its own, computed with
    its token counter when the provider sent none; that one is an estimate.
    The provider's own chunks are kept on the stream wrapper (`chunks`)."""
    raw = getattr(stream, "chunks", None)
    if not isinstance(raw, list):
        return seen          # a litellm without `chunks`: take what came out
    for chunk in reversed(raw):
        usage = getattr(chunk, "usage", None)
        if usage is not None and (getattr(usage, "prompt_tokens", 0) or 0) > 0:
            return usage
    return None
