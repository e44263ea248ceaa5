"""Compare two runs side by side: answers, cost, turns, sub-calls, and their first
point of difference (the first top-level turn whose reply or cell output differs).

    result = compare_runs(store, run_a, run_b)      # Comparison; .to_dict() for JSON
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from typing import Any

from core.engine.rebuild import inherited_replies, load_record
from core.run_record import RunRecord


@dataclass(frozen=True)
class RunSide:
    run_id: str
    question: str
    status: str
    answer: str | None
    root_model: str
    sub_model: str
    cost_usd: float
    input_tokens: int
    output_tokens: int
    turns: int
    cells: int
    sub_calls: int
    sub_call_errors: int
    parent_run_id: str | None


@dataclass(frozen=True)
class Difference:
    turn: int                    # 1-based top-level turn
    what: str                    # "reply" | "cell" | "turns" (one run has more turns)
    cell: int | None = None      # 1-based cell index when what == "cell"
    diff: str = ""               # unified diff of the differing text


@dataclass(frozen=True)
class Comparison:
    a: RunSide
    b: RunSide
    same_question: bool
    same_answer: bool
    answer_diff: str
    first_difference: Difference | None
    shared_prompts: int          # sub-call prompts both runs sent
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def side(record: RunRecord) -> RunSide:
    t, m = record.totals, record.meta
    calls = record.sub_calls()
    labels = m.config.get("model_labels")          # the names the user picked (RunConfig.model_labels)
    labels = labels if isinstance(labels, dict) else {}
    return RunSide(m.run_id, m.question, record.status, record.answer,
                   labels.get(m.root_model, m.root_model),
                   labels.get(m.sub_model, m.sub_model), float(t.get("cost_usd", 0.0)), int(t.get("input_tokens", 0)),
                   int(t.get("output_tokens", 0)), len(record.top_turns()), len(record.top_cells()), len(calls),
                   sum(1 for s in calls if s.status != "ok"), m.parent_run_id)


def _diff(a: str, b: str, name: str, run_a: str, run_b: str) -> str:
    return "".join(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                        fromfile=f"{name} ({run_a[:12]})", tofile=f"{name} ({run_b[:12]})", n=2))


def fork_offset(a: RunRecord, b: RunRecord) -> int:
    """When b continues a (a fork or follow-up of it), b's turn 1 answers a's turn offset+1."""
    if b.meta.parent_run_id != a.meta.run_id:
        return 0
    return max(len(inherited_replies(b)) - len(inherited_replies(a)), 0)


def first_difference(a: RunRecord, b: RunRecord) -> Difference | None:
    """Turns are numbered as in run a; a fork of a is aligned at its fork point."""
    offset = fork_offset(a, b)
    run_a, run_b = a.meta.run_id, b.meta.run_id
    a_turns, b_turns = a.top_turns()[offset:], b.top_turns()
    for ta, tb in zip(a_turns, b_turns):
        if (ta.reply or "") != (tb.reply or ""):
            return Difference(ta.iteration, "reply", None, _diff(ta.reply or "", tb.reply or "", "reply",
                                                                  run_a, run_b))
        for ca, cb in zip(ta.cells, tb.cells):
            if ca.output_for_model != cb.output_for_model:
                return Difference(ta.iteration, "cell", ca.index, _diff(
                    ca.output_for_model, cb.output_for_model, f"cell {ca.index} output", run_a, run_b))
        if len(ta.cells) != len(tb.cells):
            return Difference(ta.iteration, "cell", min(len(ta.cells), len(tb.cells)) + 1,
                              f"{len(ta.cells)} cell(s) against {len(tb.cells)}")
    if len(a_turns) != len(b_turns):
        inherited = f"{offset} inherited + " if offset else ""
        return Difference(offset + min(len(a_turns), len(b_turns)) + 1, "turns", None,
                          f"{len(a.top_turns())} turn(s) against {inherited}{len(b_turns)}")
    return None


def compare_records(a: RunRecord, b: RunRecord) -> Comparison:
    notes = []
    run_a, run_b = a.meta.run_id, b.meta.run_id
    if run_b and b.meta.parent_run_id == run_a:
        notes.append(f"{run_b[:12]} continues {run_a[:12]} from turn {fork_offset(a, b) + 1}")
    inherited = [r.meta.run_id[:12] for r in (a, b) if r.top_turns() and any(
        m.get("role") == "assistant" for m in r.top_turns()[0].new_messages)]
    if inherited:
        notes.append("continues another run (fork or follow-up): " + ", ".join(inherited)
                     + "; its turns are numbered from the fork point")
    prompts_a = {s.prompt for s in a.sub_calls()}
    shared = sum(1 for p in {s.prompt for s in b.sub_calls()} if p in prompts_a)
    return Comparison(side(a), side(b), a.meta.question == b.meta.question, a.answer == b.answer,
                      _diff(a.answer or "", b.answer or "", "answer", run_a, run_b),
                      first_difference(a, b), shared, notes)


def compare_runs(store: Any, run_a: str, run_b: str) -> Comparison:
    return compare_records(load_record(store, run_a), load_record(store, run_b))
