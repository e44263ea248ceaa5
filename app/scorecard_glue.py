"""Scorecards from the window: Models > Scorecards > New evaluation… (ui/scorecard_run.py).

    glue = ScorecardGlue(window, store=..., settings=..., keys=..., documents=..., caps=...,
                         pair=..., on_engine=..., shown=on_card)
    glue.open_dialog()          # the dialog; Start validates, reads the documents, runs
    await glue.task             # (tests) the evaluation's end; glue.stop() stops it

The evaluation runs on the engine's loop (app/engine_thread.py) like every run: each answer
is a RunRequest on RunService (app/eval_runs.py), tagged with the evaluation and kept out of
History. Progress crosses back to the window's loop with call_soon_threadsafe. Stop: no new
question starts, the runs in flight stop as a run's Stop does; the scorecard of what ended
is saved and shown.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from app.ports import EnginePort, EvaluationsPort, PanelPort, SettingsPort, SourcesPort, StorePort
from core.lifecycle import stop_then_wait
from ui.scorecard_run import EvaluateDialog, EvaluationSpec, JobShown

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvaluationStart:
    """An evaluation checked and ready to run: its question set, the model pairs, and the
    run config of a pair (each checked: core.engine.prepare.check_config)."""
    qset: Any
    pairs: list
    config_for: Callable[[Any], Any]


class ScorecardGlue:
    """Ports (app/ports.py): the run store, the settings (and keychain), Sources, the question
    panel (caps, models), the engine's loop, and where a saved scorecard is shown."""

    def __init__(self, window: Any, *, store: StorePort, settings: SettingsPort, sources: SourcesPort,
                 panel: PanelPort, engine: EnginePort, shown: EvaluationsPort) -> None:
        self.window = window
        self.store, self.settings, self.keys = store.store, settings.current, settings.keys
        self.sources, self.panel, self.on_engine, self.shown = sources, panel, engine.run, shown.evaluation_done
        self.dialog: EvaluateDialog | None = None
        self.task: asyncio.Task | None = None
        self._stop: Callable[[], None] | None = None     # set on the engine loop while it runs
        self.evaluation_id: str | None = None
        self._stopped = False
        self._reading = False

    def open_dialog(self, parent: Any = None) -> EvaluateDialog:
        if self.dialog is None:
            # lazy: free in the window (where it runs)
            from core.samples import samples_dir
            sample = samples_dir() / "eval_questions.jsonl"
            root, sub = self.panel.root_model(), self.panel.sub_model()
            self.dialog = EvaluateDialog(parent or self.window, models=self._models(), pair=(root, sub or root),
                                         sample_set=str(sample) if sample.is_file() else "",
                                         sources=len(self.sources.documents), caps_note=self._caps_note())
            self.dialog.start_requested.connect(self.start)
            self.dialog.stop_requested.connect(self.stop)
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def _models(self) -> list[str]:
        s = self.settings()
        names = [f"{e.name}/{m}" for e in s.endpoints for m in e.models]
        names += [n for n in (s.root_model, s.sub_model, *s.models) if n]
        return list(dict.fromkeys(names))

    def _caps_note(self) -> str:
        caps = {k: v for k, v in self.panel.caps().items() if v not in (None, 0)}
        shown = {"max_cost_usd": "at most ${} per run", "max_iterations": "{} turns", "max_depth": "depth {}"}
        parts = [shown[k].format(v) for k, v in caps.items() if k in shown]
        return ("Each answer is one run with the question panel's caps"
                + (f" ({', '.join(parts)})" if parts else "") + "; its runs are kept out of History "
                "(tick Show evaluation runs there to see them).")

    # --- start ---------------------------------------------------------------------------
    def start(self, spec: EvaluationSpec) -> asyncio.Task | None:
        """Validate `spec` (a bad one is said in the dialog, nothing runs), then run it."""
        dialog = self.dialog
        if self.task is not None and not self.task.done():
            dialog.set_error("An evaluation is running: stop it first.")
            return None
        try:
            prepared = self._prepare(spec)
        except ValueError as exc:
            dialog.set_error(str(exc))
            return None
        self._stopped = False
        dialog.set_running(True, "Reading the documents…")
        self.task = asyncio.ensure_future(self._run(spec, prepared))
        return self.task

    def _prepare(self, spec: EvaluationSpec) -> EvaluationStart:
        # lazy: free in the window (where it runs)
        from app.settings import build_run_config
        # lazy: +13 modules in the window (where it runs)
        from core.engine.prepare import ConfigError, check_config
        # lazy: +3 modules in the window (where it runs)
        from core.evaluation import QuestionSetError, load_question_set
        # lazy: +12 modules in the window (where it runs)
        from core.evaluation.runner import Pair
        if not spec.set_path:
            raise ValueError("Pick a question set (a .jsonl file).")
        try:
            qset = load_question_set(Path(spec.set_path).expanduser())
        except FileNotFoundError:
            raise ValueError(f"There is no question set at {spec.set_path}.") from None
        except (QuestionSetError, OSError) as exc:
            raise ValueError(f"The question set cannot be used: {exc}") from None
        if qset.needs_judge:
            raise ValueError(f"{Path(spec.set_path).name} has questions with checker 'judge': the window has no "
                             "judge model yet; run it with `rlm-studio eval … --judge MODEL`.")
        pairs = []
        for n, (root, sub) in enumerate(spec.pairs, start=1):
            if not root:
                raise ValueError(f"Pair {n} has no root model.")
            pairs.append(Pair(root, sub or root))
        if not pairs:
            raise ValueError("Add at least one model pair.")
        if not spec.modes:
            raise ValueError("Tick at least one mode (RLM, Auto or one plain call).")
        if spec.documents == "folder" and not Path(spec.folder).expanduser().is_dir():
            raise ValueError(f"There is no folder at {spec.folder or '(none given)'}.")
        if spec.documents == "sources" and not self.sources.documents:
            raise ValueError("Sources has no documents: add some, or pick the sample documents or a folder.")
        settings, caps = self.settings(), dict(self.panel.caps())

        def config_for(pair: Any) -> Any:
            return build_run_config(settings, root=pair.root, sub=pair.sub, overrides=dict(caps))
        for pair in pairs:                       # an unpriced model under a cap etc.: refused before any run
            try:
                check_config(config_for(pair))
            except (ValueError, ConfigError) as exc:
                raise ValueError(f"{pair.root} → {pair.sub} cannot run: {exc}") from None
        return EvaluationStart(qset, pairs, config_for)

    async def _documents(self, spec: EvaluationSpec) -> tuple[list, list]:
        if spec.documents == "sources":
            return list(self.sources.documents.values()), []
        # lazy: free in the window (where it runs)
        from app.settings import ingest_options
        # lazy: free in the window (where it runs)
        from core.ingest import ingest
        # lazy: free in the window (where it runs)
        from core.samples import sample_set
        folder = sample_set().folder if spec.documents == "samples" else Path(spec.folder).expanduser()
        found = await ingest([str(folder)], ingest_options(self.settings()))
        if not found.documents:
            raise ValueError(f"No readable documents in {folder}.")
        return list(found.documents), list(found.skipped)

    async def _run(self, spec: EvaluationSpec, start: EvaluationStart) -> str | None:
        qset, pairs, config_for = start.qset, start.pairs, start.config_for
        dialog, gui = self.dialog, asyncio.get_running_loop()
        questions = {q.id: q.question for q in qset.questions}

        def later(fn: Callable, *args: Any) -> None:        # from the engine's loop to the window's
            if not gui.is_closed():
                gui.call_soon_threadsafe(fn, *args)

        def on_jobs(jobs: list) -> None:
            later(dialog.set_jobs, [JobShown((j.pair, j.mode, j.question_id, j.repeat),
                                             questions.get(j.question_id, j.question_id), j.pair, j.mode, j.repeat)
                                    for j in jobs])

        def on_row(row: Any) -> None:
            state = "stopped" if row.status == "cancelled" else ("right" if row.correct else "wrong")
            later(dialog.set_state, (row.pair, row.mode, row.question_id, row.repeat), state,
                  f"{row.status}: {row.detail or row.error or ''}")

        def on_start(job: Any) -> None:
            later(dialog.set_state, (job.pair, job.mode, job.question_id, job.repeat), "running")

        try:
            self._reading = True
            try:
                documents, skipped = await self._documents(spec)
            finally:
                self._reading = False
            dialog.set_running(True, f"{len(documents)} documents; starting…")
            evaluation_id, card = await self.on_engine(self._evaluate(spec, qset, pairs, config_for, documents,
                                                                      skipped, on_jobs, on_start, on_row))
        except asyncio.CancelledError:
            dialog.set_finished("Stopped.")
            raise
        except (ValueError, OSError) as exc:
            dialog.set_error(str(exc))
            return None
        except Exception as exc:           # the evaluation's boundary: said in the dialog, logged
            log.exception("the evaluation failed")
            dialog.set_error(f"The evaluation failed: {type(exc).__name__}: {exc}")
            return None
        await asyncio.sleep(0)             # the last progress calls (posted from the engine) first
        lines = card.get("lines", [])
        done = sum(ln["answers"] for ln in lines)
        stopped = int(card.get("stopped") or 0)
        dialog.set_finished(f"{'Stopped' if self._stopped else 'Done'}: {done} answers scored"
                            + (f", {stopped} stopped" if stopped else "") + "; the scorecard is saved.")
        self.evaluation_id = evaluation_id
        self.shown(evaluation_id)
        return evaluation_id

    async def _evaluate(self, spec: EvaluationSpec, qset: Any, pairs: list, config_for: Callable, documents: list,
                        skipped: list, on_jobs: Callable, on_start: Callable, on_row: Callable) -> tuple[str, dict]:
        """On the engine's loop: the evaluation, its runs on RunService over the window's store."""
        # lazy: +1 modules in the window (where it runs)
        from app.eval_runs import EvaluationRuns
        # lazy: free in the window (where it runs)
        from app.run_service import RunService
        # lazy: +12 modules in the window (where it runs)
        from core.evaluation.runner import Evaluation
        # lazy: free in the window (where it runs)
        from core.store import RunStore
        # lazy: free in the window (where it runs)
        from core.store.db import connect
        path = self.store().path               # each run opens the store itself, as the window's runs do
        service = RunService(open_store=lambda: RunStore.open(path), keys=self.keys, settings=self.settings)
        runs = EvaluationRuns(service, documents, skipped)
        evaluation = Evaluation(qset, documents, pairs, config_for=config_for, run_rlm=runs.run_rlm,
                                llm_for=runs.llm_for, repeats=spec.repeats, parallel=spec.parallel,
                                modes=spec.modes)
        self._stop = lambda: runs.stop(evaluation)
        if self._stopped:                     # Stop came while the documents were read
            evaluation.stop()
        records_db = connect(path)            # its own connection, as the CLI's (app/cli_eval.py)
        try:
            return await evaluation.run(records_db, on_row=on_row, on_start=on_start, on_jobs=on_jobs)
        finally:
            self._stop = None
            records_db.close()

    # --- stop ------------------------------------------------------------------------------
    def stop(self) -> None:
        """No question starts after this; the runs in flight stop (on the engine's loop)."""
        if self.task is None or self.task.done():
            return
        self._stopped = True
        if self.dialog is not None:
            self.dialog.set_stopping()
        if self._reading:                    # nothing runs yet: reading the documents ends here
            self.task.cancel()
            return
        asyncio.ensure_future(self.on_engine(self._stop_on_engine()))

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop, and wait up to `timeout` for the runs in flight to end; then cancel what is left."""
        await stop_then_wait(self.task, self.stop, timeout)

    async def _stop_on_engine(self) -> None:
        if self._stop is not None:
            self._stop()
