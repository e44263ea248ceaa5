"""A stored run's top-level turns, cells and sub-calls, read back from its events.

Verify, fork and compare all need the same thing: the root turns of the top-level
RLM ("R.t1", "R.t2" ...), the cells each turn ran, and the sub-calls each cell made
(with their answers), in the order they happened. Nested RLMs ("R.s3.t1" ...) ran in
their own workers; from the top-level REPL's point of view a nested RLM is one
sub-call whose answer is recorded, so only top-level sub-calls ("R.sN") matter here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from core import events as ev
from core.run_nodes import Node
from core.run_record import fold_record


@dataclass
class RecordedSubCall:
    call_id: str
    parent_id: str | None
    kind: str
    model: str
    prompt: str
    status: str = "running"          # ok | error | refused | cancelled | running | waiting (for budget)
    response: str | None = None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    duration_ms: int = 0
    depth: int = 0
    error_type: str | None = None    # what the REPL was handed (recorded since SubCallFinished has it)
    subtree_cost_usd: float = 0.0    # with everything below it (a nested RLM: its whole tally)

    def slot(self) -> dict[str, Any]:
        """The result slot the engine handed the REPL for this call: the recorded
        error_type; for records made before it was recorded, a guess from the status
        and message."""
        if self.status == "ok" and self.response is not None:
            return {"ok": self.response}
        message = self.error or self.status
        if self.error_type:
            return {"error": {"type": self.error_type, "message": message}}
        if self.status == "refused":
            from core.engine.admission import refusal_type
            kind = refusal_type(message)         # BudgetExceeded, ModelNotAllowed or PriceUnknown
        elif message.startswith("prompt too large for "):
            kind = "ContextWindowExceeded"
        else:
            kind = "SubCallError"
        return {"error": {"type": kind, "message": message}}


@dataclass
class RecordedCell:
    call_id: str
    turn: int
    index: int
    code: str
    stdout: str | None = None        # None: the cell never finished in the record
    stderr: str = ""
    error: str | None = None
    output_for_model: str = ""
    fault: str | None = None
    sub_calls: list[RecordedSubCall] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.stdout is not None


@dataclass
class RecordedTurn:
    iteration: int
    call_id: str
    new_messages: list[dict[str, Any]]
    final_request: bool = False
    reply: str | None = None         # None: the root never replied (run stopped)
    cost_usd: float = 0.0
    cells: list[RecordedCell] = field(default_factory=list)


@dataclass
class RunRecord:
    run_id: str
    question: str = ""
    root_model: str = ""
    sub_model: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    documents: list[dict[str, Any]] = field(default_factory=list)   # [{"path", "chars"}]
    parent_run_id: str | None = None
    turns: list[RecordedTurn] = field(default_factory=list)
    sub_calls: list[RecordedSubCall] = field(default_factory=list)   # every sub-call, any depth
    status: str = "running"
    answer: str | None = None
    totals: dict[str, Any] = field(default_factory=dict)

    def turn(self, iteration: int) -> RecordedTurn | None:
        return next((t for t in self.turns if t.iteration == iteration), None)

    def cells(self) -> list[RecordedCell]:
        return [c for t in self.turns for c in t.cells]

    def conversation(self, upto: int | None = None) -> list[dict[str, Any]]:
        """The root's messages: every turn's new messages and reply; with `upto`=N the
        conversation as the root saw it when turn N was asked (without N's reply)."""
        messages: list[dict[str, Any]] = []
        for t in self.turns:
            if upto is not None and t.iteration > upto:
                break
            messages += [dict(m) for m in t.new_messages]
            if upto is not None and t.iteration == upto:
                break
            if t.reply is not None:
                messages.append({"role": "assistant", "content": t.reply})
        return messages


def build_record(events: Iterable[ev.Event], run_id: str = "") -> RunRecord:
    """The record of a run, read from the one fold of its events (core/run_record.py)."""
    fold = fold_record(events)
    m = fold.meta
    record = RunRecord(run_id=m.run_id or run_id, question=m.question, root_model=m.root_model,
                       sub_model=m.sub_model, config=dict(m.config), documents=list(m.documents),
                       parent_run_id=m.parent_run_id, answer=fold.answer, totals=dict(fold.totals),
                       status=fold.status if fold.finished else "running")
    subs = {n.id: _sub_call(n) for n in fold.sub_calls()}
    record.sub_calls = list(subs.values())
    for t in fold.top_turns():
        turn = RecordedTurn(t.iteration, t.id, list(t.new_messages), t.final_request,
                            t.text if t.replied else None, t.cost_usd)
        for c in t.cells:
            turn.cells.append(RecordedCell(
                c.id, t.iteration, c.index, c.code, c.stdout if c.done else None, c.stderr, c.error,
                c.output_for_model, c.fault,
                [subs[n.id] for n in c.sub_calls() if n.id in subs and (n.call is None or n.call.top)]))
        record.turns.append(turn)
    return record


def _sub_call(node: Node) -> RecordedSubCall:
    ok = node.status == "ok"
    return RecordedSubCall(
        node.id, node.parent.id if node.parent is not None else None, node.kind, node.routed_model, node.prompt,
        status=node.status, response=node.response if ok else (node.response or None), error=node.error or None,
        input_tokens=node.input_tokens, output_tokens=node.output_tokens, cost_usd=node.cost_usd,
        duration_ms=node.duration_ms or 0, depth=node.call.depth if node.call is not None else 0,
        error_type=node.error_type, subtree_cost_usd=node.subtree_cost_usd)


def load_record(store: Any, run_id: str) -> RunRecord:
    return build_record(store.iter_events(run_id), run_id)
