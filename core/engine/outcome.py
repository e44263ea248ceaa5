"""The small values of an RLM: its outcome, a document made of text, a kept Session,
the refusal of a root call. Apart from core/engine/rlm.py so that the plain-call mode
(core/engine/mode.py) and the sub-call code name them without importing the Rlm."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RlmOutcome:
    answer: str | None
    status: str                  # finished | capped | failed
    error: str | None = None


@dataclass(frozen=True)
class TextDocument:
    path: str
    text: str


class RootCallRefused(Exception):
    pass


@dataclass
class Session:
    """A live top-level REPL and the root's conversation, kept after a run so a
    follow-up question (or a fork rebuilt by re-execution) can continue from it.
    `edit`: a fork's edited turn (core/engine/edited_turn.EditedTurn), run as its turn 1."""
    repl: Any
    messages: list[dict]
    edit: Any = None

    async def close(self) -> None:
        await self.repl.close()
