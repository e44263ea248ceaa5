"""Re-executing recorded cells in a fresh REPL worker, sub-calls answered from the record.

Used by verify (every cell, compared with the record) and fork (the turns before
the fork point, to rebuild the REPL's state). No model is called and nothing costs.

A sub-call is matched within the cell being replayed: first the next unused
recorded call of that cell if its prompt is the same (the usual case: same code,
same order), else any unused recorded call of the cell with that prompt (threads
may reorder). A prompt that is not in the record is a divergence; its slot gets
an error string so the cell can go on, and the miss is reported.
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass, field
from typing import Any, Sequence

from core.engine.admission import stored_prompt
from core.trust.record import RecordedCell, RecordedSubCall

log = logging.getLogger(__name__)

NOT_RECORDED = "ReplayDivergence"
DEPTH0_MESSAGE = "sub-calls are switched off in this run (depth 0): solve it with code"


@dataclass
class CellReplay:
    """What one cell did when it ran again."""
    stdout: str
    stderr: str
    error: str | None
    final: dict | None
    served: int = 0                                 # sub-calls answered from the record
    unmatched: list[str] = field(default_factory=list)   # prompts not in the record


class RecordedAnswers:
    """The REPL's on_sub_call during a replay: answers from the cell being replayed.
    `answer` is the same lookup for one prompt (a fork's edited turn, core/engine/edited_turn.py)."""

    def __init__(self, *, depth_zero: bool = False) -> None:
        self.depth_zero = depth_zero
        self._pool: list[RecordedSubCall] = []
        self._used: set[int] = set()
        self._cursor = 0
        self.served = 0
        self.unmatched: list[str] = []

    def begin(self, recorded: Sequence[RecordedSubCall]) -> None:
        self._pool, self._used, self._cursor = list(recorded), set(), 0
        self.served, self.unmatched = 0, []

    def _take(self, candidates: list[str]) -> RecordedSubCall | None:
        if self._cursor < len(self._pool) and self._cursor not in self._used \
                and self._pool[self._cursor].prompt in candidates:
            index = self._cursor
        else:
            index = next((i for i, s in enumerate(self._pool)
                          if i not in self._used and s.prompt in candidates), -1)
            if index < 0:
                return None
        self._used.add(index)
        while self._cursor in self._used:
            self._cursor += 1
        return self._pool[index]

    async def __call__(self, request: Any) -> list[dict]:
        if self.depth_zero and not self._pool:
            # A depth-0 run recorded before switched-off slots were recorded.
            return [{"error": {"type": "SubCallError", "message": DEPTH0_MESSAGE}} for _ in request.prompts]
        slots = []
        for prompt in request.prompts:
            slot = self.answer(prompt, request.kind, request.context)
            if slot is None:
                self.unmatched.append(prompt)
                slot = {"error": {"type": NOT_RECORDED, "message": "this prompt is not in the record of the run"}}
            slots.append(slot)
        return slots

    def answer(self, prompt: str, kind: str, context: str | None) -> dict | None:
        """The recorded slot for `prompt` (kind "llm"|"rlm"; at the depth limit an rlm_query
        was sent with its context appended), each recorded call used once; None: not recorded."""
        candidates = [prompt]
        if kind == "rlm" and context:
            candidates.append(f"{prompt}\n\n{context}")
        # a prompt refused before it was sent is recorded clipped (core/engine/admission.py)
        candidates += [c for c in map(stored_prompt, candidates) if c not in candidates]
        found = self._take(candidates)
        if found is None:
            return None
        self.served += 1
        return found.slot()


async def replay_cell(repl: Any, answers: RecordedAnswers, code: str, recorded: Sequence[RecordedSubCall],
                      *, timeout_s: float) -> CellReplay:
    answers.begin(recorded)
    result = await repl.execute(code, timeout_s=timeout_s)
    return CellReplay(stdout=result.stdout, stderr=result.stderr, error=result.error, final=result.final,
                      served=answers.served, unmatched=list(answers.unmatched))


def cell_differences(recorded: RecordedCell, replayed: CellReplay) -> str:
    """A unified diff of what differs (stdout, stderr, error); "" when the cell came out the same."""
    parts = []
    for name, old, new in (("stdout", recorded.stdout or "", replayed.stdout),
                           ("stderr", recorded.stderr or "", replayed.stderr),
                           ("error", recorded.error or "", replayed.error or "")):
        if old != new:
            parts.append("".join(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True),
                fromfile=f"{name} (recorded)", tofile=f"{name} (replayed)", n=2)))
    if replayed.unmatched:
        parts.append("sub-call prompts not in the record:\n" + "\n".join(
            f"  {p[:200]!r}" for p in replayed.unmatched))
    return "\n".join(p if p.endswith("\n") else p + "\n" for p in parts)
