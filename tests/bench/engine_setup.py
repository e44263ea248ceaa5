"""Shared set-up of the engine benchmarks: config, documents, the litellm bound."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from core.config import RunConfig  # noqa: E402

KEY = "sk-bench"


@dataclass(frozen=True)
class Doc:
    path: str
    text: str


def cfg(url: str, **kw: Any) -> RunConfig:
    base: dict[str, Any] = dict(root_model="openai/root", sub_model="openai/sub", api_base=url,
                                max_iterations=40, concurrency=512, max_sub_calls=100_000,
                                cell_timeout_s=600, memory_limit_mb=None)
    base.update(kw)
    return RunConfig(**base)


def code(src: str) -> str:
    return f"```repl\n{src}\n```"


def key_for(model: str) -> str:
    return KEY


def events_of(events: list, kind: str) -> list:
    return [e for e in events if e.type == kind]


async def raw_call(url: str, model: str, messages: list[dict], *, stream: bool = False,
                   max_tokens: int = 16) -> None:
    """One litellm.acompletion exactly as a caller without the engine would make it."""
    from core.llm.litellm_import import litellm
    lm = litellm()
    if not stream:
        await lm.acompletion(model=model, api_base=url, api_key=KEY, messages=messages,
                             max_tokens=max_tokens, num_retries=0, max_retries=0)
        return
    response = await lm.acompletion(model=model, api_base=url, api_key=KEY, messages=messages,
                                     max_tokens=max_tokens, num_retries=0, max_retries=0, stream=True,
                                     stream_options={"include_usage": True})
    async for _ in response:
        pass
