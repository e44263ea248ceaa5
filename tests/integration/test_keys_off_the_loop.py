"""Keys are looked up for a run before it starts, in a thread: a keychain lookup (D-Bus,
perhaps an unlock prompt) never runs on the engine's loop while calls are in flight."""

from __future__ import annotations

import threading

from app.runner import QuestionRun
from core.store import RunStore
from tests.support.trust_runs import DOCS, KEY, code, config


async def test_no_key_is_looked_up_on_the_engine_loop(openai_server):
    openai_server.script("root", replies=[code("print(llm_query_batched(['a', 'b', 'c']))"), code("FINAL('done')")])
    openai_server.script("sub", fn=lambda r: "ok")
    loop_thread = threading.get_ident()
    lookups: list[tuple[str, bool]] = []

    def key_for(model: str) -> str:
        lookups.append((model, threading.get_ident() == loop_thread))
        return KEY

    with RunStore.open() as store:
        outcome = await QuestionRun("q", documents=DOCS, config=config(openai_server), store=store,
                                    key_for=key_for).execute()
    assert outcome.status == "finished" and outcome.answer == "done"
    assert {m for m, _ in lookups} >= {"openai/root", "openai/sub"}
    assert not [m for m, on_loop in lookups if on_loop], lookups
    assert all(r.api_key == KEY for r in openai_server.requests_for("sub") + openai_server.requests_for("root"))
