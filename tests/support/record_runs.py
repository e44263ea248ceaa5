"""Record real engine runs as event fixtures for the store and export tests.

    /work/main/.venv/bin/python -m tests.support.record_runs        # rewrites tests/fixtures/recorded/*.json

Each recording is the real engine (real REPL worker, litellm over real HTTP) against
the scripted server, its events saved as `Event.to_dict()` JSON in emission order.
Tests load them with `recorded_run(name, run_id)`, which only renames the run and
may shift its clock; nothing else is edited. Re-record after a change to the event
vocabulary: the recordings must match what the engine emits.

  export     depth 2, priced: turn 1 runs a cell with two sub-calls and a nested RLM
             (its own turn, cell and sub-call) and a cell with a syntax error; the root's
             first attempt of turn 2 fails with an HTML-laden 500 (a retry notice); turn 2
             prints and finishes with an answer full of HTML and ``` fences.
  capped     the iteration cap: two turns without an answer, then the final request.
  failed     the root model refuses the key: a failed run with one turn.
  panes      every shape the run panes show, for the pane and view tests: turn 1 a cell that
             prints and one with a syntax error; turn 2 a cell with a batch of four sub-calls
             (one answered 429 every time: an error), 5,000 characters printed, and a sub-call
             to a model not allowed (refused); turn 3 a nested RLM (its own two turns, a cell and a sub-call) and a
             cell that never ends (a timeout, the REPL restarted); turn 4 FINAL in markdown.

Three small runs for the history tests (search, filters, id prefixes, CLI), each with its
own question, answer, models, status and price, so that every filter picks out one:
  sales      depth 2, priced high: turn 1 a cell with an llm sub-call and a cell with a
             syntax error; turn 2 answers "Total sales in 2023 were 4.2 million euros."
  supplier   root openai/claude-x, the iteration cap (2): the final request answers "Acme, 14 times."
  penalties  sub-model openai/qwen-local, priced low: one cell with a sub-call, then FINAL.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from core import events as ev

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "recorded"
EVIL = "<script>alert('pwned')</script>"
QUESTION = f"Why? {EVIL}"
ANSWER = f"Because {EVIL} & ```fences```"
ROOT, SUB = "openai/root-model", "openai/sub-model"


def recorded_events(name: str) -> list[dict[str, Any]]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))["events"]


def recorded_run(name: str, run_id: str, *, t0: float | None = None, finish: bool = True) -> list[ev.Event]:
    """A recording as events of run `run_id`; `t0` moves its clock to start there;
    finish=False drops the terminal event (a run cut off, as a killed app leaves it)."""
    rows = recorded_events(name)
    shift = 0.0 if t0 is None else t0 - rows[0]["ts"]
    events = [ev.from_dict({**row, "run_id": run_id, "ts": row["ts"] + shift}) for row in rows]
    return events if finish else [e for e in events if e.type not in ev.TERMINAL_TYPES]


def _code(*cells: str) -> str:
    return "Let me look.\n" + "".join(f"```repl\n{c}\n```\n" for c in cells)


def _documents() -> list[Any]:
    from tests.unit.store.test_sources import docs
    return docs()


async def _record(name: str, script: Any, **config: Any) -> dict[str, Any]:
    from core.config import Price, RunConfig
    from core.engine.run import Engine
    from tests.support.openai_server import ScriptedOpenAI
    events: list[ev.Event] = []
    with ScriptedOpenAI() as server:
        script(server)
        base = dict(root_model=ROOT, sub_model=SUB, api_base=server.url, max_depth=2, max_iterations=4,
                    max_cost_usd=5.0, prices={ROOT: Price(1.0, 4.0), SUB: Price(0.5, 2.0)}, cell_timeout_s=30,
                    max_retries=1, request_timeout_s=30, memory_limit_mb=2048)
        base.update(config)
        engine = Engine(RunConfig(**base), emit=events.append, key_for=lambda m: "sk-recording",
                        run_id=name, version="0.1.0")
        question = QUESTIONS.get(name, "What were the total sales in 2023?")
        result = await engine.run(question, _documents())
    return {"name": name, "status": result.status, "recorded_by": "tests/support/record_runs.py",
            "events": [e.to_dict() for e in events]}


def _export(server: Any) -> None:
    from tests.support.openai_server import Status

    def root(req: Any) -> str:
        first = next(m["content"] for m in req.messages if m["role"] == "user")
        if "Count the rows" in first:
            return _code("print(llm_query('rows: ' + context[:20]))\nFINAL('28 rows')")
        turn = sum(m["role"] == "assistant" for m in req.messages) + 1
        if turn == 1:
            return _code("for chunk in [context[:40], context[40:80]]:\n    print(llm_query(f'Summarise {chunk}'))\n"
                         "nested = rlm_query('Count the rows', context[:120])\nprint(nested)", "print((")
        return _code(f"print('odd output ' + {EVIL!r})\nFINAL({ANSWER!r})")

    server.script("root-model", fn=root, chunk_chars=24)
    server.script("sub-model", fn=lambda r: "answer of " + r.prompt[:24])
    # Turn 2's first attempt: a server error whose message is HTML (it reaches a Notice).
    state = {"n": 0}
    inner = root

    def with_error(req: Any) -> Any:
        if sum(m["role"] == "assistant" for m in req.messages) == 1 and "Count the rows" not in str(req.messages[1]):
            state["n"] += 1
            if state["n"] == 1:
                return Status(500, message=f"upstream said {EVIL}")
        return inner(req)

    server.script("root-model", fn=with_error, chunk_chars=24)


PANES_QUESTION = "What are the main risks named in the reports?"
PANES_ANSWER = "The main risks are **supply delays**, *currency exposure* and a pending lawsuit."
PANES_TURN1 = ("Let me look at the documents first.\n\n```repl\nprint(len(context))\nprint(context[:200])\n```\n\n"
               "And check the names:\n\n```repl\nfor d in documents\n    print(d)\n```\n")
PANES_SUB = {1: "Supply delays in Q3.", 3: "Currency exposure (USD/EUR).", 4: "A pending lawsuit."}


def _panes(server: Any) -> None:
    from tests.support.openai_server import Status

    def root(req: Any) -> str:
        first = next(m["content"] for m in req.messages if m["role"] == "user")
        turn = sum(m["role"] == "assistant" for m in req.messages) + 1
        if "Summarise the risks" in first:          # the nested RLM
            return (_code("print(llm_query('Page 1 of b.pdf: ' + context[:40]))") if turn == 1
                    else "FINAL(The PDF names a patent lawsuit.)")
        if turn == 1:
            return PANES_TURN1
        if turn == 2:
            return ("The context is large, so I will ask the sub model about each chunk.\n\n" +
                    _code("answers = llm_query_batched([f'List the risks in: chunk {n} ' + context[:40] "
                          "for n in range(1, 5)])\nprint(answers)\nprint('x' * 5000)\ntry:\n"
                          "    print(llm_query('List the risks in: chunk 5', model='openai/not-allowed'))\n"
                          "except Exception as exc:\n    print('refused:', exc)"))
        if turn == 3:
            return ("Now a nested RLM for the PDF, and a slow scan.\n\n" +
                    _code("summary = rlm_query('Summarise the risks in b.pdf', context[:120])\nprint(summary)",
                          "while True:\n    pass"))
        return f"I have what I need.\n\nFINAL({PANES_ANSWER})"

    def sub(req: Any) -> Any:
        if "chunk 2" in req.prompt:
            return Status(429, message="Too Many Requests")
        n = next((k for k in PANES_SUB if f"chunk {k}" in req.prompt), 0)
        return PANES_SUB.get(n, "Lawsuit over patents.")

    server.script("root-model", fn=root, chunk_chars=12)
    server.script("sub-model", fn=sub)


def _capped(server: Any) -> None:
    server.script("root-model", replies=[_code("print(len(context))"), _code("print(context[:30])"),
                                   "I need more time."])


def _failed(server: Any) -> None:
    from tests.support.openai_server import Status
    server.fail_next("root-model", Status(401))
    server.script("root-model", replies=["never sent"])


QUESTIONS = {"export": QUESTION, "panes": PANES_QUESTION, "supplier": "Which supplier was late most often?",
             "penalties": "List every contract clause about penalties"}


def _sales(server: Any) -> None:
    server.script("root-model", replies=[
        _code("print(llm_query('Sum the sales column: ' + context[:40]))", "print(("),
        _code("FINAL('Total sales in 2023 were 4.2 million euros.')")])
    server.script("sub-model", fn=lambda r: "about 4.2 million")


def _supplier(server: Any) -> None:
    server.script("claude-x", replies=[_code("print(len(context))"), _code("print(context[:30])"),
                                       "FINAL(Acme, 14 times.)"])


def _penalties(server: Any) -> None:
    server.script("root-model", replies=[_code("print(llm_query('Find penalty clauses: ' + context[:40]))"),
                                         _code("FINAL('Clauses 4.2 and 9.')")])
    server.script("qwen-local", fn=lambda r: "clauses 4.2 and 9")


def _priced(root: str, sub: str, factor: float) -> dict[str, Any]:
    from core.config import Price
    return {"root_model": root, "sub_model": sub,
            "prices": {root: Price(1.0 * factor, 4.0 * factor), sub: Price(0.5 * factor, 2.0 * factor)}}


RECORDINGS = {"export": (_export, {}), "capped": (_capped, {"max_iterations": 2}), "failed": (_failed, {}),
              "sales": (_sales, {}),   # prices: PRICING
              "supplier": (_supplier, {"max_iterations": 2}),
              "penalties": (_penalties, {}),
              "panes": (_panes, {"max_iterations": 10, "cell_timeout_s": 3, "max_cost_usd": 1.0})}
PRICING = {"sales": (ROOT, SUB, 10.0), "supplier": ("openai/claude-x", SUB, 1.0),
           "penalties": (ROOT, "openai/qwen-local", 0.01)}


async def record_all(names: list[str]) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name in names:
        script, config = RECORDINGS[name]
        if name in PRICING:
            config = {**config, **_priced(*PRICING[name])}
        data = await _record(name, script, **config)
        (FIXTURES / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n",
                                               encoding="utf-8")
        print(f"{name}: {data['status']}, {len(data['events'])} events")


if __name__ == "__main__":
    import os
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    asyncio.run(record_all(sys.argv[1:] or list(RECORDINGS)))
