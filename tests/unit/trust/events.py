"""A tiny builder of top-level run events for the trust unit tests."""

from __future__ import annotations

from typing import Any

from core import events as ev
from core.config import RunConfig


class Run:
    def __init__(self, run_id: str = "run-a", *, question: str = "q?", docs: list | None = None,
                 parent_run_id: str | None = None, **config: Any) -> None:
        self.run_id = run_id
        self.events: list[ev.Event] = []
        self.subs = 0
        cfg = RunConfig(root_model="openai/root", sub_model="openai/sub", **config)
        self.add(ev.RunStarted, "R", question=question, root_model=cfg.root_model, sub_model=cfg.sub_model,
                 config=cfg.public_dict(), documents=[{"path": d.path, "chars": len(d.text)} for d in docs or []],
                 total_chars=sum(len(d.text) for d in docs or []), parent_run_id=parent_run_id)

    def add(self, cls: type, call_id: str | None = None, parent_id: str | None = None, **fields: Any) -> Any:
        event = cls(run_id=self.run_id, seq=len(self.events) + 1, call_id=call_id, parent_id=parent_id, **fields)
        self.events.append(event)
        return event

    def turn(self, n: int, reply: str, new_messages: list | None = None, cost: float = 0.01) -> str:
        tid = f"R.t{n}"
        self.add(ev.RootTurnStarted, tid, "R", iteration=n, depth=0, model="openai/root",
                 new_messages=new_messages if new_messages is not None else [{"role": "user", "content": f"u{n}"}])
        self.add(ev.RootReplied, tid, "R", text=reply, input_tokens=100, output_tokens=20, cost_usd=cost,
                 duration_ms=5, model="openai/root")
        self.add(ev.BudgetChanged, spent_usd=cost * n, reserved_usd=0.0, cap_usd=None, input_tokens=0,
                 output_tokens=0, sub_calls=self.subs, in_flight=0)
        return tid

    def cell(self, turn: int, index: int, code: str, output: str, subs: list[tuple[str, str]] = (),
             status: str = "ok") -> str:
        cid = f"R.t{turn}.c{index}"
        self.add(ev.CellStarted, cid, f"R.t{turn}", index=index, code=code)
        for prompt, response in subs:
            self.subs += 1
            sid = f"R.s{self.subs}"
            self.add(ev.SubCallStarted, sid, cid, kind="llm", model="openai/sub", prompt=prompt, depth=0)
            self.add(ev.SubCallFinished, sid, cid, kind="llm", model="openai/sub", status=status,
                     response=response if status == "ok" else None, error=None if status == "ok" else response,
                     input_tokens=len(prompt) // 4, output_tokens=3, cost_usd=0.001, duration_ms=7)
        self.add(ev.CellExecuted, cid, f"R.t{turn}", index=index, code=code, stdout=output, stderr="",
                 error=None, is_syntax_error=False, duration_ms=3, output_for_model=output)
        return cid

    def finish(self, answer: str | None, cost: float = 0.05) -> list:
        self.add(ev.RunFinished, "R", status="finished", answer=answer,
                 totals={"cost_usd": cost, "input_tokens": 500, "output_tokens": 60, "iterations": 2})
        return self.events
