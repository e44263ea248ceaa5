"""Helpers for the trust tests: real runs through app.runner.QuestionRun into a real
RunStore (the test's own RLMSTUDIO_DESKTOP_HOME), models served by the scripted server."""

from __future__ import annotations

import json
from typing import Any

from core.config import RunConfig
from core.ingest.model import Document, Span

ROOT, SUB = "openai/root", "openai/sub"
KEY = "sk-test-0123456789"


def doc(path: str, text: str, fmt: str = "text", spans: tuple = ()) -> Document:
    return Document(path=path, source_path=f"/nowhere/{path}", format=fmt, text=text, chars=len(text),
                    size=len(text.encode()), sha256=f"sha-{path}", spans=tuple(spans))


def report_pdf() -> Document:
    text = ("--- page 1 ---\nQuarterly report for ACME.\nRevenue grew in the north.\n"
            "--- page 2 ---\nRevenue in Q3 was 42 million dollars.\nCosts stayed flat.\n")
    first = text.index("--- page 2 ---")
    return doc("report.pdf", text, "pdf", (Span(0, first, "page 1"), Span(first, len(text), "page 2")))


DOCS = [doc("notes.txt", "alpha line one\nbeta line two\ngamma line three\n"), report_pdf()]


def code(src: str) -> str:
    return f"Working on it.\n```repl\n{src}\n```"


def config(server: Any, **kw: Any) -> RunConfig:
    base = dict(root_model=ROOT, sub_model=SUB, api_base=server.url, max_iterations=6, cell_timeout_s=20,
                max_retries=1, request_timeout_s=20, memory_limit_mb=2048)
    base.update(kw)
    return RunConfig(**base)


async def stored_run(server: Any, store: Any, question: str = "What was Q3 revenue?", docs: list | None = None,
                     **kw: Any) -> Any:
    from app.runner import QuestionRun
    run = QuestionRun(question, documents=docs or DOCS, config=config(server, **kw), store=store,
                      key_for=lambda m: KEY)
    return await run.execute()


# Three turns that build `lines` and `answers` (one batch of sub-calls): the run the fork
# and preparation tests fork, rebuild and verify.
THREE_TURNS = [
    code("lines = context.splitlines()\nprint(len(lines), 'lines')"),
    code("rev = [l for l in lines if 'Revenue in Q3' in l]\n"
         "answers = llm_query_batched(['Extract the number: ' + r for r in rev])\nprint(answers)"),
    code("FINAL('parent says ' + answers[0])"),
]


async def three_turn_run(server: Any, store: Any) -> str:
    """THREE_TURNS stored as a real run (sub-calls: "42" for the revenue line, "new:PROMPT"
    for any other); its run id."""
    server.script("root", replies=list(THREE_TURNS))
    server.script("sub", fn=lambda r: "42" if "Revenue" in r.prompt else f"new:{r.prompt}")
    outcome = await stored_run(server, store)
    assert outcome.answer == "parent says 42"
    return outcome.run_id


def tamper_event(store: Any, run_id: str, event_type: str, nth: int, field: str, value: Any) -> None:
    """Change one field of the nth (0-based) event of a type, as someone editing the database would."""
    rows = store.db.execute("SELECT id, payload_json FROM events WHERE run_id = ? AND type = ? ORDER BY seq",
                            [run_id, event_type]).fetchall()
    row_id, payload = rows[nth]
    data = json.loads(payload)
    data[field] = value
    store.db.execute("UPDATE events SET payload_json = ? WHERE id = ?", [json.dumps(data), row_id])
    store.db.conn.commit()
