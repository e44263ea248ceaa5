"""A fork's edited turn, run by the engine as the fork's first turn.

When the user edits the code of the turn a fork starts from (core/engine/prepare.py), that
turn is not asked of the root: the engine runs the edited code as turn 1 of the fork, in
the REPL rebuilt up to that turn, and shows the root its output. Its sub-calls are the
engine's own (core/engine/subcalls.py): a prompt the stored turn asked is answered from
the record (no call; `from_record` on its SubCallFinished); a new prompt goes live like
any sub-call of the run: the model allow-list, the price and context-window checks, the
approval gate, the fork's own caps (counted and reserved in its budget), the concurrency
limit, and its events, so the fork's totals, History and exports show what it spent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core import events as ev
from core.call_ids import CallId
from core.engine import prompts
from core.engine.recorded import RecordedSlots


@dataclass(frozen=True)
class EditedTurn:
    code: str                     # the user's code, run as the turn's one cell
    reply: str                    # the stored reply with its code blocks replaced by `code`
    recorded: RecordedSlots       # the stored turn's sub-calls and the slots they got
    origin: str = ""              # "turn 2 of run 1a2b3c4d5e6f" (said in a Notice)


async def run_edited_turn(rlm: Any, edit: EditedTurn, messages: list[dict]) -> None:
    """Turn 1 of the fork `rlm` (the top-level Rlm on the rebuilt session): the reply is
    `edit.reply`, its cell `edit.code`, run through the Rlm's own `run_cell`; the feedback
    for the root is appended to `messages`. A FINAL in the edited code does not end the
    fork: the root is asked to confirm it."""
    ctx, cfg = rlm.ctx, rlm.config
    turn_id = CallId.for_turn(rlm.rlm_id, 1)
    ctx.counters.iterations = 1
    ctx.emit(ev.RootTurnStarted, call_id=turn_id, parent_id=rlm.rlm_id, iteration=1, depth=rlm.depth,
             model=cfg.root_model, final_request=False, new_messages=list(messages))
    ctx.emit(ev.Notice, call_id=turn_id, parent_id=rlm.rlm_id, level="info",
             message=f"Turn 1 is {edit.origin or 'the stored turn'} with its code edited: it was not "
                     "asked of the model; its new sub-calls go live under this run's caps.")
    messages.append({"role": "assistant", "content": edit.reply})
    ctx.emit(ev.RootReplied, call_id=turn_id, parent_id=rlm.rlm_id, text=edit.reply, input_tokens=0,
             output_tokens=0, cost_usd=0.0, duration_ms=0, model=cfg.root_model, edited=True)
    result, shown = await rlm.run_cell(turn_id, 1, 1, edit.code, recorded=edit.recorded)
    notes = [] if result.final is None else [prompts.fill("edited_final.md")]
    feedback = prompts.turn_feedback([shown], notes, 1, cfg.max_iterations)
    if cfg.max_iterations <= 1:                 # this was the fork's only turn: the root is asked to finish
        feedback += "\n\n" + prompts.final_request(cfg.max_iterations)
    messages.append({"role": "user", "content": feedback})
