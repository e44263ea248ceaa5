"""History and replay glue: the history list from the run store, replay in the
run panes, export, delete and re-run. Part of app/controller.py's job, kept
apart so each module stays small.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox

from app.ports import RunsPort, SettingsPort, SourcesPort, StorePort
from core.exports import export
from core.run_names import run_title
from ui.export_dialog import ask_export_path
from ui.history_pane import HistoryRow

log = logging.getLogger(__name__)

HISTORY_LIMIT = 500


class HistoryGlue:
    """Narrow dependencies: the window (its history pane, the replay mode, dialogs' parent),
    the run panes, the notifier, and ports (app/ports.py): the run store, the settings
    (endpoints), the window's runs (one in progress, the last, where a loaded re-run goes)
    and Sources (replaced by a re-run's documents)."""

    def __init__(self, window: Any, panes: Any, notifier: Any, *, store: StorePort, settings: SettingsPort,
                 runs: RunsPort, sources: SourcesPort) -> None:
        self.window = window
        self.panes = panes
        self.notifier = notifier
        self._store = store
        self._settings = settings.current
        self._runs = runs
        self._sources = sources
        self.replaying: str | None = None       # the run shown in the panes, if a stored one
        window.know_run_documents(self.document_paths)

    def store(self) -> Any:
        return self._store.store()

    def run_ended(self, _request: Any, outcome: Any) -> None:
        """A run ended: the list shows it, selected."""
        self.refresh(select=outcome.run_id)

    def refresh(self, filters: dict | None = None, select: str | None = None) -> None:
        f = filters if filters is not None else self.window.history_pane.filters()
        since = time.time() - f["since_days"] * 86400 if f.get("since_days") else None
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        try:
            runs = self.store().list_runs(search=f.get("search"), status=f.get("status"),
                                          model=f.get("model"), since=since, limit=HISTORY_LIMIT,
                                          evaluations=bool(f.get("evaluations")))
        except (StoreError, OSError) as exc:
            self.notifier.error(f"The run history could not be read: {exc}",
                                "Check the data folder; details are in the log.")
            return
        self.window.history_pane.set_rows([HistoryRow.of_run(r) for r in runs])
        if select:
            self.window.history_pane.select(select)

    def open_run(self, run_id: str) -> int:
        """Replay a stored run in the panes; returns the number of events."""
        if self._runs.running:
            self.notifier.warning("A run is in progress.", "Stop it before replaying another run.")
            return 0
        started = time.perf_counter()
        store = self.store()
        run = store.get_run(run_id) or {}
        events = list(store.iter_events(run_id))
        self.panes.load_replay(events)
        self.window.set_replay_mode(f"Replay of “{run_title(run or {'id': run_id})}” ({run.get('status', '?')})")
        self.replaying = run_id
        log.info("replay of %s (%d events) opened in %.0f ms", run_id, len(events),
                 (time.perf_counter() - started) * 1000)
        return len(events)

    def leave_replay(self, *_args: Any) -> None:
        if self.replaying is not None:
            self.replaying = None
            self.window.set_replay_mode("")
            self.panes.show_live()          # the live (or last) run as it was left, not an empty view

    def export_current(self, *_args) -> str | None:
        """The answer card's Export: the replayed run, or the last run of this session."""
        run_id = self.replaying or self._runs.last_run_id()
        if not run_id:
            self.notifier.info("There is no stored run to export yet.")
            return None
        chosen = ask_export_path(self.window, "Export run", str(Path.home() / self._file_name(run_id, "html")))
        if chosen is None:
            return None
        path, fmt = chosen
        return self.export_run(run_id, fmt, path)

    def export_run(self, run_id: str, fmt: str, path: str | None = None) -> str | None:
        if path is None:
            chosen = ask_export_path(self.window, "Export run", str(Path.home() / self._file_name(run_id, fmt)))
            if chosen is None:
                return None
            path, fmt = chosen
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        try:
            export(self.store(), run_id, fmt, path)
        except (OSError, StoreError) as exc:
            self.notifier.error(f"The export could not be written: {exc}",
                                "Pick another folder or file name.")
            return None
        self.notifier.info(f"Exported to {path}.")
        self.window.offer_open(path, f"Exported to {path}.")
        return path

    def _file_name(self, run_id: str, fmt: str) -> str:
        # lazy: +1 modules in the window (where it runs)
        from core.store.report import export_file_name
        try:
            run = self.store().get_run(run_id) or {"id": run_id}
        except Exception:          # noqa: BLE001 - a name is never worth an error: the id names it too
            log.warning("run %s not read for its export name", run_id, exc_info=True)
            run = {"id": run_id}
        return export_file_name(run, fmt)

    def delete_run(self, run_id: str, confirm: bool = True) -> bool:
        if confirm:
            answer = QMessageBox.question(
                self.window, "Delete run", "Delete this run and its transcript? This cannot be undone.",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No)
            if answer != QMessageBox.StandardButton.Yes:
                return False
        if self.replaying == run_id:
            self.leave_replay()
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        try:
            self.store().delete_run(run_id)
        except StoreError as exc:
            self.notifier.error(f"The run could not be deleted: {exc}")
            return False
        self.refresh()
        self.notifier.info("The run was deleted.")
        return True

    def rerun(self, run_id: str) -> None:
        """Load a stored run's sources, question, models and caps; the user
        may change models or caps, then presses Run."""
        store = self.store()
        run = store.get_run(run_id)
        if not run:
            self.notifier.error("That run is no longer stored.", "Refresh the history list.")
            return
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        try:
            documents = list(store.documents(run_id))
        except StoreError as exc:
            self.notifier.error(f"The documents of that run cannot be restored: {exc}",
                                "Add the files again and run the question.")
            return
        self.leave_replay()
        self._sources.set_documents(documents)
        qp = self.window.question_panel
        qp.set_question(run.get("question") or "")
        config = run.get("config") or {}
        if run.get("imported_utc"):
            # a run file decides nothing about where calls go: its models by the names it
            # showed, routed through the user's own endpoints (app/rerun_config.py)
            from app.rerun_config import model_names  # lazy: only for an imported run
            root, sub = model_names(run)
        else:
            root = self.unroute(run.get("root_model") or qp.root_model(), config.get("api_base"))
            sub = self.unroute(run.get("sub_model") or qp.sub_model(),
                               config.get("sub_api_base") or config.get("api_base"))
        qp.set_models(root, sub)
        qp.set_caps({k: config[k] for k in ("max_depth", "max_cost_usd", "max_iterations")
                     if k in config})
        qp.set_mode(config.get("mode"))
        self._runs.link_next(run_id)
        where = ""
        if run.get("imported_utc"):
            # lazy: only for an imported run
            from app.key_routing import describe_routes
            from app.rerun_config import imported_rerun_config  # lazy: the same
            try:
                where = " Imported run, so your settings decide: " + describe_routes(
                    imported_rerun_config(run, self._settings()), self._settings().endpoints) + "."
            except ValueError as exc:
                where = f" Imported run: {exc}."
        self.notifier.info(f"Loaded the sources ({len(documents)} document{'s' if len(documents) != 1 else ''}) "
                           f"and question of “{run_title(run)}”.{where} Change models or caps if you like, "
                           "then press Run.")

    def document_paths(self, run_id: str) -> list[str] | None:
        """The paths of the documents a stored run was asked over (None: not readable)."""
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        try:
            return [d.path for d in self.store().documents(run_id)]
        except (StoreError, OSError) as exc:
            log.warning("the documents of run %s could not be read: %s", run_id, exc)
            return None

    def unroute(self, model: str, api_base: str | None) -> str:
        """A stored run's litellm model ("openai/x" at some URL) as the name the
        pickers use ("<endpoint>/x"), when one of the endpoints serves that URL."""
        if not api_base or not model.startswith("openai/"):
            return model
        for endpoint in self._settings().endpoints:
            if endpoint.base_url.rstrip("/") == api_base.rstrip("/"):
                return f"{endpoint.name}/{model.removeprefix('openai/')}"
        self.notifier.warning(f"That run used the server {api_base}, which is not among your endpoints.",
                              "Add it in Settings > Endpoints, then pick its models.",
                              action="endpoints", action_label="Open Endpoints")
        return model
