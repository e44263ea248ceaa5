"""The one vocabulary of things that happen during a run.

The engine emits these; the store persists them; the GUI and the CLI fold them
into what they show. Replay feeds stored events through the very same fold, so
a replayed run looks exactly like the live one.

Every event carries:
  run_id     the run it belongs to
  seq        strictly increasing per run (assigned by the emitter, 1, 2, 3 ...)
  ts         wall-clock time (epoch seconds, float)
  call_id    the node of the call tree this event is about (may be None)
  parent_id  that node's parent in the call tree (may be None)

The call tree (ids are strings, unique within a run):
  rlm node     "R" for the top-level RLM; a nested RLM gets the call_id of the
               SubCallStarted(kind="rlm") that started it.
  turn node    CallId.for_turn(rlm_id, n) = "R.t3" (RootTurnStarted/RootTokens/RootReplied), parent = rlm id
  cell node    CallId.for_cell(turn_id, k) = "R.t3.c2" (CellStarted, then CellExecuted), parent = turn id
  sub-call     CallId.for_sub(rlm_id, n) = "R.s5" (SubCallStarted/Finished), parent = the cell that asked
               for it (or the turn id if no cell is known)
Events are plain frozen dataclasses; `to_dict`/`from_dict` give a JSON-safe form
that the store writes and replay reads back.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

EVENT_TYPES: dict[str, type["Event"]] = {}


@dataclass(frozen=True, kw_only=True)
class Event:
    type: ClassVar[str] = "Event"
    run_id: str
    seq: int = 0
    ts: float = field(default_factory=time.time)
    call_id: str | None = None
    parent_id: str | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.type = cls.__name__
        EVENT_TYPES[cls.__name__] = cls

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["type"] = self.type
        return data

    def payload(self) -> dict[str, Any]:
        """The fields specific to this event type (without the envelope)."""
        envelope = {"run_id", "seq", "ts", "call_id", "parent_id"}
        return {k: v for k, v in self.to_dict().items() if k not in envelope and k != "type"}


def from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from `Event.to_dict()` output. Unknown keys are ignored
    (forward compatible); an unknown type raises ValueError."""
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind or "")
    if cls is None:
        raise ValueError(f"unknown event type {kind!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    values = {k: v for k, v in data.items() if k in names}
    if cls is SubCallFinished and "subtree_cost_usd" not in values and values.get("kind") == "rlm":
        # Recorded before subtree_cost_usd: a nested RLM's cost_usd was its subtree's tally.
        values["subtree_cost_usd"], values["cost_usd"] = values.get("cost_usd", 0.0), 0.0
    return cls(**values)


@dataclass(frozen=True, kw_only=True)
class RunStarted(Event):
    question: str
    root_model: str
    sub_model: str
    config: dict[str, Any]            # RunConfig.public_dict(): caps and models, never keys
    documents: list[dict[str, Any]]   # [{"path", "chars"}], in context order
    total_chars: int
    version: str = ""
    parent_run_id: str | None = None  # a re-run, fork or follow-up names the run it came from
    unpriced_models: list[str] = field(default_factory=list)  # no known price: their cost is unknown, not $0
    evaluation_id: str | None = None  # the evaluation this run answers a question of (core/evaluation)
    # A fork names where it came from: {"run_id", "turn", "title"} (the parent's run name);
    # turns before `turn` were rebuilt from the parent's record (core/run_names.py: fork_line).
    forked_from: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class RootTurnStarted(Event):
    iteration: int                    # 1-based, per RLM
    depth: int                        # 0 for the top-level RLM
    model: str
    final_request: bool = False       # True for the one "give your best final answer" turn
    plain_call: bool = False          # the run's one plain call: its prompt carries the documents whole
    # Messages added to the root's conversation since its last reply (turn 1: the system
    # prompt and the first user message; later: the feedback). With RootReplied.text they
    # rebuild the exact conversation, each message stored once.
    new_messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class RootTokens(Event):
    delta: str


@dataclass(frozen=True, kw_only=True)
class RootReplied(Event):
    text: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    duration_ms: int
    model: str
    shortened_to: int | None = None   # the max_tokens the dollar cap granted, when below root_max_tokens
    finish_reason: str | None = None  # the provider's: "stop", "length" (cut at max_tokens), ...
    # The reply was read only as far as it was useful (core/engine/reply_reader.py); `text` is
    # what was kept: {reason: block|final|repetition, tokens, max_tokens, kept_chars,
    # received_chars, piece?}. None: read to its end.
    cut: dict[str, Any] | None = None
    # A fork's edited turn (core/engine/edited_turn.py): the stored reply with the code the
    # user wrote; not asked of the model, so it costs nothing.
    edited: bool = False


@dataclass(frozen=True, kw_only=True)
class RootCallFailed(Event):
    """A root call that ended without a reply (failed, refused on a retry, cancelled),
    with what its attempts used: the spend stays on its turn, as in the budget."""
    status: str                       # "error" | "refused" | "cancelled"
    error: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    duration_ms: int
    model: str


@dataclass(frozen=True, kw_only=True)
class CellStarted(Event):
    """A code cell begins to run (its sub-calls name it as their parent)."""
    index: int                        # 1-based within the turn
    code: str


@dataclass(frozen=True, kw_only=True)
class CellExecuted(Event):
    index: int                        # 1-based within the turn
    code: str
    stdout: str
    stderr: str
    error: str | None                 # traceback text, or a plain message for crashes/timeouts
    is_syntax_error: bool
    duration_ms: int
    output_for_model: str             # exactly what the root was shown (truncated)
    fault: str | None = None          # None | "timeout" | "crash" | "memory"
    restarted: bool = False           # the worker was restarted after this cell


@dataclass(frozen=True, kw_only=True)
class SubCallStarted(Event):
    kind: str                         # "llm" | "rlm"
    model: str
    prompt: str
    depth: int                        # depth of the RLM that asked for it


@dataclass(frozen=True, kw_only=True)
class SubCallFinished(Event):
    kind: str
    model: str
    status: str                       # "ok" | "error" | "refused" | "cancelled"
    response: str | None
    error: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float                   # the call's own cost (a nested RLM makes no call itself: 0)
    duration_ms: int
    # The type of the error slot the REPL was handed (None when ok): ApprovalDenied,
    # BudgetExceeded, ContextWindowExceeded, SubCallsOff, SubCallError, Cancelled, ...
    error_type: str | None = None
    usage_estimated: bool = False     # some attempt was settled on an estimate (no provider usage)
    shortened_to: int | None = None   # the max_tokens the dollar cap granted, when below sub_max_tokens
    finish_reason: str | None = None  # "length": the reply was cut at its max_tokens
    # Answered from the record of the run a fork's edited turn comes from (the stored turn
    # asked the same prompt): no call was made, nothing spent.
    from_record: bool = False
    # The call with everything below it (a nested RLM: its whole tally). None when not given:
    # then it is the call's own cost. Records made before this field (see `from_dict`) put a
    # nested RLM's tally in cost_usd.
    subtree_cost_usd: float | None = None

    def __post_init__(self) -> None:
        if self.subtree_cost_usd is None:
            object.__setattr__(self, "subtree_cost_usd", self.cost_usd)


@dataclass(frozen=True, kw_only=True)
class BudgetChanged(Event):
    spent_usd: float
    reserved_usd: float
    cap_usd: float | None
    input_tokens: int
    output_tokens: int
    sub_calls: int
    in_flight: int
    overrun_usd: float = 0.0          # settled above the reservations (the cap could not cover it)
    estimated_usage_calls: int = 0    # attempts settled on an estimate (the provider sent no usage)
    estimated_usd: float = 0.0
    nested_running: int = 0           # nested RLMs running now (behind their own limit)
    nested_waiting: int = 0           # nested RLMs queued for a slot
    waiting_for_budget: int = 0       # calls waiting for calls in flight to settle (SubCallWaiting)
    waiting_worst_usd: float = 0.0    # the most one of them may cost (its worst case)


@dataclass(frozen=True, kw_only=True)
class SubCallWaiting(Event):
    """A sub-call waits for budget: the dollar cap has room for fewer calls in flight than
    the concurrency, so it waits until calls in flight settle (`waiting` False: it goes on,
    or is refused). A waiting call is neither running nor finished."""
    waiting: bool
    worst_usd: float = 0.0            # what it may cost: the worst case it reserves when it goes


@dataclass(frozen=True, kw_only=True)
class Notice(Event):
    level: str                        # "info" | "warning" | "error"
    message: str


@dataclass(frozen=True, kw_only=True)
class RunFinished(Event):
    status: str                       # "finished" | "capped"
    answer: str | None
    totals: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class RunFailed(Event):
    status: str                       # "failed" | "cancelled"
    error: str
    answer: str | None
    totals: dict[str, Any]


TERMINAL_TYPES = frozenset({"RunFinished", "RunFailed"})
