"""Follow-up questions when the run's REPL is gone (app restarted, run opened
from History): rebuild it by re-execution, or start fresh.

    if rebuild_available():
        rebuilt = await rebuild_session(store, run_id)     # no model calls, nothing spent
        QuestionRun(q, documents=rebuilt.documents, session=rebuilt.session,
                    follow_up=True, parent_run_id=run_id, ...)
    else:
        QuestionRun(fresh_question(earlier_q, earlier_a, q), documents=..., parent_run_id=run_id)

The rebuild re-runs every finished code cell of the run (and of the runs it
continued) in a new REPL worker, each sub-call answered from the record
(core/trust), and restores the root's conversation, so the follow-up finds
the variables the model built. A cell whose sub-call prompts are not in the
record is reported in `unmatched`: its variables may differ from the original.
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class Rebuilt:
    session: Any                    # core.engine.rlm.Session, live
    documents: list[Any]
    skipped: list[Any]
    cells: int = 0                  # cells re-run
    unmatched: list[str] = field(default_factory=list)

    async def close(self) -> None:
        await self.session.close()


def rebuild_available() -> bool:
    """True when this build can rebuild a REPL by re-execution (core/trust)."""
    try:
        return all(importlib.util.find_spec(m) is not None
                   for m in ("core.trust.rebuild", "core.trust.replay"))
    except (ImportError, ValueError):
        return False


async def rebuild_session(store: Any, run_id: str, *, memory_limit_mb: int | None = 4096,
                          worker_command: list[str] | None = None,
                          require_full_sandbox: bool = False) -> Rebuilt:
    """A live Session with the REPL state and conversation `run_id` ended with.
    `require_full_sandbox`: refuse (SandboxIncomplete) before any recorded code is re-run
    unless every sandbox layer holds, as a fresh run does; the follow-up's own cells run
    in this same REPL."""
    from core.engine.rlm import Session
    from core.repl.client import ReplClient
    from core.trust.rebuild import PrefixReport, load_record, replay_turns
    from core.trust.replay import RecordedAnswers
    record = load_record(store, run_id)
    documents = list(store.documents(run_id))
    answers = RecordedAnswers(depth_zero=int(record.meta.config.get("max_depth", 1)) == 0)
    repl = ReplClient(on_sub_call=answers, memory_limit_mb=memory_limit_mb, worker_command=worker_command,
                      require_full_sandbox=require_full_sandbox)
    report = PrefixReport()
    try:
        await repl.start()
        await repl.load_context(documents)
        await replay_turns(store, record, repl, answers, before_turn=None, report=report)
    except BaseException:
        await repl.close()
        raise
    log.info("rebuilt the REPL of run %s: %d cells, %d off the record", run_id, report.cells,
             len(report.unmatched))
    return Rebuilt(Session(repl, record.conversation()), documents, list(store.skipped(run_id)),
                   report.cells, list(report.unmatched))


def fresh_question(earlier_question: str, earlier_answer: str | None, follow_up: str,
                   answer_limit: int = 4000) -> str:
    """The question for a fresh run that stands in for a follow-up: the earlier
    question and answer as background, said openly in the question itself."""
    answer = (earlier_answer or "(no answer was given)").strip()
    if len(answer) > answer_limit:
        answer = answer[:answer_limit] + " […]"
    return (f"Earlier question about these documents: {earlier_question.strip()}\n"
            f"Earlier answer: {answer}\n\n"
            f"Follow-up question: {follow_up.strip()}")
