"""The glue between the window and the work: reading sources, running,
history and replay, settings and keys.

Widgets in ui/ only show things and emit intents; this module answers them
with the runner, the store, ingestion, settings and the keychain. Everything
heavy is imported lazily (litellm alone takes ~2 s) and, where it is slow,
imported in a thread so the window never freezes. Long work runs as asyncio
tasks on the qasync loop; every failure ends up in the one notifier.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
import threading
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox

from app.first_run_glue import FirstRunGlue
from app.history_glue import HistoryGlue
from app.limit_fixes import LimitFixes, cap_advice, one_stop
from app.local_defaults_glue import LocalDefaultsGlue
from app.grid_glue import GridGlue
from app.models_glue import ModelsGlue
from app.paste_glue import PasteGlue
from app.run_service import IMPORT_LOCK, RunRequest, RunService, preload_engine  # noqa: F401  (preload_engine: the bench)
from app.session_glue import SessionGlue
from app.settings_glue import SettingsGlue
from app.trust_glue import TrustGlue
from app.window_runs import WindowRuns
from core import limits
from core.run_names import title_of
from core.repl.sandbox_report import NOTICE_PREFIX as SANDBOX_NOTICE
from ui.cost_meter import cost_text
from ui.notifier import Notification, Notifier, explain_error
from ui.model_picker import ModelChoice
from ui.sources_pane import SourceRow, duplicates_text
from app.key_routing import route_key_for

log = logging.getLogger(__name__)


def settings_spec(settings: Any, model_id: str) -> Any:
    """A model's spec from the settings alone (core/models.py), for the pickers' hints."""
    # lazy: +2 modules, 20 ms at load 9 (first use only; already loaded with the settings)
    from app.settings import NoPriceMap, model_spec
    return model_spec(settings, model_id, price_map=NoPriceMap())


def load_settings_safely() -> tuple[Any, str]:
    """(settings, what went wrong or ""). A damaged file gives defaults and says why."""
    # lazy: free in the window (where it runs)
    from app.settings import Settings, load_settings
    try:
        settings = load_settings()
    except OSError as exc:
        log.warning("settings could not be read: %s", exc)
        return Settings(), f"{type(exc).__name__}: {exc}"
    return settings, " ".join(settings.warnings)


class Controller(QObject):
    def __init__(self, window, notifier: Notifier, theme, *, settings: Any) -> None:
        super().__init__(window)
        self.window = window
        self.notifier = notifier
        self.theme = theme
        self.settings = settings
        self.panes = window.run_panes
        self.documents: dict[str, Any] = {}      # Document.path -> Document
        self.skipped: dict[str, Any] = {}        # Skip.path -> Skip
        self._queued_paths: list[str] = []
        self.ingest_task: asyncio.Task | None = None
        self.last_outcome: Any = None
        self.parent_run_id: str | None = None    # set by "re-run" in History, used by the next Run
        self._catalog_task: asyncio.Task | None = None
        self.catalog: list[Any] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self.settings_glue = SettingsGlue(window, notifier, settings=lambda: self.settings,
                                          apply=self.settings_applied,
                                          on_engine=lambda coro: self.runs.on_engine(coro))
        # The one run path: requests go to the run service on the engine's own thread.
        self.service = RunService(keys=self.keys, settings=lambda: self.settings)
        self.runs = WindowRuns(self.service, consume=self._consume, parent=self)
        self.history = HistoryGlue(
            window, self.panes, notifier, is_running=lambda: self.running,
            last_run_id=lambda: self.last_outcome.run_id if self.last_outcome else None,
            set_documents=self.set_documents, settings=lambda: self.settings,
            rerun_loaded=self._rerun_loaded)
        self._wire()
        self.trust = TrustGlue(                  # citations, coverage, sub-calls, verify, fork, compare (issue 9)
            window, self.panes, notifier, self.runs, self.history, settings=lambda: self.settings,
            documents=lambda: self.documents, show_citation=self.show_citation, launch=self.launch)
        self.limit_fixes = LimitFixes(           # the buttons that fix what a cap blocked or limited
            window.question_panel, settings=lambda: self.settings, save_settings=self._save_settings,
            open_settings=self.open_settings, settings_changed=self.trust.update_estimate, notifier=notifier)
        window.question_panel.fix_requested.connect(self.limit_fixes.apply)
        self.panes.limit_fix_requested.connect(self.limit_fixes.apply)
        self.sessions = SessionGlue(                # follow-ups in the last run's live REPL (issue 10)
            window, notifier, self.runs, self.history, compose=self.compose, launch=self.launch,
            documents=lambda: self.documents, set_documents=self.set_documents,
            last_session=settings.ui.get("last_session"))
        self.first_run = FirstRunGlue(          # welcome, samples, guide, recent, last session (issue 10)
            window, notifier, settings=lambda: self.settings, save_settings=self._save_settings,
            keys=self.keys, leave_replay=self.history.leave_replay, add_paths=self.add_paths,
            clear_sources=self.clear_sources, has_documents=lambda: bool(self.documents),
            is_running=lambda: self.running,
            last_run_id=lambda: self.last_outcome.run_id if self.last_outcome else None,
            open_settings=self.open_settings, default_caps=self._default_caps,
            models_changed=self._models_changed, guide_numbers=lambda: self.models.guide_numbers(),
            store_documents=lambda run_id: self.history.store().documents(run_id),
            set_documents=self.set_documents)
        self.local_defaults = LocalDefaultsGlue(window, settings=lambda: self.settings)   # issue 25
        self.paste = PasteGlue(window, notifier, add_paths=self.first_run.add_paths)   # kept for the next start
        self.models = ModelsGlue(              # fitness, scorecards, also ask directly (issue 17)
            window, notifier, store=self.history.store, settings=lambda: self.settings,
            documents=lambda: self.documents, run_task=lambda: self.run_task,
            last_outcome=lambda: self.last_outcome, key_for=self.key_for, on_engine=self.runs.on_engine,
            keys=self.keys)
        qp = window.question_panel
        self.grids = GridGlue(                 # the review grid: questions x Sources' documents
            window, store=self.history.store, settings=lambda: self.settings, keys=self.keys,
            documents=lambda: self.documents, caps=qp.caps, pair=lambda: (qp.root_model(), qp.sub_model()),
            on_engine=self.runs.on_engine, open_run=self.history.open_run, open_citation=self.trust.open_citation)

    # --- wiring ---------------------------------------------------------------
    def _wire(self) -> None:
        w = self.window
        sp, qp, hp = w.sources_pane, w.question_panel, w.history_pane
        sp.paths_added.connect(self.add_paths)
        sp.remove_requested.connect(self.remove_sources)
        sp.clear_requested.connect(self.clear_sources)
        sp.cancel_requested.connect(self.cancel_reading)
        qp.run_requested.connect(self.start_run)
        qp.stop_requested.connect(self.stop_run)
        qp.models_wanted.connect(self.want_models)
        h = self.history
        hp.filters_changed.connect(h.refresh)
        hp.open_requested.connect(h.open_run)
        hp.export_requested.connect(h.export_run)
        hp.delete_requested.connect(h.delete_run)
        hp.rerun_requested.connect(h.rerun)
        w.settings_requested.connect(self.open_settings)
        w.leave_replay_requested.connect(h.leave_replay)
        w.closing.connect(self.save_state)
        w.close_guard = self._may_close
        self.theme.changed.connect(self._restyle)
        self.notifier.action_requested.connect(self._on_notice_action)
        self.panes.export_requested.connect(h.export_current)
        r = self.runs
        r.started.connect(self._run_started)
        r.prepared.connect(self._run_prepared)
        r.ended.connect(self._run_ended)
        r.failed.connect(self._run_failed)
        r.stopped_early.connect(self._run_stopped_early)

    def _restyle(self, _name: str) -> None:
        self.panes.restyle()        # the panes paint some parts with their own colours

    def restore_window(self) -> None:
        """Window layout and the last-used models and caps (before the first paint)."""
        ui = self.settings.ui
        qp = self.window.question_panel
        qp.set_caps({**self._default_caps(), **(ui.get("last_caps") or {})})
        qp.set_mode(ui.get("last_mode"))
        root = ui.get("last_root_model") or self.settings.root_model
        sub = ui.get("last_sub_model") or self.settings.sub_model
        qp.set_model_choices([self._choice(m) for m in self._known_model_ids()])
        qp.set_models(root, sub)
        self.window.restore_state(ui.get("window") or {})
        from app.settings import ocr_default      # lazy: already loaded by the settings (no cost)
        self.window.sources_pane.set_ocr(ocr_default(self.settings))

    def _default_caps(self) -> dict:
        caps = self.settings.caps
        return {k: caps[k] for k in ("max_depth", "max_cost_usd", "max_iterations") if k in caps}

    def _choice(self, model_id: str, detail: str = "") -> ModelChoice:
        """A model of the settings: an endpoint's is listed with the local ones, its price hint
        from its spec (a Free endpoint's: "free"; yours: your price), read from the settings."""
        local = model_id.partition("/")[0] in {e.name for e in self.settings.endpoints}
        try:
            spec = settings_spec(self.settings, model_id)
        except ValueError:
            return ModelChoice(model_id, "", detail, local=local)
        hint = spec.price_text if spec.price is not None or local else ""
        return ModelChoice(model_id, hint, detail, local=local)

    def _known_model_ids(self) -> list[str]:
        ids = [self.settings.root_model, self.settings.sub_model,
               *self.settings.models.keys(),
               *(f"{e.name}/{m}" for e in self.settings.endpoints for m in e.models)]
        return list(dict.fromkeys(i for i in ids if i))

    def start(self) -> None:
        """After the first paint: the history list."""
        self.history.refresh()
        self.first_run.start()

    def _may_close(self) -> bool:
        """Closing during a run: ask first (the run is then stopped and stored as cancelled)."""
        if not self.running:
            return True
        answer = QMessageBox.question(
            self.window, "A run is in progress",
            "Stop the run and quit? What was done so far is kept in the history.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def save_state(self) -> None:
        qp = self.window.question_panel
        self.settings.ui.update(window=self.window.save_state(), last_caps=qp.caps(),
                                last_root_model=qp.root_model(), last_sub_model=qp.sub_model(),
                                last_mode=qp.mode())
        self.settings.ui["last_session"] = self.first_run.session_state()
        self._save_settings()

    def _save_settings(self) -> None:
        # lazy: free in the window (where it runs)
        from app.settings import save_settings
        try:
            save_settings(self.settings)
        except OSError as exc:
            self.notifier.error("Your settings could not be saved.", f"{exc}")

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop what runs, give it `timeout` seconds to write its end, close the kept
        REPLs, the engine thread and the store."""
        for task in (self.ingest_task, self._catalog_task):
            if task is not None and not task.done():
                task.cancel()
        if self.ingest_task is not None and not self.ingest_task.done():
            await asyncio.wait([self.ingest_task], timeout=timeout)
        await self.first_run.close()
        self.sessions.close()
        await self.models.shutdown(timeout)        # an evaluation's runs (Models > Scorecards) stop too
        await self.grids.shutdown(timeout)         # a grid's cells too
        await self.runs.shutdown(timeout)
        self.history.close()

    # --- sources --------------------------------------------------------------
    def add_paths(self, paths: list[str]) -> None:
        self._loop = asyncio.get_event_loop()
        self._queued_paths.extend(str(p) for p in paths)
        if self.ingest_task is None or self.ingest_task.done():
            self.window.sources_pane.set_reading(True)
            self.ingest_task = asyncio.ensure_future(self._read_queued())
            self.ingest_task.add_done_callback(self._reading_done)

    async def _read_queued(self) -> None:
        # lazy: free in the window (where it runs)
        from core.ingest import ingest
        while self._queued_paths:
            paths, self._queued_paths = self._queued_paths, []
            try:
                # lazy: free in the window (where it runs)
                from app.settings import ingest_options
                # lazy: free in the window (where it runs)
                from core.store.extracts import ExtractCache
                options = ingest_options(self.settings, ocr=self.window.sources_pane.ocr())
                result = await ingest(paths, options,
                                      on_progress=self._on_progress, cache=ExtractCache(self.history.store()))
            except OSError as exc:
                self.notifier.error(f"Could not read the sources: {exc}",
                                    "Check that the files exist and that you may read them.")
                continue
            self._take_result(result)
            self._remember_folders(paths)

    def _reading_done(self, task: asyncio.Task) -> None:
        self.window.sources_pane.set_reading(False)
        if task.cancelled():
            self._queued_paths.clear()
            self.notifier.info("Reading stopped; the files read so far are kept.")
        elif task.exception() is not None:
            exc = task.exception()
            sys.excepthook(type(exc), exc, exc.__traceback__)

    def _on_progress(self, progress: Any) -> None:
        def show() -> None:
            self.window.sources_pane.set_progress(
                progress.files_done, progress.files_total, progress.bytes_done,
                progress.bytes_total, progress.current or "")
        if threading.current_thread() is threading.main_thread():
            show()
        else:
            self._loop.call_soon_threadsafe(show)

    def _take_result(self, result: Any) -> None:
        # lazy: free in the window (where it runs)
        from core.ingest.run import against_known
        # Read once across drops too: a copy of a file already in the sources costs nothing.
        fresh, repeats, grown = against_known(self.documents.values(), result.documents)
        for doc in grown:
            self.documents[doc.path] = doc
        rows = []
        for doc in fresh:
            self.documents[doc.path] = doc
            self.skipped.pop(doc.path, None)
            rows.append(SourceRow.of_document(doc))
        for skip in [*result.skipped, *repeats]:
            if skip.path not in self.documents:
                self.skipped[skip.path] = skip
                rows.append(SourceRow.of_skip(skip))
        self.window.sources_pane.add_rows(rows)
        problems = [s for s in result.skipped if s.reason != "duplicate"]
        if problems:
            reasons = sorted({s.reason.replace("_", " ") for s in problems})
            n = len(problems)
            self.notifier.warning(
                f"{n} file{'s were' if n != 1 else ' was'} skipped ({', '.join(reasons)}).",
                "The Sources list shows the reason for each; the other files were read.",
                topic="sources")
        duplicates = len(result.skipped) - len(problems) + len(repeats)
        once = (f" · {len(problems)} skipped" if problems else "") + \
            (f" · {duplicates_text(duplicates)}" if duplicates else "")        # the Sources totals' words
        same = getattr(result, "unchanged", 0)
        kept = f", {same:,} unchanged since an earlier read" if same else ""
        self.notifier.info(f"Read {len(fresh)} document{'s' if len(fresh) != 1 else ''} "
                           f"in {result.duration_ms / 1000:.1f} s{once}{kept}.")

    def _remember_folders(self, paths: list[str]) -> None:
        for p in paths:
            self.settings.remember_folder(p)

    def cancel_reading(self) -> None:
        if self.ingest_task is not None and not self.ingest_task.done():
            self.ingest_task.cancel()

    def remove_sources(self, paths: list[str]) -> None:
        for p in paths:
            self.documents.pop(p, None)
            self.skipped.pop(p, None)
        self.window.sources_pane.remove_paths(paths)

    def clear_sources(self) -> None:
        self.cancel_reading()
        self.documents.clear()
        self.skipped.clear()
        self.parent_run_id = None
        self.window.sources_pane.set_rows([])

    def show_citation(self, address: str) -> None:
        """A citation in the answer: select its document in the sources list."""
        pane = self.window.sources_pane
        for row, source in enumerate(pane.rows()):
            if address == source.path or address.startswith(source.path + ":") \
                    or address.startswith(source.path + " "):
                pane.table.selectRow(row)
                pane.table.scrollTo(pane.model.index(row, 0))
                self.window.statusBar().showMessage(f"Cited: {address}", 10_000)
                return
        self.window.statusBar().showMessage(f"Cited: {address} (not among the current sources)", 10_000)

    def set_documents(self, documents: list[Any]) -> None:
        """Replace the sources with these documents (re-run from history)."""
        self.documents = {d.path: d for d in documents}
        self.skipped = {}
        self.window.sources_pane.set_rows([SourceRow.of_document(d) for d in documents])

    # --- models -----------------------------------------------------------------
    def want_models(self) -> None:
        if self._catalog_task is None:
            self._catalog_task = asyncio.ensure_future(self.load_catalog())

    async def load_catalog(self) -> None:
        def fetch() -> list[Any]:
            with IMPORT_LOCK:               # may import litellm: off the loop, never beside another import of it
                catalog = importlib.import_module("core.catalog")
                return catalog.list_models(self.settings.endpoints, fetch_remote=False)
        qp = self.window.question_panel
        if not self.running:
            qp.set_status("Loading the model list…")
        try:
            self.catalog = await asyncio.to_thread(fetch)
        except (OSError, ValueError) as exc:
            self._catalog_task = None
            self.notifier.warning(f"The model list could not be loaded: {exc}",
                                  "You can still type a model id.")
            return
        finally:
            if qp.status_label.text() == "Loading the model list…":
                qp.set_status("")
        self._fill_model_choices()

    def _models_changed(self) -> None:
        """Endpoints or models were added: the pickers list them (the catalog is read again)."""
        self._catalog_task = None
        self._fill_model_choices()

    def _fill_model_choices(self) -> None:
        overrides = self.settings.models
        known = {e.id for e in self.catalog}
        choices = [self._choice(m, detail=m) for m in self._known_model_ids() if m not in known]
        # lazy: core.catalog is loaded off the loop with the catalogue (load_catalog), 7 ms alone
        from core.catalog import without_idle_servers
        running = [s.kind for s in self.first_run.servers if s.found]
        for entry in without_idle_servers(self.catalog, running):    # no idle server's catalogue
            own = overrides.get(entry.id)
            price = (0.0, 0.0) if own is not None and own.free else \
                (own.price.input_per_m, own.price.output_per_m) if own is not None and own.price else None
            if price is None and entry.source in ("endpoint", "remote"):   # an endpoint's: by its spec
                spec = settings_spec(self.settings, entry.id)
                price = (spec.price.input_per_m, spec.price.output_per_m) if spec.price is not None else None
            choices.append(ModelChoice.of_entry(entry, price))
        self.window.question_panel.set_model_choices(choices)

    # --- running (every kind of run is a RunRequest for self.runs) ---------------
    @property
    def running(self) -> bool:
        return self.runs.running

    @property
    def run_task(self) -> asyncio.Task | None:
        return self.runs.task

    def start_run(self) -> Notification | None:
        """Run the question panel's question (a re-run when History loaded one); returns
        the notification that explains why not, if it cannot start."""
        if self.running:
            return None
        parent = self.parent_run_id
        request = self.compose("re-run" if parent else "ask", parent_run_id=parent)
        if isinstance(request, Notification):
            return request
        self.launch(request)
        return None

    def compose(self, kind: str = "ask", **fields: Any) -> RunRequest | Notification:
        """A RunRequest from the question panel (question, models, caps) and the sources;
        or, posted, the notification that says what is missing."""
        qp = self.window.question_panel
        problem = self._run_problem(qp, needs_documents=kind not in ("rebuild", "fork"))
        if problem is not None:
            self.notifier.post(problem)
            return problem
        # lazy: free in the window (where it runs)
        from app.settings import build_run_config
        try:
            config = build_run_config(self.settings, root=qp.root_model(),
                                      sub=qp.sub_model() or None, overrides={**qp.caps(), **qp.run_overrides()})
        except ValueError as exc:
            return self.notifier.error(f"These caps cannot be used: {exc}", "Change them and run again.")
        config = self.trust.with_approver(config)      # large batches ask in the window (issue 9)
        fields.setdefault("question", qp.question())
        if kind not in ("rebuild", "fork"):
            fields.setdefault("documents", tuple(self.documents.values()))
            fields.setdefault("skipped", tuple(self.skipped.values()))
        return RunRequest(kind, config=config, keep_session=True, **fields)

    def launch(self, request: RunRequest) -> asyncio.Task | None:
        """Start any request (ask, re-run, follow-up, fork, rebuild) in the window."""
        if self.running:
            self.notifier.warning("A run is in progress.", "Stop it before starting another.")
            return None
        if request.question:
            self._remember_question(request.question)
        self._loop = asyncio.get_event_loop()
        return self.runs.launch(request)

    def _rerun_loaded(self, run_id: str) -> None:
        """History loaded a run's sources, question, models and caps: the next Run re-runs it."""
        self.parent_run_id = run_id

    def _run_problem(self, qp, *, needs_documents: bool = True) -> Notification | None:
        if self.ingest_task is not None and not self.ingest_task.done():
            return Notification("warning", "The sources are still being read.",
                                "Wait until reading ends, or stop it, then run.")
        if needs_documents and not self.documents:
            return Notification("warning", "There are no documents to ask about yet.",
                                "Drop files or folders on the Sources pane, or use Add files.",
                                topic="sources")
        if not qp.question():
            return Notification("warning", "Type a question first.",
                                "Write it in the question box, then press Run (Ctrl+Enter).",
                                topic="question")
        if not qp.root_model():
            return Notification("warning", "Pick a root model.",
                                "Choose one in the question panel, or type a model id "
                                "(e.g. openai/gpt-4o-mini).")
        if qp.blocked():
            return Notification("warning", qp.blocked(), "Use one of the buttons under Run.")
        return None

    def _remember_question(self, question: str) -> None:
        self.settings.remember_question(question)

    def _run_started(self, request: RunRequest) -> None:
        qp = self.window.question_panel
        if request.kind in ("ask", "re-run"):
            self.parent_run_id = None            # a re-run links one run only
        self.history.leave_replay()
        self.panes.reset()
        qp.set_running(True)
        qp.set_status(_starting(request, title_of(self.history.store(), request.parent_run_id)))

    def _run_prepared(self, request: RunRequest, prepared: Any) -> None:
        qp = self.window.question_panel
        if prepared.kind == "fork":
            qp.set_status(f"Fork of “{title_of(self.history.store(), prepared.parent_run_id)}” from turn "
                          f"{prepared.turn}: running…")
        else:
            qp.set_status("Running…")

    def _run_ended(self, request: RunRequest, outcome: Any) -> None:
        self.window.question_panel.set_running(False)
        self.last_outcome = outcome
        self._report(outcome, request.config)
        self.history.refresh(select=outcome.run_id)

    def _run_failed(self, request: RunRequest, exc: BaseException) -> None:
        qp = self.window.question_panel
        qp.set_running(False)
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        # lazy: +9 modules in the window (where it runs)
        from core.trust.rebuild import RebuildError
        if request.kind == "fork" and isinstance(exc, (RebuildError, StoreError, OSError, ValueError)):
            self.notifier.error(f"The fork could not start: {exc}")
            qp.set_status("The fork could not start.")
        elif request.kind == "rebuild" and isinstance(exc, (RebuildError, StoreError, OSError, RuntimeError)):
            self.notifier.error(f"The REPL of “{title_of(self.history.store(), request.parent_run_id)}” could not "
                                f"be rebuilt: {exc}",
                                "Ask again and choose Start fresh.")
            qp.set_status("")
        else:
            config = request.config
            self.notifier.post(explain_error(f"{type(exc).__name__}: {exc}",
                                             model=getattr(config, "root_model", None),
                                             api_base=getattr(config, "api_base", None),
                                             labels=getattr(config, "model_labels", None)))
            qp.set_status("The run failed.")

    def _run_stopped_early(self, request: RunRequest) -> None:
        qp = self.window.question_panel
        qp.set_running(False)
        qp.set_status("Stopped before the run began.")

    def key_for(self, settings: Any, config: Any = None):
        """What a call outside a run (also ask directly) gets for each model: the key its URL
        may carry (app/key_routing.py)."""
        return route_key_for(config, keys=self.keys(), settings=settings)

    def _report(self, outcome: Any, config: Any) -> None:
        qp = self.window.question_panel
        totals = outcome.totals or {}
        cost = totals.get("cost_usd")
        wall = max(0.0, (outcome.finished_at or 0) - (outcome.started_at or 0))
        summary = f"{wall:.1f} s" + (f" · {cost_text(cost, totals.get('unpriced_models') or ())}"
                                     if cost is not None else "")
        limited = limits.summary(totals.get("limited"))
        if outcome.status == "finished" and limited:
            qp.set_status(f"Finished, limited · {summary}")
            action, label = limits.fix(totals.get("limited")) or ("", "")
            self.notifier.warning(f"The run finished, but {limited[0].lower()}{limited[1:]}",
                                  "The answer card says what was limited.", action=action, action_label=label,
                                  topic="cap")
        elif outcome.status == "finished":
            qp.set_status(f"Finished · {summary}")
            self.notifier.info(f"The run finished ({summary}).")
        elif outcome.status == "capped":
            qp.set_status(f"Stopped at a cap · {summary}")
            action, label = limits.fix(totals.get("limited")) or ("", "")
            if limited and action.startswith("set_cap:"):      # a refused root turn: said as it was
                self.notifier.warning(f"{limited} What was done is kept.",
                                      f"{one_stop(outcome.error or '')} {label} and run again.".strip(),
                                      action=action, action_label=label, topic="cap")
            else:
                self.notifier.warning(
                    f"The run stopped at a cap{': ' + one_stop(outcome.error) if outcome.error else '.'} "
                    "What was done is kept.", cap_advice(totals.get("cap_hit"), outcome.error),
                    action=action, action_label=label, topic="cap")
        elif outcome.status == "cancelled":
            qp.set_status(f"Stopped · {summary}")
            self.notifier.info("Stopped. The transcript so far stays.")
        else:
            qp.set_status("The run failed.")
            self.notifier.post(explain_error(outcome.error or "", model=getattr(config, "root_model", None),
                                             api_base=getattr(config, "api_base", None),
                                             label=config.label(config.root_model) if config is not None else None))
        if getattr(outcome, "store_error", None):
            self.notifier.warning("The run's record is incomplete: some events could not be saved.",
                                  "History, Verify and the exports may miss part of this run. Check the "
                                  "disk and the data folder.", detail=outcome.store_error)

    def stop_run(self) -> None:
        if not self.running:
            return
        self.window.question_panel.set_status("Stopping…")
        self.runs.stop()

    def sink(self, event: Any) -> None:
        """An event sink for the panes (any thread): batched per frame (app/engine_thread.py)."""
        self.runs.bridge.sink(event)

    def _sandbox_incomplete(self, message: str) -> None:
        """Once per session a banner, and the status-bar badge for good."""
        badge = self.window.sandbox_badge
        if not badge.isVisible():
            self.notifier.warning(message, "Model code runs with fewer walls on this system.")
        badge.show_message(message)

    def flush_events(self) -> None:
        self.runs.bridge.drain()

    def _consume(self, batch: list[Any], deadline: float | None = None) -> int:
        """A frame's events from the engine thread, in order, on the GUI thread: the panes
        fold them until `deadline` (app/engine_thread.py); returns how many they took."""
        done = self.panes.apply_many(batch, deadline)
        qp = self.window.question_panel
        if done and qp.status_label.text() == STARTING:
            qp.set_status("Running…")        # the run's first events: it is no longer starting
        for event in batch[:done] if done < len(batch) else batch:
            if event.type == "Notice" and event.level == "error":
                self.notifier.warning(event.message)
            elif event.type == "Notice" and event.message.startswith(SANDBOX_NOTICE):
                self._sandbox_incomplete(event.message)
        return done

    # --- settings and keys (app/settings_glue.py) -------------------------------
    @property
    def settings_dialog(self) -> Any:
        return self.settings_glue.dialog

    def keys(self) -> Any:
        return self.settings_glue.keys()

    def open_settings(self, page: str = "") -> Any:
        return self.settings_glue.open(page)

    def settings_applied(self, settings: Any = None) -> None:
        """The settings dialog saved new settings: follow them."""
        qp = self.window.question_panel
        before, shown = self._default_caps(), qp.caps()
        if settings is not None:
            self.settings = settings
        self._save_settings()
        self.theme.apply(self.settings.theme)
        # The question panel keeps the caps the user set there; only a default changed
        # in the dialog replaces the panel's value.
        after = self._default_caps()
        qp.set_caps({k: after[k] if k in after and before.get(k) != after[k] else shown[k] for k in shown})
        self._catalog_task = None
        self._fill_model_choices()
        from app.settings import ocr_default      # lazy: already loaded by the settings (no cost)
        self.window.sources_pane.set_ocr(ocr_default(self.settings))
        self.notifier.clear("run")            # a run error (a wrong address, key or model) may be fixed now
        self.notifier.info("Settings saved.")

    def _on_notice_action(self, action: str) -> None:
        if action in ("keys", "models", "endpoints", "caps", "documents", "grid", "appearance", "settings"):
            self.open_settings("" if action == "settings" else action)
        else:
            self.limit_fixes.apply(action)


STARTING = "Starting…"


def _starting(request: RunRequest, parent: str) -> str:
    """The status line as a run starts; `parent` names the run it comes from (core/run_names.py)."""
    if request.kind == "fork":
        return f"Rebuilding “{parent}” up to turn {request.fork_turn}…"
    if request.kind == "rebuild":
        return (f"Rebuilding the REPL of “{parent}”: re-running its code, "
                "no model calls…")
    return STARTING
