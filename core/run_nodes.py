"""The values the fold of the record (core/run_record.py) is made of: the call tree's
nodes, turns, cells, the budget, the figures, the run's meta and notices, and the
`Change` one event made. Plain data, no logic beyond what a value says of itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.call_ids import CallId, parse as parse_call_id
from core.fences import display_prose

ROOT_ID = "R"
TERMINAL_STATUSES = frozenset({"finished", "capped", "failed", "cancelled"})


@dataclass(frozen=True, slots=True)
class Change:
    """What one event changed. `kind` is one of: run_started, turn_added, tokens,
    turn_replied, cell_started, cell_added, node_added, node_updated, budget,
    notice, finished, ignored."""
    kind: str
    turn_id: str | None = None
    cell_id: str | None = None
    added: tuple[str, ...] = ()      # tree nodes added, parents before children
    updated: tuple[str, ...] = ()    # tree nodes whose fields changed
    delta: str = ""                  # RootTokens text


@dataclass(slots=True, eq=False)
class Node:
    """One node of the call tree."""
    id: str
    kind: str                        # "rlm" | "turn" | "cell" | "llm"
    serial: int                      # creation order within the run (0 = "R")
    parent: "Node | None" = None
    row: int = 0                     # index among the parent's children
    children: list["Node"] = field(default_factory=list)
    status: str = "running"          # running|ok|error|refused|cancelled|syntax error|timeout|crash|memory|finished|capped|failed
    label: str = ""                  # "RLM", "turn 2", "cell 1", "llm", "rlm"
    model: str = ""                  # the name the user chose (RunConfig.model_labels)
    routed_model: str = ""           # the name the call was sent as
    prompt: str = ""
    response: str = ""
    error: str = ""
    error_type: str | None = None    # a sub-call's: the slot the REPL was handed
    preview: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0            # own call only
    duration_ms: int | None = None
    depth: int = 0
    started_ts: float | None = None
    subtree_cost_usd: float = 0.0    # own calls of this node and every node below, each once
    from_record: bool = False        # a fork's sub-call answered from the stored run

    @property
    def running(self) -> bool:
        return self.status == "running"

    @property
    def call(self) -> CallId | None:
        """The typed call id (None for an id that is not the engine's)."""
        return parse_call_id(self.id)


@dataclass(slots=True, eq=False)
class Cell:
    id: str
    turn_id: str
    index: int
    code: str = ""
    stdout: str = ""
    stderr: str = ""
    error: str | None = None
    is_syntax_error: bool = False
    fault: str | None = None         # None | "timeout" | "crash" | "memory"
    restarted: bool = False
    duration_ms: int | None = None
    output_for_model: str = ""
    done: bool = False
    node: Node | None = None         # its node in the tree (sub-calls hang below it)

    @property
    def output(self) -> str:
        """stdout, then stderr on a line of its own."""
        if not self.stderr:
            return self.stdout
        if self.stdout and not self.stdout.endswith("\n"):
            return f"{self.stdout}\n{self.stderr}"
        return self.stdout + self.stderr

    @property
    def error_kind(self) -> str | None:
        """None, "syntax", "fault" or "runtime"."""
        if self.fault:
            return "fault"
        if self.is_syntax_error:
            return "syntax"
        if self.error:
            return "runtime"
        return None

    def sub_calls(self) -> list[Node]:
        """The sub-calls and nested RLMs this cell made, in the order they started."""
        return [n for n in self.node.children if n.kind in ("llm", "rlm")] if self.node is not None else []


@dataclass(slots=True, eq=False)
class Turn:
    id: str
    rlm_id: str
    iteration: int
    depth: int = 0
    model: str = ""
    final_request: bool = False
    replied: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    duration_ms: int | None = None
    new_messages: list[dict[str, Any]] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)
    _parts: list[str] = field(default_factory=list)
    _text: str = ""

    @property
    def text(self) -> str:
        """The reply so far (authoritative once `replied`)."""
        if self._parts:
            self._text += "".join(self._parts)
            self._parts.clear()
        return self._text

    def stream(self, delta: str) -> None:
        self._parts.append(delta)

    def set_reply(self, text: str) -> None:
        self._parts.clear()
        self._text = text
        self.replied = True

    @property
    def reply(self) -> str | None:
        """The reply; None when the root never replied (the run stopped first)."""
        return self.text if self.replied else None

    @property
    def prose(self) -> str:
        return display_prose(self.text)

    @property
    def top(self) -> bool:
        """A turn of the top-level RLM."""
        return self.rlm_id == ROOT_ID


@dataclass(slots=True)
class Budget:
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    cap_usd: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    sub_calls: int = 0
    in_flight: int = 0
    overrun_usd: float = 0.0         # spent beyond the reservations: what the cap could not cover
    estimated_usage_calls: int = 0   # attempts whose cost is an estimate (no usage from the provider)
    nested_running: int = 0          # nested RLMs running now, behind their own limit
    nested_waiting: int = 0
    waiting_for_budget: int = 0      # sub-calls waiting for calls in flight to settle (the cap)
    waiting_worst_usd: float = 0.0   # the most one of them may cost
    unpriced: tuple = ()             # models (as the user named them) whose cost is unknown

    @property
    def fraction(self) -> float | None:
        """Spent over cap (None without a cap; 1.0 for a zero cap)."""
        if self.cap_usd is None:
            return None
        if self.cap_usd <= 0:
            return 1.0
        return self.spent_usd / self.cap_usd


@dataclass(slots=True)
class Figures:
    """Per-run figures that matter when choosing models."""
    cells: int = 0
    syntax_errors: int = 0
    runtime_errors: int = 0
    faults: int = 0
    sub_calls: int = 0
    sub_call_errors: int = 0
    refused_calls: int = 0
    iterations: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0

    @property
    def syntax_error_rate(self) -> float:
        return self.syntax_errors / self.cells if self.cells else 0.0


@dataclass(slots=True)
class Meta:
    run_id: str = ""
    question: str = ""
    root_model: str = ""
    sub_model: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    documents: list[dict[str, Any]] = field(default_factory=list)
    total_chars: int = 0
    version: str = ""
    parent_run_id: str | None = None     # a follow-up, re-run or fork names its run
    forked_from: dict[str, Any] | None = None   # a fork: {"run_id", "turn", "title"}

    @property
    def max_iterations(self) -> int | None:
        return self.config.get("max_iterations")

    def label(self, model: str) -> str:
        """The name the user chose for a routed model (RunConfig.model_labels); nodes
        carry it, so every pane shows what the user picked, not litellm's route."""
        labels = self.config.get("model_labels")
        return labels.get(model, model) if isinstance(labels, dict) and model else model

    @property
    def max_depth(self) -> int | None:
        return self.config.get("max_depth")


@dataclass(frozen=True, slots=True)
class NoticeItem:
    level: str
    message: str
    node_id: str | None
    ts: float
