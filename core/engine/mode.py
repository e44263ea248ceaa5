"""RLM or one plain call: the run's mode, chosen and explained (DESIGN section 5).

    choice = await choose_with_server(config, prices, question, documents)
    choice.mode          # "rlm" | "direct"
    choice.sentence()    # "One plain call: the documents (130 tokens) fit easily in the 33k-token
                         #  window of lab/coder-7b, as llama.cpp reports it."

RunConfig.mode:
- "auto" (the default): one plain call when the question and the documents take at
  most AUTO_SHARE (a quarter) of the root model's context window, so the model reads
  them with room to spare and the answer fits beside them; the RLM otherwise. The window
  is the user's (Settings, a model's "context window"), else litellm's, else what the
  model's own server reports (llama.cpp, vLLM, Ollama, LM Studio: core/llm/server_window.py);
  the RLM when none gives one. A plain call is what the method's own
  authors advise for short inputs; a quarter keeps well clear of the degradation
  that long prompts bring even inside the window ("context rot").
- "rlm": always the RLM. "direct": always one plain call (refused with the numbers
  when it does not fit the window at all).
A follow-up or fork that goes on in a kept REPL is always the RLM.

The plain call is core/engine/direct.py (the one "RLM beside a plain call"
uses), made as the run's root turn: the same events (RootTurnStarted, RootTokens,
RootReplied), the budget reserving and settling it, and the record of any run.
The size is core/token_count.py's estimate (no tokenizer, so the direct route never
imports litellm for it; a large text is estimated from a spread sample of it), the one
Sources and "RLM beside a plain call" show.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

from core import events as ev

AUTO_SHARE = 0.25


@dataclass(frozen=True)
class ModeChoice:
    mode: str                    # "rlm" | "direct"
    reason: str                  # "one plain call: the documents are 12k of the model's 128k tokens"
    prompt_tokens: int | None = None
    window: int | None = None
    fit: Any = None              # core.engine.direct.DirectFit, for a plain call

    def sentence(self) -> str:
        return self.reason[:1].upper() + self.reason[1:] + "."

    def public_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "reason": self.reason, "prompt_tokens": self.prompt_tokens,
                "window": self.window}


def short(tokens: int) -> str:
    """12,345 -> '12k', 1,500 -> '1.5k', 900 -> '900'."""
    if tokens >= 10_000:
        return f"{round(tokens / 1000):,}k"
    if tokens >= 1_000:
        return f"{tokens / 1000:.1f}k".replace(".0k", "k")
    return f"{tokens:,}"


# Auto's estimate is the one every view shows (core/token_count.py), erring high on digits.
from core.token_count import estimate as estimate_tokens  # noqa: E402,F401  (re-exported)


def plain_call_tokens(question: str, documents: Sequence[Any]) -> int:
    """The plain call's prompt in tokens: the one estimate (core/token_count.py) that Sources
    and "RLM beside a plain call" show, so the mode's sentence says the same size. Counted
    without joining the documents: a joined copy of a 2 GB corpus would take 2 to 8 GB."""
    from core.engine.direct import plain_call_tokens as tokens
    return tokens(question, documents)


@dataclass
class Chosen:
    """The run's choice, filled in when its task has chosen (the run's ending reads it)."""
    value: ModeChoice


async def choose_with_server(config: Any, prices: Any, question: str, documents: Sequence[Any], *,
                             session: Any = None) -> ModeChoice:
    """choose(), after asking the root model's own server for its window when nothing else
    gives one (core/llm/server_window.py: about 1 s at most, cached, cancelled with the run)."""
    from core.engine.admission import context_window
    learned = None
    model = config.root_model
    if session is None and getattr(config, "mode", "auto") != "rlm" \
            and context_window(config, prices, model) is None:
        from core.llm.server_window import server_window
        learned = await server_window(config.api_base_for(model), model)
    return choose(config, prices, question, documents, session=session, learned=learned)


def choose(config: Any, prices: Any, question: str, documents: Sequence[Any], *,
           session: Any = None, learned: Any = None) -> ModeChoice:
    """`learned`: the window the root's server reported (server_window.ServerWindow), when
    neither the user nor litellm gives one."""
    from core.engine.admission import context_window
    from core.engine.direct import DirectFit
    mode = getattr(config, "mode", "auto")
    model = config.root_model
    label = config.label(model)
    if session is not None:
        return ModeChoice("rlm", "the RLM: the run goes on in its REPL")
    if mode == "rlm":
        return ModeChoice("rlm", "the RLM (mode rlm)")
    tokens = plain_call_tokens(question, documents)
    window = context_window(config, prices, model) or (learned.tokens if learned else None)
    reported = f", as {learned.source} reports it" if learned and window == learned.tokens else ""
    size = f"the documents are {short(tokens)} of the {short(window)}-token window of {label}" if window \
        else f"the documents are about {short(tokens)} tokens; the context window of {label} is unknown"
    fits = None if window is None else tokens + config.root_max_tokens <= window
    fit = DirectFit(fits, tokens, window, config.root_max_tokens, size)
    if mode == "direct":
        if fits is False:
            fit = DirectFit(False, tokens, window, config.root_max_tokens,
                            f"{size}: with {config.root_max_tokens:,} tokens for the answer they do not fit")
        return ModeChoice("direct", f"one plain call (mode direct): {size}", tokens, window, fit)
    documents_are = f"the documents ({short(tokens)} tokens)"
    if window is None:      # short: said at the top of every such run's transcript
        return ModeChoice("rlm", f"the RLM: the context window of {label} is unknown (its server does not "
                                 "report it; give the model a context window in Settings and Auto can choose)",
                          tokens, None)
    where = f"the {short(window)}-token window of {label}{reported}"
    if tokens <= window * AUTO_SHARE and fits:
        return ModeChoice("direct", f"one plain call: {documents_are} fit easily in {where}", tokens, window, fit)
    if not fits:
        return ModeChoice("rlm", f"the RLM: {documents_are} do not fit in {where}", tokens, window)
    return ModeChoice("rlm", f"the RLM: {documents_are} would fill more than a quarter of {where}, "
                             "and a model reads so long a prompt less well", tokens, window)


async def run_direct(ctx: Any, choice: ModeChoice, question: str, documents: Sequence[Any]) -> Any:
    """The run as one plain call, recorded as its root's one turn. Returns an RlmOutcome."""
    from core.engine.budget import BudgetExceeded
    from core.engine.costs import CallMeter
    from core.engine.outcome import RlmOutcome
    from core.engine.direct import ask_directly, direct_messages
    cfg, model, turn_id = ctx.config, ctx.config.root_model, "R.t1"
    messages = direct_messages(question, documents)
    ctx.counters.iterations = 1
    ctx.emit(ev.RootTurnStarted, call_id=turn_id, parent_id="R", iteration=1, depth=0, model=model,
             new_messages=messages, plain_call=True)
    meter = CallMeter(ctx, model, messages, cfg.root_max_tokens)
    started = time.monotonic()

    def on_delta(delta: str) -> None:
        ctx.emit(ev.RootTokens, call_id=turn_id, parent_id="R", delta=delta)

    def failed(status: str, error: str) -> None:
        ctx.emit(ev.RootCallFailed, call_id=turn_id, parent_id="R", status=status, error=error,
                 input_tokens=meter.input_tokens, output_tokens=meter.output_tokens, cost_usd=meter.cost_usd,
                 duration_ms=int((time.monotonic() - started) * 1000), model=model)

    try:
        result = await ask_directly(ctx.llm, ctx.prices, model, question, documents,
                                    max_tokens=cfg.root_max_tokens, fit=choice.fit, meter=meter,
                                    on_delta=on_delta, messages=messages)
    except BudgetExceeded as exc:
        ctx.cap_hit = ctx.cap_hit or "cost"
        failed("refused", str(exc))
        return RlmOutcome(None, "capped", f"dollar cap reached: {exc}")
    if result.status != "answered":
        failed("error", result.error or result.status)
        return RlmOutcome(None, "failed", f"the plain call failed: {result.error or result.status}")
    ctx.emit(ev.RootReplied, call_id=turn_id, parent_id="R", text=result.answer or "",
             input_tokens=meter.input_tokens, output_tokens=meter.output_tokens, cost_usd=meter.cost_usd,
             duration_ms=result.duration_ms, model=model)
    if not (result.answer or "").strip():
        return RlmOutcome(None, "failed", "the plain call returned an empty reply")
    return RlmOutcome(result.answer, "finished")
