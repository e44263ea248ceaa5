"""Run an evaluation: every pair answers every question (`repeats` times) in each of
`modes` (the run's mode: rlm, auto, direct; core/engine/mode.py), every answer an
ordinary stored run tagged with the evaluation, optionally beside a plain direct
call of the pair's root model made outside a run (`direct=True`, the CLI's --direct).

    evaluation = Evaluation(qset, documents, pairs, config_for=..., run_rlm=...,
                            llm_for=..., repeats=2, modes=("rlm", "auto"))
    evaluation_id, card = await evaluation.run(db, on_row=print_progress, on_start=...)
    evaluation.stop()        # no new question starts; the caller stops the runs in flight

The caller supplies `config_for(pair) -> RunConfig` (settings, routing, caps),
`run_rlm(question, config, evaluation_id) -> RunOutcome` (app/eval_runs.py: a RunRequest
on RunService, like every other run) and `llm_for(config) -> ModelClient` (direct calls
and the judge), so this module needs neither. Questions run concurrently, at most
`parallel` at a time; each run keeps its own caps.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Sequence

from core.evaluation import records
from core.evaluation.checkers import CheckResult, check_with_judge
from core.engine.direct import ask_directly
from core.evaluation.questions import Question, QuestionSet, documents_for
from core.evaluation.scorecard import build_scorecard
from core.lifecycle import finish

_PROVIDER = re.compile(r"[A-Za-z0-9_.-]+/")


class PairError(ValueError):
    pass


@dataclass(frozen=True)
class Pair:
    root: str
    sub: str

    @property
    def label(self) -> str:
        return f"{self.root}:{self.sub}"


def parse_pair(text: str) -> Pair:
    """ROOT:SUB, or ROOT alone (the root is its own sub model). Model names may hold
    colons themselves (ollama/qwen2.5:7b): the split is at the colon that starts a
    provider-prefixed name, e.g. ollama/qwen2.5:7b:ollama/qwen2.5:1.5b."""
    text = text.strip()
    if not text:
        raise PairError("--pair needs ROOT:SUB")
    colons = [i for i, c in enumerate(text) if c == ":"]
    for i in colons:
        left, right = text[:i], text[i + 1:]
        if left and "/" in left and _PROVIDER.match(right):
            return Pair(left, right)
    if not colons:
        return Pair(text, text)
    if len(colons) == 1:
        left, right = text.split(":")
        if left and right:
            return Pair(left, right)
    raise PairError(f"cannot tell ROOT from SUB in {text!r}; write both with their provider, "
                    "e.g. openai/gpt-4o:openai/gpt-4o-mini")


RunRlm = Callable[[str, Any, str], Awaitable[Any]]     # (question, config, evaluation_id) -> RunOutcome
MODES = ("rlm", "auto", "direct")


@dataclass(frozen=True)
class Job:
    """One answer to give: what progress is reported by (Row has the same four fields)."""
    pair: str
    mode: str
    question_id: str
    repeat: int


@dataclass
class Evaluation:
    qset: QuestionSet
    documents: Sequence[Any]
    pairs: Sequence[Pair]
    config_for: Callable[[Pair], Any]      # -> core.config.RunConfig
    run_rlm: RunRlm
    llm_for: Callable[[Any], Any] | None = None   # RunConfig -> core.llm.client.ModelClient
    repeats: int = 1
    parallel: int = 2
    direct: bool = False
    direct_max_tokens: int = 1024
    windows: dict[str, int] | None = None  # model -> context window (when litellm does not know)
    judge_model: str | None = None
    modes: Sequence[str] = ("rlm",)
    stopped: bool = False

    def stop(self) -> None:
        """No question starts after this; answers given so far stay in the scorecard."""
        self.stopped = True

    async def run(self, db: Any, on_row: Callable[[records.Row], None] | None = None,
                  on_start: Callable[[Job], None] | None = None,
                  on_jobs: Callable[[list[Job]], None] | None = None) -> tuple[str, dict[str, Any]]:
        """`on_jobs(jobs)` once before any starts, `on_start(job)` as each starts, `on_row(row)`
        as each ends. Stopped (stop(), or a cancel): the scorecard of what ended is saved."""
        if self.repeats < 1:
            raise ValueError("--repeats must be at least 1")
        unknown = [m for m in self.modes if m not in MODES]
        if unknown:
            raise ValueError(f"unknown mode {', '.join(unknown)}; use one or more of {', '.join(MODES)}")
        if not (self.modes or self.direct):
            raise ValueError(f"no mode to run: give one or more of {', '.join(MODES)}")
        for q in self.qset.questions:
            documents_for(q, self.documents)          # a name that matches no document: said before any run
        if self.qset.needs_judge and not self.judge_model:
            raise ValueError("the question set has questions with checker 'judge': name a judge "
                             "model with --judge MODEL")
        evaluation_id, _ = records.open_evaluation(db, self.qset, self.documents)
        gate = asyncio.Semaphore(max(1, self.parallel))
        jobs: list[tuple[Job, Callable[[], Awaitable[None]]]] = []
        direct_roots: dict[str, Any] = {}
        for pair in self.pairs:
            config = self.config_for(pair)
            for mode in self.modes:
                # each mode's rows are that mode's, whatever the settings' mode would do
                run_config = config if getattr(config, "mode", mode) == mode else config.replace(mode=mode)
                first = records.next_repeat(db, evaluation_id, pair.label, mode)
                for repeat in range(first, first + self.repeats):
                    for q in self.qset.questions:
                        job = Job(pair.label, mode, q.id, repeat)
                        jobs.append((job, self._bind(self._rlm_job, db, evaluation_id, gate, pair, run_config,
                                                     q, job, on_row, on_start)))
            if self.direct and pair.root not in direct_roots:
                direct_roots[pair.root] = config
        for root, config in direct_roots.items():
            label = f"direct:{root}"
            first = records.next_repeat(db, evaluation_id, label, "direct")
            for repeat in range(first, first + self.repeats):
                for q in self.qset.questions:
                    job = Job(label, "direct", q.id, repeat)
                    jobs.append((job, self._bind(self._direct_job, db, evaluation_id, gate, config, label, q,
                                                 job, on_row, on_start)))
        if on_jobs:
            on_jobs([job for job, _ in jobs])
        tasks = [asyncio.ensure_future(start()) for _, start in jobs]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:        # a cancel (or one job's error): the others end before the card
                task.cancel()
            try:
                await finish(asyncio.wait(tasks))
            finally:
                self._save_card(db, evaluation_id)
            raise
        return evaluation_id, self._save_card(db, evaluation_id)

    @staticmethod
    def _bind(fn: Callable[..., Awaitable[None]], *args: Any) -> Callable[[], Awaitable[None]]:
        return lambda: fn(*args)

    def _save_card(self, db: Any, evaluation_id: str) -> dict[str, Any]:
        questions = [q.public_dict() for q in self.qset.questions]
        card = build_scorecard(records.rows(db, evaluation_id), questions)
        card["evaluation_id"] = evaluation_id
        card["name"] = self.qset.name
        records.save_scorecard(db, evaluation_id, card)
        return card

    async def _judge(self, messages: list[dict]) -> tuple[str, float]:
        from core.llm.pricing import PriceBook
        config = self.config_for(Pair(self.judge_model, self.judge_model))
        reply = await self.llm_for(config).complete(config.root_model, messages, max_tokens=16)
        return reply.text, PriceBook.for_config(config).cost_usd(config.root_model, reply.input_tokens,
                                                             reply.output_tokens)

    async def _check(self, q: Question, answer: str | None) -> CheckResult:
        try:
            return await check_with_judge(q, answer, self._judge if self.judge_model else None)
        except Exception as exc:          # a judge that cannot be reached: wrong, with the reason
            return CheckResult(False, f"judge failed: {exc}")

    async def _rlm_job(self, db: Any, evaluation_id: str, gate: asyncio.Semaphore, pair: Pair, config: Any,
                       q: Question, job: Job, on_row: Callable | None, on_start: Callable | None) -> None:
        async with gate:
            if self.stopped:
                return
            if on_start:
                on_start(job)
            if q.documents:           # asked over some of the documents (questions.documents_for)
                result = await self.run_rlm(q.question, config, evaluation_id,
                                            documents=documents_for(q, self.documents))
            else:
                result = await self.run_rlm(q.question, config, evaluation_id)
        verdict = await self._check(q, result.answer)
        t = result.totals or {}
        row = records.Row(
            pair=pair.label, mode=job.mode, root_model=pair.root, sub_model=pair.sub, question_id=q.id,
            repeat=job.repeat, run_id=result.run_id, status=result.status, answer=result.answer,
            correct=verdict.correct, detail=verdict.detail, cost_usd=float(t.get("cost_usd") or 0.0),
            judge_cost_usd=verdict.judge_cost_usd, wall_ms=t.get("wall_ms"),
            iterations=int(t.get("iterations") or 0), cells=int(t.get("cells") or 0),
            syntax_errors=int(t.get("syntax_errors") or 0), input_tokens=int(t.get("input_tokens") or 0),
            output_tokens=int(t.get("output_tokens") or 0), error=result.error)
        records.add_row(db, evaluation_id, row)
        if on_row:
            on_row(row)

    async def _direct_job(self, db: Any, evaluation_id: str, gate: asyncio.Semaphore, config: Any,
                          label: str, q: Question, job: Job, on_row: Callable | None,
                          on_start: Callable | None) -> None:
        from core.llm.pricing import PriceBook
        model = config.root_model
        repeat = job.repeat
        async with gate:
            if self.stopped:
                return
            if on_start:
                on_start(job)
            result = await ask_directly(self.llm_for(config), PriceBook.for_config(config), model, q.question,
                                        documents_for(q, self.documents),
                                        max_tokens=self.direct_max_tokens,
                                        window=(self.windows or {}).get(model))
        verdict = await self._check(q, result.answer)
        row = records.Row(
            pair=label, mode="direct", root_model=model, sub_model=None, question_id=q.id, repeat=repeat,
            run_id=None, status=result.status, answer=result.answer, correct=verdict.correct,
            detail=verdict.detail if result.status == "answered" else (result.error or result.status),
            cost_usd=result.cost_usd, judge_cost_usd=verdict.judge_cost_usd, wall_ms=result.duration_ms,
            input_tokens=result.input_tokens, output_tokens=result.output_tokens, error=result.error)
        records.add_row(db, evaluation_id, row)
        if on_row:
            on_row(row)
