"""A synthetic but realistic event stream of one run, for volume only: benchmarks and the
store tests whose point is a burst larger than any recording (kill-9 mid-stream, writer
contention). Store behaviour is tested over recorded engine runs (tests/support/record_runs.py).

    events = synthetic_run("run1", turns=2)      # RunStarted ... RunFinished, seq 1..n

Shape (ids as core/events.py describes): turns R.t1, R.t2 with streamed tokens;
cells R.tN.cK; llm sub-calls R.sM under cells; in turn 1 cell 1 a nested RLM
(kind rlm) with its own turn, cell and sub-call; BudgetChanged after each cell;
one syntax error in the last cell of turn 1.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from core import events as ev
from core.config import RunConfig

ROOT_MODEL = "openai/root-model"
SUB_MODEL = "openai/sub-model"


class _Emitter:
    def __init__(self, run_id: str, t0: float) -> None:
        self.run_id, self.t0 = run_id, t0
        self.seq = itertools.count(1)
        self.events: list[ev.Event] = []

    def __call__(self, cls: type[ev.Event], call_id: str | None = None, parent_id: str | None = None,
                 **fields: Any) -> ev.Event:
        seq = next(self.seq)
        event = cls(run_id=self.run_id, seq=seq, ts=self.t0 + seq * 0.01, call_id=call_id,
                    parent_id=parent_id, **fields)
        self.events.append(event)
        return event


def synthetic_run(run_id: str, *, question: str = "What were the total sales in 2023?",
                  answer: str = "Total sales in 2023 were 4.2 million euros.", turns: int = 2,
                  cells_per_turn: int = 2, subcalls_per_cell: int = 2, tokens_per_turn: int = 12,
                  nested: bool = True, documents: list[dict[str, Any]] | None = None,
                  t0: float | None = None, finish: bool = True, status: str = "finished",
                  root_model: str = ROOT_MODEL, sub_model: str = SUB_MODEL, cost_per_call: float = 0.001,
                  output_chars: int = 80, parent_run_id: str | None = None) -> list[ev.Event]:
    emit = _Emitter(run_id, time.time() if t0 is None else t0)
    config = RunConfig(root_model=root_model, sub_model=sub_model, max_depth=2, max_iterations=10,
                       max_cost_usd=5.0)
    documents = documents or [{"path": "sales/2023.csv", "chars": 120_000}, {"path": "notes.txt", "chars": 3_000}]
    extra = {"parent_run_id": parent_run_id} if parent_run_id else {}
    emit(ev.RunStarted, call_id="R", question=question, root_model=root_model, sub_model=sub_model,
         config=config.public_dict(), documents=documents, total_chars=sum(d["chars"] for d in documents),
         version="0.1.0", **extra)
    tally = {"cost_usd": 0.0, "input_tokens": 0, "output_tokens": 0, "iterations": 0, "sub_calls": 0,
             "cells": 0, "syntax_errors": 0}
    sub_ids = itertools.count(1)

    def spend(inp: int, out: int) -> None:
        tally["cost_usd"] = round(tally["cost_usd"] + cost_per_call, 10)
        tally["input_tokens"] += inp
        tally["output_tokens"] += out

    def budget() -> None:
        emit(ev.BudgetChanged, spent_usd=tally["cost_usd"], reserved_usd=0.0, cap_usd=5.0,
             input_tokens=tally["input_tokens"], output_tokens=tally["output_tokens"],
             sub_calls=tally["sub_calls"], in_flight=0)

    def turn(rlm_id: str, n: int, depth: int, model: str) -> str:
        turn_id = f"{rlm_id}.t{n}"
        emit(ev.RootTurnStarted, call_id=turn_id, parent_id=rlm_id, iteration=n, depth=depth, model=model)
        deltas = [f"tok{i} " for i in range(tokens_per_turn)] + ["\n```repl\nprint(len(context))\n```"]
        for delta in deltas:
            emit(ev.RootTokens, call_id=turn_id, parent_id=rlm_id, delta=delta)
        spend(1500, 300)
        emit(ev.RootReplied, call_id=turn_id, parent_id=rlm_id, text="".join(deltas), input_tokens=1500,
             output_tokens=300, cost_usd=cost_per_call, duration_ms=1200, model=model)
        if depth == 0:
            tally["iterations"] += 1
        return turn_id

    def sub_call(rlm_id: str, parent: str, depth: int, kind: str = "llm") -> str:
        call_id = f"{rlm_id}.s{next(sub_ids)}"
        prompt = f"Summarise chunk {call_id}: " + "lorem ipsum " * 20
        emit(ev.SubCallStarted, call_id=call_id, parent_id=parent, kind=kind, model=sub_model, prompt=prompt,
             depth=depth)
        tally["sub_calls"] += 1
        if kind == "rlm":
            nested_turn = turn(call_id, 1, depth + 1, sub_model)
            cell(call_id, nested_turn, 1, depth + 1, subcalls=1, syntax_error=False, allow_nested=False)
        spend(800, 120)
        emit(ev.SubCallFinished, call_id=call_id, parent_id=parent, kind=kind, model=sub_model, status="ok",
             response=f"answer of {call_id}", error=None, input_tokens=800, output_tokens=120,
             cost_usd=cost_per_call, duration_ms=700)
        budget()
        return call_id

    def cell(rlm_id: str, turn_id: str, k: int, depth: int, *, subcalls: int, syntax_error: bool,
             allow_nested: bool) -> None:
        cell_id = f"{turn_id}.c{k}"
        code = "for chunk in chunks:\n    print(llm_query(f'Summarise {chunk}'))" if not syntax_error else "print(("
        emit(ev.CellStarted, call_id=cell_id, parent_id=turn_id, index=k, code=code)
        for _ in range(0 if syntax_error else subcalls):     # a cell that does not parse calls nothing
            sub_call(rlm_id, cell_id, depth)
        if allow_nested and not syntax_error:
            sub_call(rlm_id, cell_id, depth, kind="rlm")
        out = ("x" * output_chars) if not syntax_error else ""
        error = "SyntaxError: '(' was never closed" if syntax_error else None
        emit(ev.CellExecuted, call_id=cell_id, parent_id=turn_id, index=k, code=code, stdout=out, stderr="",
             error=error, is_syntax_error=syntax_error, duration_ms=40, output_for_model=out or (error or ""))
        tally["cells"] += 1                      # the engine counts cells of every RLM in the tree
        tally["syntax_errors"] += int(syntax_error)

    for n in range(1, turns + 1):
        turn_id = turn("R", n, 0, root_model)
        for k in range(1, cells_per_turn + 1):
            cell("R", turn_id, k, 0, subcalls=subcalls_per_cell,
                 syntax_error=(n == 1 and k == cells_per_turn and cells_per_turn > 1),
                 allow_nested=(nested and n == 1 and k == 1))
    budget()
    if finish:
        totals = {**tally, "wall_ms": 4321, "runtime_errors": 0, "faults": 0, "refused_calls": 0}
        if status in ("finished", "capped"):
            emit(ev.RunFinished, call_id="R", status=status, answer=answer, totals=totals)
        else:
            emit(ev.RunFailed, call_id="R", status=status, error="the model server went away", answer=None,
                 totals=totals)
    return emit.events
