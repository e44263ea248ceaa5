"""The plain call beside the RLM: every document and the question in one prompt.

    fit = direct_fit(model, question, documents, prices, max_tokens, window=None)
    if fit.fits is not False:
        result = await ask_directly(client, prices, model, question, documents, max_tokens=...)

A direct call is only made when the prompt fits the model's context window (from
litellm's map or the user's `window`), leaving `max_tokens` for the answer. When it
does not fit, `fit.message` says so with the numbers and nothing is sent. When the
window is unknown (many local models) the call is tried and a context-length error
from the provider is reported the same way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

from core.engine import prompts
from core.repl.context_file import chars_of


@dataclass(frozen=True)
class DirectFit:
    fits: bool | None            # None: the window is unknown
    prompt_tokens: int
    window: int | None
    max_tokens: int
    message: str


@dataclass(frozen=True)
class DirectResult:
    status: str                  # answered | too_large | failed
    answer: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    duration_ms: int
    prompt_tokens: int
    window: int | None
    error: str | None = None

    def public_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def direct_messages(question: str, documents: Sequence[Any]) -> list[dict]:
    joined = "\n\n".join(f"=== {d.path} ===\n{d.text}" for d in documents)
    return [{"role": "system", "content": prompts.fill("direct_system.md")},
            {"role": "user", "content": prompts.fill("direct_user.md", documents=joined, question=question)}]


def plain_call_tokens(question: str, documents: Sequence[Any]) -> int:
    """The plain call's prompt in tokens (core/token_count.py's estimate), counted piece by
    piece: the prompt without documents, then each document's header and text, so no joined
    copy of the corpus is made (a 2 GB corpus would take 2 to 8 GB joined)."""
    from core.token_count import prompt_tokens, text_tokens
    tokens = prompt_tokens(direct_messages(question, ()))
    for d in documents:           # "=== path ===\n" + text, "\n\n" between (about one token)
        kept = getattr(d, "tokens", None)         # text_tokens(text), kept by ingestion: not read again
        tokens += text_tokens(f"=== {d.path} ===\n") + (text_tokens(d.text) if kept is None else int(kept)) + 1
    return tokens


def direct_fit(model: str, question: str, documents: Sequence[Any], prices: Any, max_tokens: int,
               window: int | None = None) -> DirectFit:
    from core.token_count import about_tokens
    tokens = plain_call_tokens(question, documents)   # the one estimate Sources and the mode use
    window = window or prices.context_window(model)
    chars = sum(map(chars_of, documents))
    if window is None:
        return DirectFit(None, tokens, None, max_tokens,
                         f"{len(documents):,} documents, {chars:,} characters, {about_tokens(tokens)}; "
                         f"the context window of {model} is unknown (tried anyway)")
    fits = tokens + max_tokens <= window
    verdict = "fit" if fits else "do not fit"
    return DirectFit(fits, tokens, window, max_tokens,
                     f"{len(documents):,} documents, {chars:,} characters, {about_tokens(tokens)} "
                     f"+ {max_tokens:,} for the answer {verdict} the {window:,}-token window of {model}")


async def ask_directly(client: Any, prices: Any, model: str, question: str, documents: Sequence[Any], *,
                       max_tokens: int, window: int | None = None, fit: DirectFit | None = None,
                       meter: Any = None, on_delta: Any = None, messages: list[dict] | None = None) -> DirectResult:
    """One plain call; never raises for a provider error (the result says what happened).

    A run in Auto or direct mode (core/engine/mode.py) passes the `fit` it decided on, the
    engine's `meter` (the budget reserves and settles the call, as for a root call) and
    `on_delta` (the reply is streamed into the transcript) and the `messages` it recorded (the
    same list is sent: one copy of the documents per call, not two); the budget's refusal is raised."""
    from core.llm.errors import LLMError
    fit = fit or direct_fit(model, question, documents, prices, max_tokens, window)
    if fit.fits is False:
        return DirectResult("too_large", None, 0, 0, 0.0, 0, fit.prompt_tokens, fit.window, fit.message)
    started = time.monotonic()
    try:
        reply = await client.complete(model, messages or direct_messages(question, documents), max_tokens=max_tokens,
                                      **({"meter": meter} if meter is not None else {}),
                                      **({"stream": True, "on_delta": on_delta} if on_delta else {}))
    except LLMError as exc:
        status = "too_large" if getattr(exc, "kind", "") == "context_window" else "failed"
        return DirectResult(status, None, 0, 0, 0.0, int((time.monotonic() - started) * 1000),
                            fit.prompt_tokens, fit.window, f"{fit.message}: {exc}")
    cost = meter.cost_usd if meter is not None else prices.cost_usd(model, reply.input_tokens, reply.output_tokens)
    return DirectResult("answered", reply.text.strip(), reply.input_tokens, reply.output_tokens, cost,
                        reply.duration_ms, fit.prompt_tokens, fit.window)
