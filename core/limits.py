"""What the caps and limits changed in a run: counted from its events, said in words.

    limits = Limits()
    limits.observe(event)              # every event of the run, live or replayed
    totals["limited"] = limits.as_dict()
    line = summary(totals["limited"])  # "8 of 8 sub-calls were refused by the dollar cap: ..."
    action, label = fix(totals["limited"]) # ("cost", "Raise the dollar cap…"): the flag's button

A run that a cap or limit changed is still "finished" (or "capped"), but its answer may
rest on less than the root asked for, so the run carries it, and every place that shows
the answer shows the summary (the window's answer card, History, exports, `--json`, the
CLI's exit code 4). Counted:

- refused sub-calls, by the limit that refused them (the dollar cap, the sub-call cap, a
  price nobody knows under a cap, the model's context window, the approval gate, a model
  the run may not call, sub-calls off at depth 0);
- cells cut by the per-cell time limit;
- calls shortened to fit the dollar cap (granted fewer max_tokens than asked);
- replies (root turns and sub-calls) cut at their max_tokens (finish reason "length").
A root reply the engine stops reading on purpose (after its code block) is not a limit.

Everything comes from the events, so the store, replay and exports compute the same
numbers as the engine did live. Only plain data here: no engine, no store, no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.call_ids import parse as parse_call_id

# SubCallFinished.error_type -> the limit, in words (the dollar and sub-call caps share a type)
LIMIT_NAMES = {
    "BudgetExceeded": "the dollar cap",
    "PriceUnknown": "an unknown price under the dollar cap",
    "ContextWindowExceeded": "the sub model's context window",
    "ApprovalDenied": "the approval gate",
    "ModelNotAllowed": "the models this run may call",
    "SubCallsOff": "depth 0 (sub-calls off)",
}
# How a refused call names the cap that would have paid it (core/engine/costs.py,
# explain_no_fit): the fix button sets that value.
CAP_NEEDED = "a dollar cap of at least $"
SUB_CALL_CAP = "the sub-call cap"
SUB_CALL_CAP_MARK = "sub-call cap reached"


def limit_of(error_type: str | None, message: str | None) -> str | None:
    """The limit that refused a sub-call slot, or None when no limit did (ok, failed, cancelled)."""
    if error_type == "BudgetExceeded" and (message or "").startswith(SUB_CALL_CAP_MARK):
        return SUB_CALL_CAP
    return LIMIT_NAMES.get(error_type or "")


@dataclass
class Limits:
    sub_calls: int = 0                     # slots answered (every SubCallFinished)
    refused: dict[str, int] = field(default_factory=dict)
    cut_cells: int = 0
    shortened_calls: int = 0
    truncated_replies: int = 0
    refused_root_turn: int | None = None   # the top-level root turn the dollar cap refused
    cap_needed_usd: float | None = None    # the cap its refusal named

    def observe(self, event: Any) -> None:
        kind = getattr(event, "type", type(event).__name__)
        if kind == "RootCallFailed" and event.status == "refused" and self.refused_root_turn is None:
            place = parse_call_id(event.call_id)
            if place is not None and place.top and place.kind == "turn" and place.turn:
                self.refused_root_turn = place.turn
                self.cap_needed_usd = cap_named(event.error)
        elif kind == "SubCallFinished":
            self.sub_calls += 1
            limit = limit_of(event.error_type, event.error)
            if limit is not None:
                self.refused[limit] = self.refused.get(limit, 0) + 1
            if getattr(event, "shortened_to", None) is not None:
                self.shortened_calls += 1
            if getattr(event, "finish_reason", None) == "length":
                self.truncated_replies += 1
        elif kind == "RootReplied":
            if getattr(event, "shortened_to", None) is not None:
                self.shortened_calls += 1
            if getattr(event, "finish_reason", None) == "length":
                self.truncated_replies += 1
        elif kind == "CellExecuted" and event.fault == "timeout":
            self.cut_cells += 1

    def as_dict(self) -> dict[str, Any]:
        return {"refused_sub_calls": sum(self.refused.values()), "refused_by": dict(self.refused),
                "sub_calls": self.sub_calls, "cut_cells": self.cut_cells,
                "shortened_calls": self.shortened_calls, "truncated_replies": self.truncated_replies,
                "refused_root_turn": self.refused_root_turn, "cap_needed_usd": self.cap_needed_usd}


def cap_named(error: str | None) -> float | None:
    """The dollar cap a refusal's message names ("... a dollar cap of at least $0.0127.")."""
    text = error or ""
    at = text.find(CAP_NEEDED)
    if at < 0:
        return None
    digits = text[at + len(CAP_NEEDED):].split()[0].rstrip(".,;)")
    try:
        return float(digits)
    except ValueError:
        return None


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def cents_up(usd: float) -> float:
    """The cap box shows cents: `usd` rounded up to the next cent, so it still covers it."""
    import math
    return math.ceil(round(usd * 100, 6)) / 100


def is_limited(limited: dict[str, Any] | None) -> bool:
    if not limited:
        return False
    return bool(limited.get("refused_sub_calls") or limited.get("cut_cells")
                or limited.get("shortened_calls") or limited.get("truncated_replies")
                or limited.get("refused_root_turn"))


def summary(limited: dict[str, Any] | None) -> str | None:
    """One sentence for the answer's flag, or None when no limit changed the run."""
    if not is_limited(limited):
        return None
    assert limited is not None
    parts = []
    refused = int(limited.get("refused_sub_calls") or 0)
    if refused:
        by = limited.get("refused_by") or {}
        names = sorted(by, key=lambda k: -by[k])
        where = " and ".join(names[:2]) + (" and other limits" if len(names) > 2 else "")
        total = max(int(limited.get("sub_calls") or 0), refused)
        parts.append(f"{refused:,} of {total:,} sub-call{'s' if total != 1 else ''} "
                     f"{'were' if refused != 1 else 'was'} refused by {where}")
    cut = int(limited.get("cut_cells") or 0)
    if cut:
        parts.append(f"{cut:,} cell{'s' if cut != 1 else ''} stopped at the time limit")
    short = int(limited.get("shortened_calls") or 0)
    if short:
        parts.append(f"{short:,} repl{'ies' if short != 1 else 'y'} shortened to fit the dollar cap")
    replies = int(limited.get("truncated_replies") or 0)
    if replies:
        parts.append(f"{replies:,} repl{'ies' if replies != 1 else 'y'} cut at {'their' if replies != 1 else 'its'} "
                     "max tokens")
    turn = limited.get("refused_root_turn")
    if turn:      # the run ended there, without an answer: that is the headline
        head = f"The cap refused the {ordinal(int(turn))} root turn: no answer."
        return head if not parts else f"{head} Before it, {'; '.join(parts)}."
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + ": this answer may be incomplete."


def fix(limited: dict[str, Any] | None) -> tuple[str, str] | None:
    """The way forward the answer's flag offers as a button: (action id, label), in the
    window's words (no command-line advice); None when there is none or nothing was limited.
    Action ids: "cost", "sub_calls", "prices", "sub_model", "cell_time", "models"."""
    if not is_limited(limited):
        return None
    assert limited is not None
    by = limited.get("refused_by") or {}
    needed = limited.get("cap_needed_usd")
    if limited.get("refused_root_turn") and needed:
        return f"set_cap:{needed}", f"Set the cap to ${cents_up(float(needed)):.2f}"
    if "the dollar cap" in by:
        return "cost", "Raise the dollar cap…"
    if SUB_CALL_CAP in by:
        return "sub_calls", "Raise the sub-call cap…"
    if "an unknown price under the dollar cap" in by:
        return "prices", "Set a price…"
    if "the sub model's context window" in by:
        return "sub_model", "Pick another sub model…"
    if limited.get("cut_cells"):
        return "cell_time", "More time per cell…"
    if limited.get("shortened_calls"):
        return "cost", "Raise the dollar cap…"
    if limited.get("truncated_replies"):
        return "models", "Raise max tokens…"
    return None
