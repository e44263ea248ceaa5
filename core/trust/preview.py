"""Cost preview before a run and the projected cost to finish during one.

    p = preview_cost(config, total_chars, store=store)    # CostPreview: tokens and a dollar range
    proj = CostProjection(); proj.apply(event) ...; proj.projection()

Before a run: from similar past runs in the store (finished or capped runs with the
same root and sub model and depth; else the same depth with any models) the range
of what they used: root tokens per run (the root sees metadata, not the documents,
so its use follows the number of turns) and sub-call tokens per character of
context (sub-calls read the documents). With no such run, a heuristic:

  root   3 to min(max_iterations, 10) turns; turn k sends about 2,500 + 1,500*(k-1)
         input tokens (system prompt, metadata, the growing history) and writes
         400 (low) to 1,000 (high) output tokens
  sub    (max_depth >= 1) input 0.3x (low) to 1.5x (high) the context's tokens
         (chars / 4): a run reads part of the documents, or all of them with overlap
         and instructions; output 5% (low) to 15% (high) of that input

Dollars use the same prices as the engine (RunConfig.prices, then litellm's map);
the high end never exceeds the run's dollar cap. Unknown prices give None.
`first_call_usd` is the worst case of the first root call by the engine's own
function (core/engine/costs.py), which the engine reserves before sending it. A call
too dear at full length is shortened to fit (core/engine/budget.py), so the run is
blocked only when the cap cannot pay even the first call's input and the shortest
useful reply (ROOT_FLOOR_TOKENS), or when a model has no known price and a cap is set:
`blocker` says why in the window's words, `fixes` are the buttons beside it
((action id, label): "set_cap:USD", "mark_free:MODEL", "set_price:MODEL", "no_cap").
`reach` says how far the cap goes: about how many sub-calls of SUB_CALL_CHARS (or the
documents, when smaller) it pays for after the first turn and what is kept back for the
root's next one (`root_keep_usd`).

During a run: spent so far, plus the average cost of a root turn (with its cells'
sub-calls) times the turns expected to remain (expected: the median turns of the
similar runs, or 5), and at worst up to max_iterations (never past the cap).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from core.run_record import RunRecord

CHARS_PER_TOKEN = 4
DEFAULT_EXPECTED_TURNS = 5
SUB_CALL_CHARS = 50_000          # the chunk the root's prompt shows as its example (example_llm.md)


@dataclass(frozen=True)
class CostPreview:
    root_model: str
    sub_model: str
    context_chars: int
    context_tokens: int
    input_tokens: tuple[int, int]        # (low, high)
    output_tokens: tuple[int, int]
    usd_low: float | None                # None: a model has no known price
    usd_high: float | None
    basis: str                           # "history" | "heuristic"
    similar_runs: int
    expected_turns: int
    notes: list[str] = field(default_factory=list)
    first_call_usd: float | None = None  # the worst case of the first root call (what is reserved)
    blocker: str = ""                    # why the run cannot start, in the window's words
    fixes: list[tuple[str, str]] = field(default_factory=list)   # (action id, button label)
    reach: str = ""                      # how far the cap goes ("pays for at least N sub-calls ...")
    root_keep_usd: float | None = None   # kept back for one later root turn at its floor
    # What the cap will do to a run that can start (a 2nd root turn it cannot pay, sub-calls it
    # throttles), and fixes that set exact values: Run stays enabled and says the consequence.
    warning: str = ""
    warning_fixes: list[tuple[str, str]] = field(default_factory=list)
    consequence: str = ""                # Run's own words for it ("Run: ... ")


    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Usage:
    root_in: int
    root_out: int
    sub_in: int
    sub_out: int
    chars: int
    turns: int


def similar_usage(store: Any, config: Any, limit: int = 20) -> list[_Usage]:
    runs = [r for r in store.list_runs(limit=200)
            if r["status"] in ("finished", "capped") and (r["total_chars"] or 0) > 0
            and r["max_depth"] == config.max_depth]
    same = [r for r in runs if r["root_model"] == config.root_model and r["sub_model"] == config.sub_model]
    usage = []
    for r in (same or runs)[:limit]:
        root_in = root_out = sub_in = sub_out = 0
        for c in store.calls(r["id"]):
            if c["kind"] == "root":
                root_in, root_out = root_in + c["input_tokens"], root_out + c["output_tokens"]
            elif c["kind"] == "sub":
                sub_in, sub_out = sub_in + c["input_tokens"], sub_out + c["output_tokens"]
        usage.append(_Usage(root_in, root_out, sub_in, sub_out, r["total_chars"], max(r["iterations"] or 1, 1)))
    return usage


def _cost(prices: Any, model: str, tokens_in: int, tokens_out: int) -> float | None:
    if prices.price(model) is None:
        return None
    return prices.cost_usd(model, tokens_in, tokens_out)


def first_call(config: Any, prices: Any, total_chars: int, question: str = "",
               documents: list[tuple[str, int]] | None = None) -> Any:
    """The worst case of the run's first root call, by the engine's own function
    (core.engine.costs.worst_case): what the engine reserves before sending it. Without
    the question and documents, their metadata is taken at its largest."""
    from core.engine.costs import first_root_messages, worst_case
    from core.engine.prompts import PREFIX_CHARS
    docs = documents or [("documents", total_chars)]
    messages = first_root_messages(config, question or "?" * 500, docs, "x" * PREFIX_CHARS)
    return worst_case(prices, config.root_model, messages, config.root_max_tokens)


def preview_cost(config: Any, total_chars: int, *, store: Any = None, prices: Any = None,
                 question: str = "", documents: list[tuple[str, int]] | None = None) -> CostPreview:
    if prices is None:
        from core.llm.pricing import PriceBook
        prices = PriceBook.for_config(config)
    notes: list[str] = []
    first = first_call(config, prices, total_chars, question, documents)
    first_usd = first.usd if first.input_per_m is not None else None
    blocker, fixes = _blocker(config, prices, first)
    if blocker:
        notes.append(blocker)
    reach, keep = _reach(config, prices, first, total_chars)
    if reach:
        notes.append(reach)
    warning, warning_fixes, consequence = ("", [], "") if blocker else \
        cap_warning(config, prices, first, total_chars, keep)
    usage = similar_usage(store, config) if store is not None else []
    context_tokens = -(-total_chars // CHARS_PER_TOKEN)
    subs = config.max_depth >= 1
    if usage:
        basis, turns = "history", int(statistics.median(u.turns for u in usage))
        root_in = (min(u.root_in for u in usage), max(u.root_in for u in usage))
        root_out = (min(u.root_out for u in usage), max(u.root_out for u in usage))
        per_char_in = [u.sub_in / u.chars for u in usage]
        per_char_out = [u.sub_out / u.chars for u in usage]
        sub_in = (int(min(per_char_in) * total_chars), int(max(per_char_in) * total_chars)) if subs else (0, 0)
        sub_out = (int(min(per_char_out) * total_chars), int(max(per_char_out) * total_chars)) if subs else (0, 0)
        notes.append(f"from {len(usage)} similar past run(s)")
    else:
        basis, turns = "heuristic", DEFAULT_EXPECTED_TURNS
        high_turns = max(3, min(config.max_iterations, 10))
        root_in = (sum(2500 + 1500 * k for k in range(3)), sum(2500 + 1500 * k for k in range(high_turns)))
        root_out = (400 * 3, 1000 * high_turns)
        sub_in = (int(0.3 * context_tokens), int(1.5 * context_tokens)) if subs else (0, 0)
        sub_out = (int(0.05 * sub_in[0]), int(0.15 * sub_in[1]))
        notes.append("no similar past run: a heuristic estimate (see docs/trust.md)")
    low_parts = [_cost(prices, config.root_model, root_in[0], root_out[0])]
    high_parts = [_cost(prices, config.root_model, root_in[1], root_out[1])]
    if subs:
        low_parts.append(_cost(prices, config.sub_model, sub_in[0], sub_out[0]))
        high_parts.append(_cost(prices, config.sub_model, sub_in[1], sub_out[1]))
    usd_low = None if None in low_parts else sum(low_parts)
    usd_high = None if None in high_parts else sum(high_parts)
    if usd_low is None:
        notes.append("a model has no known price: give it one (or mark it free) to see dollars")
    cap = config.max_cost_usd
    if cap is not None and usd_high is not None and usd_high > cap:
        usd_high = cap
        usd_low = min(usd_low or 0.0, cap)
        notes.append(f"the dollar cap (${cap:g}) bounds the high end")
    return CostPreview(config.root_model, config.sub_model, total_chars, context_tokens,
                       (root_in[0] + sub_in[0], root_in[1] + sub_in[1]),
                       (root_out[0] + sub_out[0], root_out[1] + sub_out[1]),
                       usd_low, usd_high, basis, len(usage), turns, notes, first_usd, blocker, fixes,
                       reach, keep, warning, warning_fixes, consequence)


def _blocker(config: Any, prices: Any, first: Any) -> tuple[str, list[tuple[str, str]]]:
    """Why a run with these settings cannot start, and the fixes the window offers."""
    import math
    from core.engine.costs import ROOT_FLOOR_TOKENS
    cap = config.max_cost_usd
    if cap is None:
        return "", []
    models = [config.root_model] + ([config.sub_model] if config.max_depth >= 1 else [])
    unpriced = [m for m in dict.fromkeys(models) if prices.price(m) is None]
    if unpriced:
        names = " and ".join(config.label(m) for m in unpriced)
        fixes = [(f"mark_free:{config.label(m)}", f"Mark {config.label(m)} free") for m in unpriced]
        fixes += [(f"set_price:{config.label(unpriced[0])}", "Set a price…"), ("no_cap", "Run without a cap")]
        return (f"No price is known for {names}, so a dollar cap cannot be kept. If it runs on this "
                "computer, mark it free; if it is paid, give it a price; or run without a cap."), fixes
    floor = min(config.root_max_tokens, ROOT_FLOOR_TOKENS)
    least = first.input_usd + floor * (first.output_per_m or 0) / 1e6
    if least <= cap + 1e-12:
        return "", []
    need = math.ceil(round(least * 100, 6)) / 100       # the cap box shows cents
    return (f"The dollar cap ${cap:.4f} cannot pay even a short first root call: its input could cost "
            f"up to ${first.input_usd:.4f} ({first.input_tokens:,} tokens) and a reply of {floor:,} "
            f"tokens ${floor * (first.output_per_m or 0) / 1e6:.4f}."), [(f"set_cap:{need:.2f}", f"Set the cap to ${need:.2f}")]


def _reach(config: Any, prices: Any, first: Any, total_chars: int) -> tuple[str, float | None]:
    """About how many sub-calls the cap pays for after the root's first turn and the
    reserve for its next one ("", None without a cap or a price). Inputs are counted at
    CHARS_PER_TOKEN (the reservations count a token a byte, about 4x more, but settle at
    the real count), replies at their full max_tokens; the first turn at its floor length
    (a longer one is shortened to fit)."""
    from core.engine.costs import ROOT_FLOOR_TOKENS, root_reserve
    cap = config.max_cost_usd
    if cap is None or config.max_depth < 1 or first.input_per_m is None:
        return "", None
    root_price, sub_price = prices.price(config.root_model), prices.price(config.sub_model)
    if root_price is None or sub_price is None:
        return "", None
    floor = min(config.root_max_tokens, ROOT_FLOOR_TOKENS)
    first_in = first.input_tokens / CHARS_PER_TOKEN
    first_usd = min((first_in * root_price.input_per_m + floor * root_price.output_per_m) / 1e6, cap)
    feedback = (config.max_output_chars + 200) / CHARS_PER_TOKEN     # one cell's output, at most
    need = ((first_in + feedback) * root_price.input_per_m + floor * root_price.output_per_m) / 1e6
    keep = root_reserve(need, cap, first_usd)
    chars = max(min(SUB_CALL_CHARS, total_chars or SUB_CALL_CHARS), 1)
    one = (chars / CHARS_PER_TOKEN * sub_price.input_per_m + config.sub_max_tokens * sub_price.output_per_m) / 1e6
    if one <= 0:
        return f"Sub-calls are free; about ${keep:.4f} of the cap is kept back for the root's next turn.", keep
    count = max(int((cap - first_usd - keep) // one), 0)
    size = f"{chars / 1000:.0f}k characters" if chars >= 1000 else f"{chars:,} characters"
    return (f"This cap pays for about {count:,} sub-call{'s' if count != 1 else ''} of {size} (each reply "
            f"up to {config.sub_max_tokens:,} tokens); about ${keep:.4f} is kept back for the root's "
            "next turn."), keep


def cap_warning(config: Any, prices: Any, first: Any, total_chars: int,
                keep: float | None) -> tuple[str, list[tuple[str, str]], str]:
    """(warning, fixes, Run's consequence) when a cap that lets the run start will still bite:
    it cannot pay a second root turn (reserved as the engine does: the first turn's input, a
    reply at the floor and one cell's output, a byte a token), or it leaves room for fewer
    sub-calls in flight than the concurrency (each reserves its input and a full reply)."""
    from core.engine.costs import ROOT_FLOOR_TOKENS
    from core.limits import cents_up
    cap = config.max_cost_usd
    root_price = prices.price(config.root_model)
    if cap is None or root_price is None or first.input_per_m is None:
        return "", [], ""
    floor = min(config.root_max_tokens, ROOT_FLOOR_TOKENS)
    first_usd = min((first.input_tokens / CHARS_PER_TOKEN * root_price.input_per_m
                     + floor * root_price.output_per_m) / 1e6, cap)
    second_in = first.input_tokens + floor * CHARS_PER_TOKEN + config.max_output_chars + 200
    second = (second_in * root_price.input_per_m + floor * root_price.output_per_m) / 1e6
    if first_usd + second > cap + 1e-12:
        need = cents_up(first_usd + second)
        return (f"The dollar cap ${cap:.2f} pays for the first root turn but not a second (it may "
                f"cost up to ${second:.4f}): unless the root answers at once, the run ends without "
                f"an answer. Set the cap to ${need:.2f} for a second turn."), \
            [(f"set_cap:{need}", f"Set the cap to ${need:.2f}")], \
            "Run: the cap cannot pay a 2nd root turn; without an answer in the 1st, there is none."
    sub_price = prices.price(config.sub_model)
    if config.max_depth < 1 or sub_price is None or sub_price.output_per_m <= 0:
        return "", [], ""
    chars = max(min(SUB_CALL_CHARS, total_chars or SUB_CALL_CHARS), 1)
    input_usd = (chars + 48) * sub_price.input_per_m / 1e6
    one = input_usd + config.sub_max_tokens * sub_price.output_per_m / 1e6
    room = cap - first_usd - (keep or 0.0)
    slots = max(int(room // one), 0)
    target = min(config.concurrency, 8)
    if slots >= target:
        return "", [], ""
    fixes: list[tuple[str, str]] = []
    tokens = int((room / target - input_usd) * 1e6 / sub_price.output_per_m) // 256 * 256
    if 256 <= tokens < config.sub_max_tokens:
        fixes.append((f"set_sub_max_tokens:{tokens}", f"Lower the sub reply limit to {tokens:,} tokens"))
    need = cents_up(first_usd + (keep or 0.0) + target * one)
    fixes.append((f"set_cap:{need}", f"Set the cap to ${need:.2f}"))
    return (f"The dollar cap ${cap:.2f} leaves room for about {slots} sub-call{'s' if slots != 1 else ''} "
            f"in flight at once (each reserves up to ${one:.4f}: a reply of up to "
            f"{config.sub_max_tokens:,} tokens); the others wait for budget, so many sub-calls run "
            "slowly."), fixes, f"Run: sub-calls will wait for budget, about {slots} at a time."


class CostProjection:
    """What the run will probably cost by the time it finishes, read from the one fold of
    its events (core/run_record.py): its own, or the `record` a caller already folds."""

    def __init__(self, *, expected_turns: int = DEFAULT_EXPECTED_TURNS, record: RunRecord | None = None) -> None:
        self.expected_turns = expected_turns
        self.record = record if record is not None else RunRecord(keep_texts=False)

    def apply(self, event: Any) -> bool:
        """Fold one event; True when it can change the projection."""
        self.record.apply(event)
        return event.type in _MOVES

    def projection(self) -> dict[str, Any]:
        """{spent_usd, turns, projected_usd, high_usd, finished}."""
        record = self.record
        spent, finished = record.budget.spent_usd, record.finished
        turns = sum(1 for t in record.top_turns() if t.replied)
        if finished or turns == 0:
            return {"spent_usd": spent, "turns": turns, "projected_usd": spent, "high_usd": spent,
                    "finished": finished}
        max_iterations, cap = record.meta.max_iterations, record.meta.config.get("max_cost_usd")
        per_turn = spent / turns
        expected = max(self.expected_turns, turns + 1)
        if max_iterations:
            expected = min(expected, max_iterations + 1)
        most = (max_iterations or expected) + 1          # +1: the final-answer request at the cap
        projected, high = per_turn * max(expected, turns), per_turn * max(most, turns)
        if cap is not None:
            projected, high = min(projected, cap), min(high, cap)
        return {"spent_usd": spent, "turns": turns, "projected_usd": max(projected, spent),
                "high_usd": max(high, spent), "finished": False}


_MOVES = frozenset({"RunStarted", "BudgetChanged", "RootReplied", "RunFinished", "RunFailed"})
