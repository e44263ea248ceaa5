"""Models glue: the Models window (fitness per model, scorecards) and "Also ask directly".

    ModelsGlue(window, notifier, store=..., settings=..., sources=..., runs=..., engine=...)
    # ports (app/ports.py)
    # adds the Models toolbar action; listens to the question panel

Reads the store it is given (the history glue's RunStore; core.fitness, core.evaluation.records),
writes exports with core.evaluation.scorecard, and runs the plain call beside the RLM
with core.engine.direct. The widgets get plain data only.

The imports inside methods are on purpose: what the Models window and the direct call
need is ~300 ms of imports the window's first paint does not (measured: the model client
220 ms with aiohttp, prices 41 ms, fitness and scorecards 32 ms, the two views 12 ms).
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from app.key_routing import route_key_for
from app.ports import EnginePort, RunsPort, SettingsPort, SourcesPort, StorePort
from ui import icons
from core.fitness import model_fitness
from core.fitness import guide_numbers
from ui.direct_compare import DirectCompareView

log = logging.getLogger(__name__)


class ModelsGlue:
    """Ports (app/ports.py): the run store, the settings (and keychain), Sources, the window's
    runs (the one in progress, the last one's outcome) and the engine's loop."""

    def __init__(self, window: Any, notifier: Any, *, store: StorePort, settings: SettingsPort,
                 sources: SourcesPort, runs: RunsPort, engine: EnginePort) -> None:
        self.window, self.notifier = window, notifier
        self.store, self.settings, self.keys = store.store, settings.current, settings.keys
        self._store_port, self._settings_port, self._engine = store, settings, engine
        self.sources, self.runs, self.on_engine = sources, runs, engine.run
        self.view: Any = None
        self.scorecards: Any = None            # app/scorecard_glue.py, made with the view
        self.compare: Any = None
        self.direct_task: asyncio.Task | None = None
        self.action = QAction("Models", window)
        self.action.setToolTip("Which model works: fitness across your runs and evaluation scorecards")
        icons.bind(self.action, "info")
        self.action.triggered.connect(self.open_view)
        window.add_toolbar_actions([self.action])
        window.question_panel.run_requested.connect(self.maybe_ask_directly)   # after the run has started

    # --- the Models window ----------------------------------------------------------
    def open_view(self) -> Any:
        # lazy: +1 modules in the window (where it runs)
        from ui.models_view import ModelsView
        if self.view is None:
            self.view = ModelsView(self.window)
            self.view.evaluation_chosen.connect(self.show_scorecard)
            self.view.export_requested.connect(self.export_dialog)
            self.view.evaluate_requested.connect(self.new_evaluation)
            self.view.beside_chosen.connect(self.show_beside)
        self.refresh()
        self.view.show()
        self.view.raise_()
        return self.view

    def refresh(self) -> None:
        # lazy: +4 modules in the window (where it runs)
        from core.evaluation import records
        db = self.store().db
        self.view.set_fitness(model_fitness(db))
        self.view.set_evaluations(records.list_evaluations(db))

    def new_evaluation(self) -> Any:
        """Models > Scorecards > New evaluation…: the dialog that starts, shows and stops one."""
        # lazy: +2 modules in the window (where it runs)
        from app.scorecard_glue import ScorecardGlue
        if self.scorecards is None:
            qp = self.window.question_panel
            self.scorecards = ScorecardGlue(
                self.window, store=self._store_port, settings=self._settings_port, sources=self.sources,
                panel=qp, engine=self._engine, shown=self)
        return self.scorecards.open_dialog(self.view)

    async def shutdown(self, timeout: float = 5.0) -> None:
        """The window closes: a running evaluation is stopped and given `timeout` to end."""
        if self.scorecards is not None:
            await self.scorecards.shutdown(timeout)

    def evaluation_done(self, evaluation_id: str) -> None:
        """An evaluation ended (or was stopped): its scorecard chosen in the Scorecards tab."""
        self.open_view()
        self.view.tabs.setCurrentIndex(1)
        self.view.choose_evaluation(evaluation_id)

    def guide_numbers(self) -> str:
        try:
            return guide_numbers(self.store().db)
        except Exception:              # the guide opens even when the store cannot be read
            log.exception("the guide's figures could not be read")
            return ""

    def scorecard(self, evaluation_id: str) -> dict | None:
        # lazy: +4 modules in the window (where it runs)
        from core.evaluation import records
        row = records.get_evaluation(self.store().db, evaluation_id)
        return json.loads(row["scorecard_json"]) if row and row.get("scorecard_json") else None

    def show_scorecard(self, evaluation_id: str) -> None:
        self.view.set_scorecard(self.scorecard(evaluation_id))

    def show_beside(self, evaluation_id: str) -> None:
        """Compare scorecards: another evaluation's lines under the chosen one's."""
        # lazy: +4 modules in the window (where it runs)
        from core.evaluation import records
        # lazy: free in the window (where it runs)
        from core.run_names import run_title
        row = records.get_evaluation(self.store().db, evaluation_id) if evaluation_id else None
        title = run_title({"question": row["name"], "created_utc": row.get("updated_utc")}) if row else ""
        self.view.set_beside(self.scorecard(evaluation_id) if row else None, title)

    def export_dialog(self, evaluation_id: str, fmt: str) -> None:
        name = "CSV (*.csv)" if fmt == "csv" else "Markdown (*.md)"
        path, _ = QFileDialog.getSaveFileName(self.view, "Export scorecard", f"scorecard.{fmt}", name)
        if path:
            self.export(evaluation_id, fmt, Path(path))

    def export(self, evaluation_id: str, fmt: str, path: Path) -> None:
        # lazy: +8 modules in the window (where it runs)
        from core.evaluation.scorecard import render_csv, render_markdown
        card = self.scorecard(evaluation_id)
        if card is None:
            return
        text = render_csv(card) if fmt == "csv" else render_markdown(card, f"Scorecard: {card.get('name', '')}")
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            self.notifier.error(f"The scorecard could not be written to {path}: {exc.strerror or exc}",
                                  "Pick another folder.")

    # --- also ask directly ------------------------------------------------------------
    def maybe_ask_directly(self) -> None:
        qp = self.window.question_panel
        run_task = self.runs.run_task
        if not qp.also_direct() or run_task is None or run_task.done():
            return
        # lazy: free in the window (where it runs)
        from app.settings import build_run_config
        config = build_run_config(self.settings(), root=qp.root_model(), sub=qp.sub_model() or None,
                                  overrides=qp.caps())
        self.direct_task = asyncio.ensure_future(self._ask_directly(qp.question(), config, run_task))

    async def _ask_directly(self, question: str, config: Any, run_task: asyncio.Task) -> dict:
        # lazy: +3 modules in the window (where it runs)
        from core.engine.direct import ask_directly
        # lazy: +7 modules in the window (where it runs)
        from core.llm.client import ModelClient
        # lazy: +2 modules in the window (where it runs)
        from core.llm.pricing import PriceBook
        documents = list(self.sources.documents.values())
        before = self.runs.last_outcome
        client = ModelClient(key_for=route_key_for(config, keys=self.keys(), settings=self.settings()), api_base_for=config.api_base_for,
                             max_retries=config.max_retries, timeout_s=config.request_timeout_s)
        # litellm is called on the engine's loop only (app/engine_thread.py), never the window's
        direct = await self.on_engine(ask_directly(client, PriceBook.for_config(config), config.root_model,
                                                          question, documents,
                                                          max_tokens=min(config.root_max_tokens, 4096)))
        await asyncio.gather(run_task, return_exceptions=True)
        latest = self.runs.last_outcome
        outcome = latest if latest is not before else None
        return self.show_comparison(outcome, direct, config)

    def show_comparison(self, outcome: Any, direct: Any, config: Any) -> dict:
        """Both answers side by side. Models are named as the user picked them (config.label);
        the documents' size is the one estimate Sources shows (core.token_count), the direct
        call's tokens are what its provider counted."""
        # lazy: free in the window (where it runs)
        from core.token_count import about_tokens, counted_tokens, documents_tokens
        t = outcome.totals if outcome is not None else {}
        root, sub = config.label(config.root_model), config.label(config.sub_model)
        rlm = {"title": f"RLM · {root} → {sub}",
               "answer": outcome.answer if outcome is not None else "(the run did not end)",
               "figures": f"{outcome.status if outcome else '-'} · ${t.get('cost_usd', 0):.4f} · "
                          f"{t.get('wall_ms', 0) / 1000:.1f} s · {t.get('iterations', 0)} turns · "
                          f"{t.get('sub_calls', 0)} sub-calls"}
        measured = (f"{counted_tokens(direct.input_tokens)} in, {direct.output_tokens:,} out"
                    if direct.status == "answered" else "nothing sent")
        side = {"title": f"Direct call · {root}",
                "answer": direct.answer if direct.status == "answered" else f"Not asked: {direct.error}",
                "figures": f"{direct.status} · ${direct.cost_usd:.4f} · {direct.duration_ms / 1000:.1f} s · "
                           f"{measured}"}
        window = f"the {direct.window:,}-token window" if direct.window else "an unknown window"
        documents = list(self.sources.documents.values())
        note = (f"The documents are {about_tokens(documents_tokens(documents))} (estimated, as in Sources); "
                f"the root model {root} has {window}. "
                "An RLM pays off when the input is large and the task needs many steps over it; "
                "for a simple lookup in documents that fit, one plain call is usually enough.")
        if self.compare is None:
            self.compare = DirectCompareView(self.window)
        self.compare.set_sides(rlm, side, note)
        self.compare.show()
        return {"rlm": rlm, "direct": side, "note": note}

