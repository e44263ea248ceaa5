"""The window's composition root: builds the glue objects, hands each the ports it
needs (app/ports.py) and wires the widgets' signals to them. It decides nothing itself.

    SettingsGlue        the settings in force, the dialog, the keychain   (SettingsPort)
    SourcesGlue         reading files into Sources                       (SourcesPort)
    RunGlue             Run, Stop, every kind of run and its report      (RunsPort; .runs the live run)
    HistoryGlue         the history list, replay, export, re-run         (ReplayPort)
    TrustGlue           citations, coverage, sub-calls, verify, fork, compare
    SessionGlue         follow-ups in the last run's live REPL
    FirstRunGlue        welcome, samples, guide, recent, last session
    ModelChoicesGlue    the model pickers' lists
    ModelsGlue, GridGlue, LimitFixes, PasteGlue, LocalDefaultsGlue

Widgets in ui/ only show things and emit intents; the glue answers them. Everything heavy
is imported lazily (litellm alone takes ~2 s); long work runs as asyncio tasks on the
qasync loop; every failure ends up in the one notifier.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox

from app.engine_thread import EngineThread
from app.first_run_glue import FirstRunGlue
from app.grid_glue import GridGlue
from app.history_glue import HistoryGlue
from app.limit_fixes import LimitFixes
from app.local_defaults_glue import LocalDefaultsGlue
from app.model_choices_glue import ModelChoicesGlue
from app.models_glue import ModelsGlue
from app.paste_glue import PasteGlue
from app.run_glue import RunGlue
from app.run_service import RunService, preload_engine  # noqa: F401  (preload_engine: the bench)
from app.run_store import StoreHolder
from app.session_glue import SessionGlue
from app.settings_glue import SettingsGlue
from app.sources_glue import SourcesGlue
from app.trust_glue import TrustGlue
from ui.notifier import Notifier

log = logging.getLogger(__name__)


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
        self.panes = panes = window.run_panes
        qp = window.question_panel
        engine = EngineThread()
        self.store = StoreHolder()
        self.settings_glue = prefs = SettingsGlue(window, notifier, settings=settings, engine=engine)
        self.sources = SourcesGlue(window, notifier, settings=prefs, store=self.store, parent=self)
        self.run_glue = RunGlue(window, notifier, settings=prefs, sources=self.sources, store=self.store,
                           service=RunService(keys=prefs.keys, settings=prefs.current), engine=engine, parent=self)
        self.runs = self.run_glue.runs                # the run in progress (app/window_runs.py)
        self.history = HistoryGlue(window, panes, notifier, store=self.store, settings=prefs, runs=self.run_glue,
                                   sources=self.sources)
        self._wire()
        self.trust = TrustGlue(window, panes, notifier, live=self.runs, history=self.history, settings=prefs,
                               sources=self.sources, launcher=self.run_glue)
        self.run_glue.use_approver(self.trust)        # large batches ask in the window
        self.limit_fixes = LimitFixes(qp, settings=prefs, estimate=self.trust, notifier=notifier)
        qp.fix_requested.connect(self.limit_fixes.apply)
        panes.limit_fix_requested.connect(self.limit_fixes.apply)
        self.sessions = SessionGlue(window, notifier, live=self.runs, history=self.history, launcher=self.run_glue,
                                    sources=self.sources, last_session=settings.ui.get("last_session"))
        self.models = ModelsGlue(window, notifier, store=self.store, settings=prefs, sources=self.sources,
                                 runs=self.run_glue, engine=engine)
        self.first_run = FirstRunGlue(window, notifier, settings=prefs, history=self.history,
                                      sources=self.sources, runs=self.run_glue, guide=self.models)
        self.choices = ModelChoicesGlue(qp, notifier, settings=prefs, runs=self.run_glue, servers=self.first_run)
        self.first_run.models_changed.connect(self.choices.models_changed)
        self.local_defaults = LocalDefaultsGlue(window, settings=prefs)
        self.paste = PasteGlue(window, notifier, sources=self.first_run)   # kept for the next start
        self.grids = GridGlue(window, store=self.store, settings=prefs, sources=self.sources, panel=qp,
                              engine=engine, history=self.history, citations=self.trust)

    # --- wiring ---------------------------------------------------------------
    def _wire(self) -> None:
        w = self.window
        sp, qp, hp = w.sources_pane, w.question_panel, w.history_pane
        s, r, h = self.sources, self.run_glue, self.history
        sp.paths_added.connect(s.add_paths)
        sp.remove_requested.connect(s.remove_sources)
        sp.clear_requested.connect(s.clear_sources)
        sp.cancel_requested.connect(s.cancel_reading)
        s.cleared.connect(lambda: r.link_next(None))
        qp.run_requested.connect(r.start_run)
        qp.stop_requested.connect(r.stop_run)
        qp.models_wanted.connect(self.want_models)
        hp.filters_changed.connect(h.refresh)
        hp.open_requested.connect(h.open_run)
        hp.export_requested.connect(h.export_run)
        hp.delete_requested.connect(h.delete_run)
        hp.rerun_requested.connect(h.rerun)
        w.settings_requested.connect(self.open_settings)
        w.leave_replay_requested.connect(h.leave_replay)
        w.closing.connect(self.save_state)
        w.guard_close(self._may_close)
        self.theme.changed.connect(self._restyle)
        self.notifier.action_requested.connect(self._on_notice_action)
        self.settings_glue.applied.connect(self._settings_applied)
        self.panes.export_requested.connect(h.export_current)
        live = self.runs
        live.started.connect(h.leave_replay)            # before the panes reset for the new run
        live.started.connect(r.on_started)
        live.prepared.connect(r.on_prepared)
        live.ended.connect(r.on_ended)
        live.ended.connect(h.run_ended)
        live.failed.connect(r.on_failed)
        live.stopped_early.connect(r.on_stopped_early)

    def _restyle(self, _name: str) -> None:
        self.panes.restyle()        # the panes paint some parts with their own colours

    def restore_window(self) -> None:
        """Window layout and the last-used models and caps (before the first paint)."""
        ui = self.settings.ui
        qp = self.window.question_panel
        qp.set_caps({**self.settings_glue.default_caps(), **(ui.get("last_caps") or {})})
        qp.set_mode(ui.get("last_mode"))
        root = ui.get("last_root_model") or self.settings.root_model
        sub = ui.get("last_sub_model") or self.settings.sub_model
        self.choices.show_known()
        qp.set_models(root, sub)
        self.window.restore_state(ui.get("window") or {})
        from app.settings import ocr_default      # lazy: already loaded by the settings (no cost)
        self.window.sources_pane.set_ocr(ocr_default(self.settings))

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
        self.settings_glue.save()

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop what runs, give it `timeout` seconds to write its end, close the kept
        REPLs, the engine thread and the store."""
        self.choices.shutdown()
        await self.sources.shutdown(timeout)
        await self.first_run.close()
        self.sessions.close()
        await self.models.shutdown(timeout)        # an evaluation's runs (Models > Scorecards) stop too
        await self.grids.shutdown(timeout)         # a grid's cells too
        await self.runs.shutdown(timeout)
        self.store.close()

    def _settings_applied(self, before: Any) -> None:
        """The settings dialog saved new settings: the window follows them. The question
        panel keeps the caps the user set there; only a default changed in the dialog
        replaces the panel's value."""
        qp = self.window.question_panel
        prefs = self.settings_glue
        old = {k: before.caps[k] for k in ("max_depth", "max_cost_usd", "max_iterations") if k in before.caps}
        shown, after = qp.caps(), prefs.default_caps()
        self.theme.apply(self.settings.theme)
        qp.set_caps({k: after[k] if k in after and old.get(k) != after[k] else shown[k] for k in shown})
        self.choices.models_changed()
        from app.settings import ocr_default      # lazy: already loaded by the settings (no cost)
        self.window.sources_pane.set_ocr(ocr_default(self.settings))
        self.notifier.clear("run")            # a run error (a wrong address, key or model) may be fixed now
        self.notifier.info("Settings saved.")

    def _on_notice_action(self, action: str) -> None:
        if action in ("keys", "models", "endpoints", "caps", "documents", "grid", "appearance", "settings"):
            self.open_settings("" if action == "settings" else action)
        else:
            self.limit_fixes.apply(action)

    # --- what tests, the bench and app/gui.py read: each the part that owns it ----------
    settings = property(lambda self: self.settings_glue.current())
    settings_dialog = property(lambda self: self.settings_glue.dialog)
    documents = property(lambda self: self.sources.documents)
    ingest_task = property(lambda self: self.sources.ingest_task)
    running = property(lambda self: self.run_glue.running)
    run_task = property(lambda self: self.run_glue.run_task)
    last_outcome = property(lambda self: self.run_glue.last_outcome)
    parent_run_id = property(lambda self: self.run_glue.parent_run_id)
    catalog = property(lambda self: self.choices.catalog)

    def keys(self) -> Any:
        return self.settings_glue.keys()

    def open_settings(self, page: str = "") -> Any:
        return self.settings_glue.open(page)

    def settings_applied(self, settings: Any = None) -> None:
        self.settings_glue.take(settings)

    def want_models(self) -> None:
        self.choices.want_models()

    def add_paths(self, paths: list[str]) -> None:
        self.sources.add_paths(paths)

    def set_documents(self, documents: list[Any]) -> None:
        self.sources.set_documents(documents)

    def clear_sources(self) -> None:
        self.sources.clear_sources()

    def compose(self, kind: str = "ask", **fields: Any) -> Any:
        return self.run_glue.compose(kind, **fields)

    def launch(self, request: Any) -> Any:
        return self.run_glue.launch(request)

    def stop_run(self) -> None:
        self.run_glue.stop_run()

    def sink(self, event: Any) -> None:
        """An event sink for the panes (any thread): batched per frame (app/engine_thread.py)."""
        self.runs.bridge.sink(event)

    def flush_events(self) -> None:
        self.runs.bridge.drain()
