"""An evaluation's answers as ordinary runs: each question a RunRequest on RunService,
tagged with the evaluation (runs.evaluation_id), from the CLI and from the window alike.

    runs = EvaluationRuns(RunService(store=store), documents, skipped)
    evaluation = Evaluation(qset, documents, pairs, config_for=..., run_rlm=runs.run_rlm,
                            llm_for=runs.llm_for, ...)
    task = asyncio.ensure_future(evaluation.run(db, ...))
    runs.stop(evaluation)        # on the loop the runs are on: no new question, the runs in flight stopped

A stopped run ends as any Stop does (status cancelled, stored); the scorecard leaves it
out of the accuracy and counts it as stopped.
"""

from __future__ import annotations

from typing import Any, Sequence

from app.run_service import RunHandle, RunRequest, RunService


class EvaluationRuns:
    def __init__(self, service: RunService, documents: Sequence[Any], skipped: Sequence[Any] = (),
                 shared_budget: Any = None) -> None:
        self.service = service
        self.shared_budget = shared_budget     # one Budget every run of the evaluation reserves from
        self.documents = tuple(documents)
        self.skipped = tuple(skipped)
        self.handles: set[RunHandle] = set()
        self.stopped = False

    async def run_rlm(self, question: str, config: Any, evaluation_id: str,
                      documents: Sequence[Any] | None = None) -> Any:
        """`documents`: the question's own subset of the set's documents (core.evaluation.questions)."""
        handle = RunHandle()
        if self.stopped:
            handle.cancel()
        self.handles.add(handle)
        try:
            chosen = self.documents if documents is None else tuple(documents)
            return await self.service.run(RunRequest.ask(question, chosen, config, skipped=self.skipped,
                                                         evaluation_id=evaluation_id,
                                                         shared_budget=self.shared_budget), handle=handle)
        finally:
            self.handles.discard(handle)

    def llm_for(self, config: Any) -> Any:
        """The model client of a direct call or the judge, with the run's key routing."""
        # lazy: +7 modules in the window, +94 modules in ask (where it runs)
        from core.llm.client import ModelClient
        return ModelClient(key_for=self.service.key_for(config), api_base_for=config.api_base_for,
                           max_retries=config.max_retries, timeout_s=config.request_timeout_s)

    def stop(self, evaluation: Any = None) -> int:
        """Stop: no question starts, every run in flight is stopped; returns how many were."""
        self.stopped = True
        if evaluation is not None:
            evaluation.stop()
        handles = list(self.handles)
        for handle in handles:
            handle.cancel()
        return len(handles)
