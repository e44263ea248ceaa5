"""Shared helpers for engine integration tests: a real engine, real REPL worker,
real litellm over HTTP to the scripted server on 127.0.0.1."""

from __future__ import annotations

from dataclasses import dataclass

from core.config import Price, RunConfig
from core.engine.run import Engine

ROOT, SUB = "openai/root", "openai/sub"
KEY = "sk-test-0123456789"


@dataclass(frozen=True)
class Doc:
    path: str
    text: str


def code(src: str, tag: str = "repl") -> str:
    return f"Working on it.\n```{tag}\n{src}\n```"


def config(server, **kw) -> RunConfig:
    # mode="rlm": these tests script an RLM over tiny documents, which Auto would send as one
    # plain call once the root's window is known. Auto's own tests say mode="auto".
    base = dict(root_model=ROOT, sub_model=SUB, api_base=server.url, mode="rlm", max_iterations=6,
                cell_timeout_s=20, max_retries=2, request_timeout_s=20, memory_limit_mb=2048)
    base.update(kw)
    return RunConfig(**base)


PRICED = {ROOT: Price(1.0, 2.0), SUB: Price(0.5, 1.0)}


# Neither a what- nor a how-many question: the scripted answers of these tests (counts, words)
# are not sent back by the answer-kind check (core/engine/answer_kind.py), which has its own tests.
QUESTION = "Answer from the documents."


async def run(server, question=QUESTION, docs=None, *, key_for=None, **kw):
    events = []
    engine = Engine(config(server, **kw), emit=events.append, key_for=key_for or (lambda m: KEY))
    result = await engine.run(question, docs if docs is not None else [Doc("a.txt", "alpha beta gamma")])
    return result, events


def of_type(events, name):
    return [e for e in events if e.type == name]


def root_prompts(server):
    """The user messages the root model received, in order (the last of each request)."""
    return [r.messages[-1]["content"] for r in server.requests_for("root")]
