"""Hand-typed event streams, for what no recorded engine run produces.

The pane and view tests read real engine runs (tests/support/record_runs.py, "panes" has
every shape the panes show). What stays here: `Stream`, to build an event a test needs
and no run emits (deltas after a reply, unknown parents, a call still in flight, a failed
run's card), and `big_run(5000)`, a long run of exactly that many events shaped like a
real one (mostly token deltas, batches of sub-calls, budget updates) for the speed tests.
"""

from __future__ import annotations

from typing import Any

from core import events as ev
from core.config import RunConfig

RUN_ID = "run-test"


class Stream:
    """Builds events with increasing seq and a simulated clock."""

    def __init__(self, run_id: str = RUN_ID, start: float = 1_700_000_000.0, step: float = 0.01) -> None:
        self.run_id = run_id
        self.events: list[ev.Event] = []
        self.ts = start
        self.step = step
        self.spent = 0.0
        self.tokens_in = 0
        self.tokens_out = 0
        self.sub_calls = 0
        self.in_flight = 0
        self.cap: float | None = None

    def add(self, cls: type[ev.Event], call_id: str | None = None, parent_id: str | None = None,
            advance: float | None = None, **fields: Any) -> ev.Event:
        self.ts += self.step if advance is None else advance
        event = cls(run_id=self.run_id, seq=len(self.events) + 1, ts=self.ts, call_id=call_id,
                    parent_id=parent_id, **fields)
        self.events.append(event)
        return event

    def start(self, question: str = "What are the main risks named in the reports?", *,
              cap: float | None = 1.0, max_iterations: int = 10, max_depth: int = 2) -> None:
        self.cap = cap
        config = RunConfig(root_model="openai/root-model", sub_model="openai/sub-model", max_cost_usd=cap,
                           max_iterations=max_iterations, max_depth=max_depth)
        self.add(ev.RunStarted, "R", question=question, root_model=config.root_model,
                 sub_model=config.sub_model, config=config.public_dict(),
                 documents=[{"path": "a.txt", "chars": 120_000}, {"path": "b.pdf", "chars": 80_000}],
                 total_chars=200_000, version="0.1.0")

    def budget(self) -> None:
        self.add(ev.BudgetChanged, spent_usd=round(self.spent, 10), reserved_usd=0.002 * self.in_flight,
                 cap_usd=self.cap, input_tokens=self.tokens_in, output_tokens=self.tokens_out,
                 sub_calls=self.sub_calls, in_flight=self.in_flight)

    def turn(self, rlm_id: str, n: int, text: str, *, depth: int = 0, chunk: int = 12,
             final_request: bool = False) -> str:
        turn_id = f"{rlm_id}.t{n}"
        self.add(ev.RootTurnStarted, turn_id, rlm_id, iteration=n, depth=depth, model="openai/root-model",
                 final_request=final_request)
        for i in range(0, len(text), chunk):
            self.add(ev.RootTokens, turn_id, rlm_id, advance=0.005, delta=text[i:i + chunk])
        tin, tout = 1500 + 300 * n, max(len(text) // 4, 1)
        cost = tin * 1e-6 + tout * 4e-6
        self.tokens_in += tin
        self.tokens_out += tout
        self.spent += cost
        self.add(ev.RootReplied, turn_id, rlm_id, text=text, input_tokens=tin, output_tokens=tout,
                 cost_usd=cost, duration_ms=1200, model="openai/root-model")
        self.budget()
        return turn_id

    def cell(self, turn_id: str, k: int, code: str) -> str:
        cell_id = f"{turn_id}.c{k}"
        self.add(ev.CellStarted, cell_id, turn_id, index=k, code=code)
        return cell_id

    def cell_done(self, turn_id: str, k: int, code: str, *, stdout: str = "", error: str | None = None,
                  syntax: bool = False, fault: str | None = None) -> None:
        self.add(ev.CellExecuted, f"{turn_id}.c{k}", turn_id, index=k, code=code, stdout=stdout, stderr="",
                 error=error, is_syntax_error=syntax, duration_ms=40, output_for_model=stdout or (error or ""),
                 fault=fault, restarted=fault is not None)

    def sub_start(self, rlm_id: str, n: int, parent: str, prompt: str, kind: str = "llm",
                  depth: int = 0) -> str:
        call_id = f"{rlm_id}.s{n}"
        self.sub_calls += 1
        self.in_flight += 1
        self.add(ev.SubCallStarted, call_id, parent, kind=kind, model="openai/sub-model", prompt=prompt,
                 depth=depth)
        return call_id

    def sub_done(self, call_id: str, parent: str, status: str = "ok", response: str | None = "fine",
                 error: str | None = None, kind: str = "llm") -> None:
        self.in_flight -= 1
        tin, tout = (0, 0) if status == "refused" else (800, 60)
        cost = tin * 2e-7 + tout * 8e-7
        self.tokens_in += tin
        self.tokens_out += tout
        self.spent += cost
        self.add(ev.SubCallFinished, call_id, parent, advance=0.05, kind=kind, model="openai/sub-model",
                 status=status, response=response, error=error, input_tokens=tin, output_tokens=tout,
                 cost_usd=cost, duration_ms=900)

    def notice(self, level: str, message: str, call_id: str | None = None) -> None:
        self.add(ev.Notice, call_id, level=level, message=message)

    def finish(self, answer: str, status: str = "finished") -> None:
        self.add(ev.RunFinished, "R", status=status, answer=answer,
                 totals={"cost_usd": round(self.spent, 10), "input_tokens": self.tokens_in,
                         "output_tokens": self.tokens_out, "sub_calls": self.sub_calls})


def big_run(n_events: int = 5000, run_id: str = "run-big") -> list[ev.Event]:
    """A finished run of exactly `n_events` events."""
    s = Stream(run_id, step=0.002)
    s.start(max_iterations=1000, cap=50.0)
    n = 0
    sub_n = 0
    prose = ("I will look at the next part of the documents and collect what the sub model "
             "finds about **risks**, keeping notes in a list. ") * 4
    while len(s.events) < n_events - 400:
        n += 1
        code = f"part = context[{n} * 1000:{n + 1} * 1000]\nnotes.append(llm_query_batched([part] * 8))\nprint(len(notes))"
        tid = s.turn("R", n, f"{prose}\n\n```repl\n{code}\n```\n", chunk=6)
        c = s.cell(tid, 1, code)
        ids = []
        for _ in range(8):
            sub_n += 1
            ids.append(s.sub_start("R", sub_n, c, f"Chunk {sub_n}: " + "text " * 60))
        s.budget()
        for i, call_id in enumerate(ids):
            s.sub_done(call_id, c, status="error" if i == 7 and n % 5 == 0 else "ok",
                       response=f"Risk {sub_n}-{i}", error="timeout" if i == 7 and n % 5 == 0 else None)
        s.budget()
        s.cell_done(tid, 1, code, stdout=f"{n}\n")
    n += 1
    tid = f"R.t{n}"
    s.add(ev.RootTurnStarted, tid, "R", iteration=n, depth=0, model="openai/root-model")
    while len(s.events) < n_events - 2:
        s.add(ev.RootTokens, tid, "R", delta="more ")
    text = "".join(e.delta for e in s.events if isinstance(e, ev.RootTokens) and e.call_id == tid)
    s.add(ev.RootReplied, tid, "R", text=text, input_tokens=100, output_tokens=10, cost_usd=0.001,
          duration_ms=100, model="openai/root-model")
    s.finish("Done: risks collected.")
    assert len(s.events) == n_events, len(s.events)
    return s.events
