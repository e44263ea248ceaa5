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
from core.call_ids import parse


def _top(call_id: str | None, kind: str) -> Any:
    """The CallId of a top-level turn, cell or sub-call of that kind, else None."""
    parsed = parse(call_id)
    return parsed if parsed is not None and parsed.kind == kind and parsed.top else None


@dataclass
class RecordedSubCall:
    call_id: str
    parent_id: str | None
    kind: str
    model: str
    prompt: str
    status: str = "running"          # ok | error | refused | cancelled | running (never finished)
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
    record = RunRecord(run_id=run_id)
    turns: dict[str, RecordedTurn] = {}
    cells: dict[str, RecordedCell] = {}
    subs: dict[str, RecordedSubCall] = {}
    for e in events:
        t = e.type
        if t == "RunStarted":
            record.run_id = e.run_id
            record.question, record.root_model, record.sub_model = e.question, e.root_model, e.sub_model
            record.config, record.documents = dict(e.config), list(e.documents)
            record.parent_run_id = e.parent_run_id
        elif t == "RootTurnStarted" and _top(e.call_id, "turn"):
            turn = RecordedTurn(e.iteration, e.call_id, list(e.new_messages), e.final_request)
            turns[e.call_id] = turn
            record.turns.append(turn)
        elif t == "RootReplied" and e.call_id in turns:
            turns[e.call_id].reply = e.text
            turns[e.call_id].cost_usd = e.cost_usd
        elif t in ("CellStarted", "CellExecuted") and e.call_id:
            top = _top(e.call_id, "cell")
            if top is None or e.parent_id not in turns:
                continue
            cell = cells.get(e.call_id)
            if cell is None:
                cell = cells[e.call_id] = RecordedCell(e.call_id, top.turn, e.index, e.code)
                turns[e.parent_id].cells.append(cell)
            if t == "CellExecuted":
                cell.code, cell.stdout, cell.stderr, cell.error = e.code, e.stdout, e.stderr, e.error
                cell.output_for_model, cell.fault = e.output_for_model, e.fault
        elif t == "SubCallStarted" and e.call_id:
            sub = RecordedSubCall(e.call_id, e.parent_id, e.kind, e.model, e.prompt, depth=e.depth)
            subs[e.call_id] = sub
            record.sub_calls.append(sub)
            if _top(e.call_id, "sub") and e.parent_id in cells:
                cells[e.parent_id].sub_calls.append(sub)
        elif t == "SubCallFinished" and e.call_id in subs:
            sub = subs[e.call_id]
            sub.status, sub.response, sub.error = e.status, e.response, e.error
            sub.input_tokens, sub.output_tokens = e.input_tokens, e.output_tokens
            sub.cost_usd, sub.duration_ms, sub.subtree_cost_usd = e.cost_usd, e.duration_ms, e.subtree_cost_usd
            sub.error_type = getattr(e, "error_type", None)
        elif t in ev.TERMINAL_TYPES:
            record.status, record.answer, record.totals = e.status, e.answer, dict(e.totals)
    return record


def load_record(store: Any, run_id: str) -> RunRecord:
    return build_record(store.iter_events(run_id), run_id)
