"""The litellm route: core/llm/transport.py's Transport over `litellm.acompletion`.

For every provider that needs litellm's mapping (Anthropic, Gemini, Azure,
Bedrock, `ollama/...` names, OpenAI's own API): litellm turns the same Request
into that provider's call. Only this module (and litellm_import.py, which loads
it) touches litellm for a call; a run whose models all take the direct route
(core/llm/openai_http.py) never imports it.

The request: model, messages, max_tokens, temperature and reasoning_effort when
given, the key and api_base per call (never through os.environ), litellm's and
the openai SDK's own retries off (ours are the client's). Streamed calls ask for
`stream_options.include_usage`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from core.llm.litellm_import import litellm, litellm_async
from core.llm.transport import BadReply, Reply, Request, typed_errors


class LitellmTransport:
    name = "litellm"
    reports_sent = False               # litellm does not say when the request went out

    async def prepare(self) -> None:
        await litellm_async()       # the first import takes seconds: off the loop, and not part
                                    # of any attempt's duration

    async def send(self, request: Request, on_piece: Callable[[str], Any]) -> Reply:
        kwargs = call_kwargs(request)
        with typed_errors(request):
            async with asyncio.timeout(request.timeout_s):
                if request.stream:
                    return await _streamed(kwargs, on_piece)
                return await _plain(kwargs)


LITELLM = LitellmTransport()


def call_kwargs(request: Request) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": request.model, "messages": request.messages, "max_tokens": request.max_tokens,
        "timeout": request.timeout_s, "num_retries": 0, "max_retries": 0,
    }
    if request.api_base:
        kwargs["api_base"] = request.api_base
    if request.api_key:
        kwargs["api_key"] = request.api_key
    if request.reasoning_effort:
        kwargs["reasoning_effort"] = request.reasoning_effort
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    return kwargs


async def _plain(kwargs: dict[str, Any]) -> Reply:
    response = await litellm().acompletion(**kwargs)
    if not response.choices:                    # litellm returns `"choices": []` as a reply
        raise BadReply("the body has no choices")
    choice = response.choices[0]
    message = getattr(choice, "message", None)
    return Reply(getattr(message, "content", None) or "", getattr(choice, "finish_reason", None),
                 *_tokens(getattr(response, "usage", None)))


async def _streamed(kwargs: dict[str, Any], on_piece: Callable[[str], Any]) -> Reply:
    finish: str | None = None
    usage: Any = None
    parts: list[str] = []
    stream = await litellm().acompletion(**kwargs, stream=True, stream_options={"include_usage": True})
    async for chunk in stream:
        choices = getattr(chunk, "choices", None) or ()
        if choices:
            delta = getattr(choices[0], "delta", None)
            piece = getattr(delta, "content", None)
            if piece:
                parts.append(piece)
                if on_piece(piece):
                    await stream.aclose()      # closes the HTTP response: the server stops
                    return Reply("".join(parts), "cut", None, None)
            finish = getattr(choices[0], "finish_reason", None) or finish
        usage = getattr(chunk, "usage", None) or usage
    return Reply("".join(parts), finish, *_tokens(_provider_usage(stream, usage)))


def _tokens(usage: Any) -> tuple[int | None, int | None]:
    """(prompt, completion) tokens of a litellm usage object; prompt None when it has none."""
    prompt = getattr(usage, "prompt_tokens", None) or 0
    completion = getattr(usage, "completion_tokens", None) or 0
    return (int(prompt) if prompt > 0 else None), int(completion)


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
