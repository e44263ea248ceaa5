"""Follow-up questions when the run's REPL is gone (app restarted, run opened
from History): rebuild it by re-execution, or start fresh.

    if rebuild_available():     # no model calls, nothing spent (core/engine/prepare.py)
        await RunService().run(RunRequest.rebuild(run_id, q, config))
    else:
        question = fresh_question(earlier_q, earlier_a, q)
        await RunService().run(RunRequest.rerun(run_id, question, documents, config))

The rebuild re-runs every finished code cell of the run (and of the runs it
continued) in a new REPL worker, each sub-call answered from the record
(core/engine/rebuild.py), and restores the root's conversation, so the follow-up finds
the variables the model built. A cell whose sub-call prompts are not in the
record is reported in `unmatched`: its variables may differ from the original.
"""

from __future__ import annotations

import importlib.util


def rebuild_available() -> bool:
    """True when this build can rebuild a REPL by re-execution (core/engine/rebuild.py)."""
    try:
        return all(importlib.util.find_spec(m) is not None
                   for m in ("core.engine.rebuild", "core.engine.replay"))
    except (ImportError, ValueError):
        return False


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
