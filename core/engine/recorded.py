"""Answers from a record: the slots a stored cell's sub-calls got, matched to the prompts
a cell asks again (a replay, core/engine/replay.py; a fork's edited turn,
core/engine/edited_turn.py).

A prompt takes first the next unused recorded call if its prompt is the same (same
code, same order), else any unused recorded call with that prompt (threads may
reorder); each recorded call answers once.
"""

from __future__ import annotations

from typing import Any, Sequence

from core.engine.admission import stored_prompt


class RecordedSlots:
    def __init__(self, recorded: Sequence[tuple[str, dict[str, Any]]] = ()) -> None:
        self._pool = list(recorded)            # (prompt as recorded, the slot it got)
        self._used: set[int] = set()
        self._cursor = 0

    def __len__(self) -> int:
        return len(self._pool)

    def answer(self, prompt: str, kind: str, context: str | None) -> dict[str, Any] | None:
        """The recorded slot for `prompt` (kind "llm"|"rlm"; at the depth limit an rlm_query
        was sent with its context appended); None: not in the record."""
        candidates = [prompt]
        if kind == "rlm" and context:
            candidates.append(f"{prompt}\n\n{context}")
        # a prompt refused before it was sent is recorded clipped (core/engine/admission.py)
        candidates += [c for c in map(stored_prompt, candidates) if c not in candidates]
        if self._cursor < len(self._pool) and self._cursor not in self._used \
                and self._pool[self._cursor][0] in candidates:
            index = self._cursor
        else:
            index = next((i for i, (p, _) in enumerate(self._pool)
                          if i not in self._used and p in candidates), -1)
            if index < 0:
                return None
        self._used.add(index)
        while self._cursor in self._used:
            self._cursor += 1
        return self._pool[index][1]
