"""Rebuilding a stored run's REPL state by re-execution (a fork, a rebuild, verify).

A run that continued another one (a fork, a follow-up) began with the parent's
live REPL; its first turn's `new_messages` hold the whole conversation it
inherited. Its state is rebuilt by replaying, for every assistant reply of that
inherited conversation, the parent's cells of that turn (recursively, so a fork
of a fork works); a reply that differs from the parent's (an edited turn) has its
code taken from the reply itself, its sub-calls answered from the parent's turn.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol

from core.call_ids import CallId
from core.engine.parse import parse_reply
from core.engine.replay import RecordedAnswers, replay_cell
from core.run_record import RunRecord, fold_record

log = logging.getLogger(__name__)

MAX_ANCESTRY = 32


class RebuildError(Exception):
    """The state cannot be rebuilt (missing parent run, bad turn number...)."""


class ForkError(RebuildError):
    """The fork cannot be prepared (turn out of range, run without a stored config...)."""


class StoredRuns(Protocol):
    """The reads a fork or a rebuild makes of stored runs (core.store.RunStore has them):
    the engine imports no store, it is handed one."""

    def iter_events(self, run_id: str) -> Iterable[Any]: ...

    def get_run(self, run_id: str) -> dict | None: ...

    def documents(self, run_id: str) -> list[Any]: ...

    def skipped(self, run_id: str) -> list[Any]: ...


@dataclass
class PrefixReport:
    cells: int = 0
    unmatched: list[str] = field(default_factory=list)   # "run:turn.cell" where the replay left the record
    parents: list[str] = field(default_factory=list)


def load_record(store: StoredRuns, run_id: str) -> RunRecord:
    """The fold of a stored run (core/run_record.py), as verify, fork, compare and a
    rebuild read it."""
    record = fold_record(store.iter_events(run_id))
    record.meta.run_id = record.meta.run_id or run_id
    return record


def inherited_replies(record: RunRecord) -> list[str]:
    """The assistant replies a continued run inherited from its parent (empty for a fresh run)."""
    turns = record.top_turns()
    if not turns:
        return []
    return [m.get("content") or "" for m in turns[0].new_messages if m.get("role") == "assistant"]


def default_timeout(record: RunRecord) -> float:
    return float(record.meta.config.get("cell_timeout_s") or 120.0)


async def replay_turns(store: StoredRuns, record: RunRecord, repl: Any, answers: RecordedAnswers, *,
                       before_turn: int | None, report: PrefixReport, level: int = 0) -> None:
    """Replay `record`'s inherited prefix, then its own turns before `before_turn` (all: None)."""
    await replay_inherited(store, record, repl, answers, report=report, level=level)
    timeout = default_timeout(record)
    for turn in record.top_turns():
        if before_turn is not None and turn.iteration >= before_turn:
            break
        for cell in turn.cells:
            if not cell.done:
                continue
            done = await replay_cell(repl, answers, cell.code, cell.sub_calls(), timeout_s=timeout)
            report.cells += 1
            if done.unmatched:
                report.unmatched.append(f"{record.meta.run_id[:12]}:{cell.id}")


async def replay_inherited(store: StoredRuns, record: RunRecord, repl: Any, answers: RecordedAnswers, *,
                           report: PrefixReport, level: int = 0) -> None:
    replies = inherited_replies(record)
    if not replies:
        return
    if level >= MAX_ANCESTRY:
        raise RebuildError("too many generations of forks to rebuild")
    meta = record.meta
    if not meta.parent_run_id or store.get_run(meta.parent_run_id) is None:
        raise RebuildError(f"run {meta.run_id} continues run {meta.parent_run_id}, which is not in the "
                           "store; its REPL state cannot be rebuilt")
    parent = load_record(store, meta.parent_run_id)
    report.parents.append(parent.meta.run_id)
    await replay_inherited(store, parent, repl, answers, report=report, level=level + 1)
    timeout = default_timeout(parent)
    own = replies[len(inherited_replies(parent)):]     # the grandparents' replies were replayed above
    for number, reply in enumerate(own, start=1):
        turn = parent.top_turn(number)
        if turn is None:
            break
        recorded = [s for c in turn.cells for s in c.sub_calls()]
        if reply == turn.reply:
            for cell in turn.cells:
                if cell.done:
                    done = await replay_cell(repl, answers, cell.code, cell.sub_calls(), timeout_s=timeout)
                    report.cells += 1
                    if done.unmatched:
                        report.unmatched.append(f"{parent.meta.run_id[:12]}:{cell.id}")
        else:                                   # an edited turn: its code is in the reply
            for index, code in enumerate(parse_reply(reply).cells, start=1):
                done = await replay_cell(repl, answers, code, recorded, timeout_s=timeout)
                report.cells += 1
                if done.unmatched:
                    report.unmatched.append(f"{parent.meta.run_id[:12]}:{CallId.for_cell(turn.id, index)} (edited)")
