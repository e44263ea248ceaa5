"""Fork: continue a stored run live from one of its root turns.

    plan = await prepare_fork(store, run_id, turn=3, config=cfg, edited_code=None)
    # app/: QuestionRun(plan.question, documents=plan.documents, config=plan.config,
    #                   session=plan.session, parent_run_id=plan.parent_run_id).execute()

The REPL state is rebuilt by re-executing the turns before `turn` (as verify does,
sub-calls answered from the record, nothing is spent); the root's conversation is
rebuilt from the stored messages up to the moment turn N was asked. The engine then
asks the root for turn N again, live, with the fork's models and caps. With
`edited_code`, the plan's session carries turn N with its code replaced
(core.engine.edited_turn.EditedTurn): the engine runs it as the fork's turn 1, its
sub-calls with a recorded prompt answered from the record and new ones sent live as
the fork's own sub-calls (its caps, approval gate and record), then the root continues.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.config import RunConfig
from core.fences import replace_runnable
from core.run_record import RunRecord
from core.trust.rebuild import PrefixReport, RebuildError, load_record, replay_turns
from core.trust.replay import RecordedAnswers


class ForkError(RebuildError):
    """The fork cannot be prepared (turn out of range, run without documents...)."""


@dataclass
class ForkPlan:
    parent_run_id: str
    turn: int
    question: str
    documents: list[Any]
    skipped: list[Any]
    config: RunConfig
    session: Any                                  # core.engine.rlm.Session, live
    replayed_cells: int = 0
    unmatched: list[str] = field(default_factory=list)   # where the rebuild left the record

    async def close(self) -> None:
        """Drop the rebuilt REPL when the fork is not run after all."""
        await self.session.close()


def fork_config(record: RunRecord, **overrides: Any) -> RunConfig:
    """The parent's config with the fork's changes (None values are ignored)."""
    stored = record.meta.config
    config = RunConfig.from_public_dict(stored) if stored else None
    if config is None:
        raise ForkError(f"run {record.meta.run_id} has no stored config")
    return config.replace(**{k: v for k, v in overrides.items() if v is not None})


async def prepare_fork(store: Any, run_id: str, turn: int, *, config: RunConfig | None = None,
                       edited_code: str | None = None, worker_command: list[str] | None = None
                       ) -> ForkPlan:
    from core.engine.edited_turn import EditedTurn
    from core.engine.outcome import Session
    from core.repl.client import ReplClient
    record = load_record(store, run_id)
    turns = record.top_turns()
    if not turns:
        raise ForkError(f"run {run_id} has no root turns to fork from")
    target = record.top_turn(turn)
    if target is None:
        raise ForkError(f"run {run_id} has turns 1..{turns[-1].iteration}; there is no turn {turn}")
    config = config or fork_config(record)
    documents = store.documents(run_id)
    answers = RecordedAnswers(depth_zero=int(record.meta.config.get("max_depth", 1)) == 0)
    repl = ReplClient(on_sub_call=answers, memory_limit_mb=config.memory_limit_mb,
                      worker_command=worker_command, require_full_sandbox=config.require_full_sandbox)
    report = PrefixReport()
    try:
        await repl.start()
        await repl.load_context(documents)
        await replay_turns(store, record, repl, answers, before_turn=turn, report=report)
        messages = record.conversation(upto=turn)
        edit = None
        if edited_code is not None:
            recorded = answers.begin([s for c in target.cells for s in c.sub_calls()])
            edit = EditedTurn(code=edited_code, reply=replace_runnable(target.reply or "", edited_code),
                              recorded=recorded, origin=f"turn {turn} of run {run_id[:12]}")
    except BaseException:
        await repl.close()
        raise
    return ForkPlan(parent_run_id=record.meta.run_id, turn=turn, question=record.meta.question, documents=documents,
                    skipped=store.skipped(run_id), config=config, session=Session(repl, messages, edit),
                    replayed_cells=report.cells, unmatched=report.unmatched)
