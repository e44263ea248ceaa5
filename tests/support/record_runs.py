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
        result = await engine.run(QUESTION if name == "export" else "What were the total sales in 2023?",
                                  _documents())
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


def _capped(server: Any) -> None:
    server.script("root-model", replies=[_code("print(len(context))"), _code("print(context[:30])"),
                                   "I need more time."])


def _failed(server: Any) -> None:
    from tests.support.openai_server import Status
    server.fail_next("root-model", Status(401))
    server.script("root-model", replies=["never sent"])


RECORDINGS = {"export": (_export, {}), "capped": (_capped, {"max_iterations": 2}), "failed": (_failed, {})}


async def record_all(names: list[str]) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name in names:
        script, config = RECORDINGS[name]
        data = await _record(name, script, **config)
        (FIXTURES / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n",
                                               encoding="utf-8")
        print(f"{name}: {data['status']}, {len(data['events'])} events")


if __name__ == "__main__":
    import os
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    asyncio.run(record_all(sys.argv[1:] or list(RECORDINGS)))
