"""Re-executing recorded cells in a fresh REPL worker, sub-calls answered from the record.

Used by a fork and a rebuild (the turns before the fork point, to rebuild the REPL's
state: core/engine/rebuild.py) and by verify (every cell, compared with the record). No model is called and nothing costs.

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

from core.engine.recorded import RecordedSlots
from core.run_nodes import Cell, Node

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
    """The REPL's on_sub_call during a replay: answers from the cell being replayed
    (core/engine/recorded.py matches them)."""

    def __init__(self, *, depth_zero: bool = False) -> None:
        self.depth_zero = depth_zero
        self.slots = RecordedSlots()
        self.served = 0
        self.unmatched: list[str] = []

    def begin(self, recorded: Sequence[Node]) -> RecordedSlots:
        """Answer from `recorded` (sub-call nodes of the fold) from now on; returns their RecordedSlots."""
        self.slots = RecordedSlots([(s.prompt, recorded_slot(s)) for s in recorded])
        self.served, self.unmatched = 0, []
        return self.slots

    async def __call__(self, request: Any) -> list[dict]:
        if self.depth_zero and not len(self.slots):
            # A depth-0 run recorded before switched-off slots were recorded.
            return [{"error": {"type": "SubCallError", "message": DEPTH0_MESSAGE}} for _ in request.prompts]
        slots = []
        for prompt in request.prompts:
            slot = self.slots.answer(prompt, request.kind, request.context)
            if slot is None:
                self.unmatched.append(prompt)
                slot = {"error": {"type": NOT_RECORDED, "message": "this prompt is not in the record of the run"}}
            else:
                self.served += 1
            slots.append(slot)
        return slots


def recorded_slot(call: Node) -> dict[str, Any]:
    """The result slot the engine handed the REPL for a recorded sub-call: the recorded
    error_type; for records made before it was recorded, a guess from the status and message."""
    if call.status == "ok":
        return {"ok": call.response}
    message = call.error or call.status
    if call.error_type:
        return {"error": {"type": call.error_type, "message": message}}
    if call.status == "refused":
        from core.engine.admission import refusal_type
        kind = refusal_type(message)         # BudgetExceeded, ModelNotAllowed or PriceUnknown
    elif message.startswith("prompt too large for "):
        kind = "ContextWindowExceeded"
    else:
        kind = "SubCallError"
    return {"error": {"type": kind, "message": message}}


async def replay_cell(repl: Any, answers: RecordedAnswers, code: str, recorded: Sequence[Node],
                      *, timeout_s: float) -> CellReplay:
    answers.begin(recorded)
    result = await repl.execute(code, timeout_s=timeout_s)
    return CellReplay(stdout=result.stdout, stderr=result.stderr, error=result.error, final=result.final,
                      served=answers.served, unmatched=list(answers.unmatched))


def cell_differences(recorded: Cell, replayed: CellReplay) -> str:
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
