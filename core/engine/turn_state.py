"""What one root turn holds while it runs, and what the root loop remembers between turns.

    turn = Turn(iteration=3, id="R.t3", final_request=False)

The Rlm (core/engine/rlm.py) builds a `Turn` when it asks the root, fills it as the turn
goes (the reply, what each cell showed, the notes for the root) and drops it when the
turn's feedback is sent. `RootMemory` is what later turns read of earlier ones: every
output shown (a copied output is refused, core/engine/screen.py), the last turn that ran
code and the last text without code (a repeated reply is told, not run again), the last
answer a turn gave that did not end the run (the outcome's answer when a cap ends it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Turn:
    iteration: int
    id: str                               # the turn's call id ("R.t3")
    final_request: bool                   # the root was asked for its final answer
    reply: Any = None                     # the LLM reply (text, finish_reason)
    parsed: Any = None                    # core.engine.parse.ParsedReply of reply.text
    cut: dict | None = None               # RootReplied.cut: where the reply was read up to
    cut_by_cap: int | None = None         # the reply stopped at a max_tokens the cap lowered
    outputs: list[str] = field(default_factory=list)   # what each block showed the root
    notes: list[str] = field(default_factory=list)     # told to the root after the outputs
    final: dict | None = None             # a FINAL/FINAL_VAR that a cell ran: {kind, value}
    repeated: str | None = None           # "code" | "prose" when the reply repeated an earlier one
    repeated_turn: int = 0                # the turn it repeated
    printed: str | None = None            # stdout of the turn's last cell (None: it failed, or none ran)


@dataclass
class RootMemory:
    shown: list[str] = field(default_factory=list)   # every cell output the root was shown
    last_ran: tuple = (0, (), ())         # the last turn that ran code: its number, blocks, outputs
    ran: dict = field(default_factory=dict)   # every turn's blocks that ran -> (its number, outputs, stdout)
    printed_by: list = field(default_factory=list)  # (a block, what it printed) for blocks that ran without error
    last_prose: tuple = (0, "")           # the last turn: its number and its text when it had no code
    printed: str | None = None            # stdout of the last cell that ran without an error
    repeats: int = 0                      # replies in a row that repeated the one before
    hot: bool = False                     # the next root call follows a repeated reply
    unseen_told: bool = False             # a final answer before any code was sent back once
    best_answer: str | None = None        # the last answer that did not end the run
    offered: str | None = None            # the last answer offered as a FINAL line to copy (a small root)
    hinted: str = ""                      # lines of the documents the engine showed (search_help.py)
    empty_searched: list = field(default_factory=list)   # phrases searched in a row that matched nothing
