"""Call ids, typed: what the engine's ids say about a call's place in the tree.

The engine names every call by that place (core/engine/rlm.py, subcalls.py):

    R              the top-level RLM
    R.t3           its root turn 3
    R.t3.c2        cell 2 of that turn
    R.s5           its sub-call 5 (a plain call, or a nested RLM: then an RLM itself)
    R.s5.t1.c1     cell 1 of turn 1 of that nested RLM

    parse("R.s5.t1.c1")  ->  CallId(kind="cell", owner="R.s5", turn=1, cell=1, sub=None)

The one fold of the record (core/run_record.py), which every reader of a run goes
through, asks this module instead of taking the strings apart; its nodes give their
typed id as `node.call`. An id that does not follow the grammar parses to None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ROOT = "R"
_STEP = re.compile(r"([tcs])(\d+)")


@dataclass(frozen=True)
class CallId:
    text: str
    kind: str                  # "root" | "turn" | "cell" | "sub"
    owner: str | None          # the RLM whose turn or cell it is, or that made the sub-call
    turn: int | None = None    # turn N (kind turn, cell)
    cell: int | None = None    # cell N (kind cell)
    sub: int | None = None     # sub-call N (kind sub)

    @property
    def top(self) -> bool:
        """A turn, cell or sub-call of the top-level RLM (depth 0)."""
        return self.owner == ROOT

    @property
    def turn_id(self) -> str | None:
        """The turn a cell belongs to (a turn: itself)."""
        if self.kind == "turn":
            return self.text
        if self.kind == "cell":
            return f"{self.owner}.t{self.turn}"
        return None

    @property
    def depth(self) -> int:
        """How deep the owning RLM is nested (the top-level RLM: 0)."""
        return 0 if self.owner is None else self.owner.count(".")

    # The one way ids are built (the engine names its calls with these) and read back.
    @staticmethod
    def for_turn(rlm_id: str, iteration: int) -> str:
        """Root turn `iteration` of the RLM `rlm_id` ("R", "R.s5"): "R.t3"."""
        return f"{rlm_id}.t{iteration}"

    @staticmethod
    def for_cell(turn_id: str, index: int) -> str:
        """Cell `index` of the turn `turn_id`: "R.t3.c2"."""
        return f"{turn_id}.c{index}"

    @staticmethod
    def for_sub(rlm_id: str, n: int) -> str:
        """Sub-call `n` of the RLM `rlm_id` (a nested RLM's own id is this): "R.s5"."""
        return f"{rlm_id}.s{n}"

    @staticmethod
    def parse(text: str | None) -> "CallId | None":
        """The CallId of `text`, or None when it is no call id of the engine's."""
        return parse(text)


def parse(text: str | None) -> CallId | None:
    """The CallId of `text`, or None when it is no call id of the engine's."""
    if not text:
        return None
    parts = text.split(".")
    if parts[0] != ROOT:
        return None
    rlm, kind, turn, cell, sub, owner = ROOT, "root", None, None, None, None
    for part in parts[1:]:
        m = _STEP.fullmatch(part)
        if m is None:
            return None
        step, n = m.group(1), int(m.group(2))
        if step == "s" and kind in ("root", "sub"):       # a sub-call of the RLM so far
            owner, kind, sub = rlm, "sub", n
            rlm = f"{rlm}.s{n}"                           # a nested RLM's id is its sub-call's
        elif step == "t" and kind in ("root", "sub"):
            owner, kind, turn, sub = rlm, "turn", n, None
        elif step == "c" and kind == "turn":
            kind, cell = "cell", n
        else:
            return None
    return CallId(text, kind, owner, turn, cell, sub)


def turn_of_cell(cell_id: str) -> str | None:
    """The turn id of a cell id; None when it is not a cell's."""
    parsed = parse(cell_id)
    return parsed.turn_id if parsed is not None and parsed.kind == "cell" else None
