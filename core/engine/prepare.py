"""Preparing a run: from what to run (a RunRequest) to what the engine starts from.

    request = RunRequest.fork(parent_run_id, 3, edited_code=code)   # or .ask/.rerun/.follow_up/.rebuild
    prepared = await prepare_run(request, runs=store)               # runs: StoredRuns (a RunStore)
    await Engine(prepared.config, ...).run(prepared.question, prepared.documents,
                                           session=prepared.session, follow_up=prepared.follow_up)

One operation for every kind of run. An ask, a re-run or a follow-up starts from the
request as it is. A fork or a rebuild reads its parent's record (`runs`: the engine
imports no store, it is handed the few reads it needs), checks its config before minutes
of re-execution (`check_config`: a fork without a config takes the parent's, with the
request's changes), and rebuilds the REPL by re-execution (core/engine/rebuild.py: no
model is called, nothing is spent). A fork's edited turn rides on its session
(core/engine/edited_turn.py). What preparing did is on the PreparedRun, frozen.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Sequence

from core.config import RunConfig
from core.engine.edited_turn import EditedTurn
from core.engine.outcome import Session
from core.engine.rebuild import ForkError, PrefixReport, StoredRuns, load_record, replay_turns
from core.engine.replay import RecordedAnswers
from core.engine.request import RunRequest
from core.fences import replace_runnable
from core.run_names import title_of
from core.run_record import RunRecord

log = logging.getLogger(__name__)


class ConfigError(ValueError):
    """The run cannot start as configured (message says how to fix it)."""


def check_config(config: RunConfig, documents: Sequence[Any] | None = None) -> Any:
    """Refuse a config that cannot run (a dollar cap over a model with no known price) and,
    given them, documents that do not fit the REPL worker's memory or changed on disk
    (core/engine/corpus_fit.py, core/ingest/text_back.py); returns the run's PriceBook."""
    # lazy: the price catalogue stays off the import of the engine (the window's start)
    from core.llm.pricing import PriceBook
    prices = PriceBook.for_config(config)
    if config.max_cost_usd is not None:
        for model in sorted(run_models(config)):
            if prices.price(model) is None:
                name = config.label(model)      # the name the user picked (its spec's)
                raise ConfigError(
                    f"No price is known for model '{name}', and a dollar cap is set. "
                    f"Give it a price with --price {name}=IN,OUT (USD per million tokens), "
                    f"mark it free with --price {name}=0,0 (local models), or drop --max-cost.")
    if documents:
        # lazy: a format reader's and the corpus check's imports only where documents are checked
        from core.engine.corpus_fit import CorpusTooLarge, check_fits
        # lazy: as above
        from core.ingest.text_back import DocumentChanged, check_unchanged
        try:
            check_fits(documents, config.memory_limit_mb)
            check_unchanged(documents)        # texts read back from files (core/ingest/text_back.py)
        except (CorpusTooLarge, DocumentChanged) as exc:
            raise ConfigError(str(exc)) from None
    return prices


def run_models(config: RunConfig) -> set[str]:
    """The models a run calls by default: the root, and the sub model when sub-calls are on."""
    return {config.root_model} | ({config.sub_model} if config.max_depth >= 1 else set())


def fork_config(record: RunRecord, **overrides: Any) -> RunConfig:
    """The parent's config with the fork's changes (None values are ignored)."""
    stored = record.meta.config
    config = RunConfig.from_public_dict(stored) if stored else None
    if config is None:
        raise ForkError(f"run {record.meta.run_id} has no stored config")
    return config.replace(**{k: v for k, v in overrides.items() if v is not None})


@dataclass(frozen=True)
class PreparedRun:
    """What a run starts from, and what preparing it did (shown before it goes live)."""
    kind: str
    question: str
    documents: tuple
    skipped: tuple
    config: RunConfig                  # resolved once: a fork's from its parent's, with its specs
    session: Any = None                # a follow-up's live Session, or the one rebuilt (fork, rebuild)
    follow_up: bool = False            # `question` is a new question in `session` (follow-up, rebuild)
    parent_run_id: str | None = None
    forked_from: dict | None = None    # a fork's marker on its RunStarted: {"run_id", "turn", "title"}
    turn: int | None = None            # the fork's turn
    replayed_cells: int = 0            # cells re-executed (fork, rebuild)
    unmatched: tuple = ()              # where the re-execution left the record ("run:turn.cell")

    @property
    def rebuilt(self) -> bool:
        """Whether `session` is a REPL this preparation started (closed here if the run never takes it)."""
        return self.kind in ("fork", "rebuild")

    @property
    def edited(self) -> bool:
        return getattr(self.session, "edit", None) is not None

    async def close(self) -> None:
        """Drop a rebuilt REPL when the run does not start after all."""
        if self.rebuilt and self.session is not None:
            await self.session.close()


async def prepare_run(request: RunRequest, *, runs: StoredRuns | None = None,
                      worker_command: list[str] | None = None) -> PreparedRun:
    """The run `request` asks for, ready for the engine. A fork or a rebuild needs `runs`
    and re-executes (cancel it: its REPL is closed, nothing was stored); it raises
    ConfigError (before any re-execution) or ForkError/RebuildError with the reason."""
    if not request.rebuilds:
        return PreparedRun(request.kind, request.question, request.documents, request.skipped, request.config,
                           session=request.session, follow_up=request.kind == "follow-up",
                           parent_run_id=request.parent_run_id)
    if runs is None:
        raise ValueError(f"a {request.kind} reads the stored run it comes from: no stored runs were given")
    if request.config is not None:
        check_config(request.config)
    if request.kind == "fork":
        return await _prepare_fork(request, runs, worker_command)
    return await _prepare_rebuild(request, runs, worker_command)


async def _rebuilt_repl(runs: StoredRuns, record: RunRecord, documents: tuple, config: RunConfig, *,
                        before_turn: int | None, worker_command: list[str] | None,
                        edited: Any = None) -> tuple[Any, PrefixReport, Any]:
    """A REPL over `documents` (the run's) with its cells before `before_turn` (all: None)
    re-executed, sub-calls answered from the record; `edited(answers)` (a fork's edit) is
    built while the REPL is still this function's to close. Returns (repl, report, edit)."""
    # lazy: the REPL client only where a REPL is started
    from core.repl.client import ReplClient
    answers = RecordedAnswers(depth_zero=int(record.meta.config.get("max_depth", 1)) == 0)
    repl = ReplClient(on_sub_call=answers, memory_limit_mb=config.memory_limit_mb, worker_command=worker_command,
                      require_full_sandbox=config.require_full_sandbox)
    report = PrefixReport()
    try:
        await repl.start()
        await repl.load_context(list(documents))
        await replay_turns(runs, record, repl, answers, before_turn=before_turn, report=report)
        edit = edited(answers) if edited is not None else None
    except BaseException:
        await repl.close()
        raise
    return repl, report, edit


async def _prepare_fork(request: RunRequest, runs: StoredRuns, worker_command: list[str] | None) -> PreparedRun:
    """The REPL rebuilt up to the fork's turn and the conversation up to the moment it was
    asked; an edited turn rides on the session (run by the engine as the fork's turn 1)."""
    run_id, turn = request.parent_run_id, request.fork_turn
    record = load_record(runs, run_id)
    config = request.config
    if config is None:
        config = fork_config(record, **request.fork_overrides)
        check_config(config)                 # refused here, before minutes of re-execution
    turns = record.top_turns()
    if not turns:
        raise ForkError(f"run {run_id} has no root turns to fork from")
    target = record.top_turn(turn)
    if target is None:
        raise ForkError(f"run {run_id} has turns 1..{turns[-1].iteration}; there is no turn {turn}")

    def edited(answers: RecordedAnswers) -> EditedTurn | None:
        if request.edited_code is None:
            return None
        recorded = answers.begin([s for c in target.cells for s in c.sub_calls()])
        return EditedTurn(code=request.edited_code, reply=replace_runnable(target.reply or "", request.edited_code),
                          recorded=recorded, origin=f"turn {turn} of run {run_id[:12]}")
    # Everything read before the REPL starts: from there on it is ours to close on any error.
    documents, skipped = tuple(runs.documents(run_id)), tuple(runs.skipped(run_id))
    messages, title = record.conversation(upto=turn), title_of(runs, run_id)
    repl, report, edit = await _rebuilt_repl(runs, record, documents, config, before_turn=turn,
                                             worker_command=worker_command, edited=edited)
    return PreparedRun("fork", record.meta.question, documents, skipped, config,
                       session=Session(repl, messages, edit), parent_run_id=run_id, turn=turn,
                       forked_from={"run_id": run_id, "turn": turn, "title": title},
                       replayed_cells=report.cells, unmatched=tuple(report.unmatched))


async def _prepare_rebuild(request: RunRequest, runs: StoredRuns, worker_command: list[str] | None) -> PreparedRun:
    """The REPL state and conversation the run ended with, for a follow-up asked in it
    (the app was restarted, the run opened from History)."""
    run_id = request.parent_run_id
    record = load_record(runs, run_id)
    documents, skipped, messages = tuple(runs.documents(run_id)), tuple(runs.skipped(run_id)), record.conversation()
    repl, report, _ = await _rebuilt_repl(runs, record, documents, request.config, before_turn=None,
                                          worker_command=worker_command)
    log.info("rebuilt the REPL of run %s: %d cells, %d off the record", run_id, report.cells,
             len(report.unmatched))
    return PreparedRun("rebuild", request.question, documents, skipped, request.config,
                       session=Session(repl, messages), follow_up=True, parent_run_id=run_id,
                       replayed_cells=report.cells, unmatched=tuple(report.unmatched))
