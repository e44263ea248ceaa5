"""The first minute: the welcome view (keys, local model servers, samples),
the guide, the Recent menu, and re-opening the last session on start.

Part of app/controller.py's job, kept apart so each module stays small.
Discovery asks only 127.0.0.1 (core/discovery.py); nothing is sent anywhere
else until the user presses Run. Extra ports to probe come from the settings
(`ui.discovery_ports`) or RLMSTUDIO_DESKTOP_DISCOVERY_PORTS ("5001,5002"; the old RLM_STUDIO_ name is still read).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolButton

from app.use_server_glue import UseServerGlue
from app.ports import GuidePort, ReplayPort, RunsPort, SettingsPort, SourcesPort
from core.identity import env
from ui import confirm, icons
from ui.recent_menu import RecentMenu
from ui.welcome_view import WelcomeView
from core import providers
from ui.guide import GuideDialog

log = logging.getLogger(__name__)

PORTS_ENV = "RLMSTUDIO_DESKTOP_DISCOVERY_PORTS"


def extra_ports(settings: Any) -> list[int]:
    """Ports to probe besides the usual ones: settings, then the environment."""
    raw: list[Any] = list(settings.ui.get("discovery_ports") or [])
    raw += [p for p in (env("DISCOVERY_PORTS") or "").replace(";", ",").split(",") if p.strip()]
    ports = []
    for value in raw:
        try:
            ports.append(int(value))
        except (TypeError, ValueError):
            log.warning("discovery port %r ignored (not a number)", value)
    return list(dict.fromkeys(ports))


def _state(check: Any) -> str:
    """An endpoint check in a few words ("answers: 4 models", or why not)."""
    if check.ok:
        count = len(check.models)
        return f"answers: {count} model{'s' if count != 1 else ''}"
    return check.error[0].lower() + check.error[1:] if check.error else "not reached"


class FirstRunGlue(QObject):
    """Narrow dependencies: the window, the notifier, and ports (app/ports.py): the settings
    (saved, the keychain, the dialog, the default caps), History (leave a replay, a stored
    run's documents), Sources (add, clear, replace), the window's runs (one in progress, the
    last one) and the guide's own numbers (app/models_glue.py)."""

    models_changed = Signal()          # endpoints or models were added: the pickers list them again

    def __init__(self, window: Any, notifier: Any, *, settings: SettingsPort, history: ReplayPort,
                 sources: SourcesPort, runs: RunsPort, guide: GuidePort) -> None:
        super().__init__(window)
        self.window = window
        self.notifier = notifier
        self._settings, self._save = settings.current, settings.save
        self._keys, self._default_caps = settings.keys, settings.default_caps
        self._history, self._sources, self._runs = history, sources, runs
        self._add_paths, self._clear_sources = sources.add_paths, sources.clear_sources
        self._guide_numbers = guide.guide_numbers
        w = window
        self.servers: list[Any] = []
        self.discovery_task: asyncio.Task | None = None
        self.keys_task: asyncio.Task | None = None
        self.guide: Any = None
        self.roots: list[str] = []           # what was added this session (for "re-open")
        self.started = False
        self.sources_run: str | None = None  # the sources came from this stored run (a re-run)

        self.view = WelcomeView()
        self.view.hide()
        w.add_center_view(self.view)
        self.use = UseServerGlue(window, notifier, self.view, settings=settings)
        self.use.models_changed.connect(self.models_changed)
        self.view.use_server.connect(self.use.use_server_and_say)
        self.view.undo_requested.connect(self.use.undo_use_server)
        self.view.use_model.connect(self.use.use_model)
        self.view.try_samples.connect(self.load_samples)
        self.view.rescan_requested.connect(self.refresh)
        self.view.keys_requested.connect(lambda: settings.open("keys"))
        self.view.endpoints_requested.connect(lambda: settings.open("endpoints"))
        self.view.guide_requested.connect(self.open_guide)
        self.view.close_requested.connect(self.hide_welcome)
        self._fill_samples()
        self._build_actions()
        notifier.action_requested.connect(self._on_notice_action)

        qp, hp, sp = w.question_panel, w.history_pane, w.sources_pane
        qp.run_requested.connect(self._after_run_request)       # after the controller's slot
        hp.open_requested.connect(lambda _id: self.hide_welcome())
        hp.rerun_requested.connect(self._after_rerun)
        sp.paths_added.connect(self._remember_roots)
        sp.clear_requested.connect(self.roots.clear)

        if not settings.current().ui.get("welcome_seen"):
            self.show_welcome()

    # --- toolbar: Welcome, Guide, Recent ----------------------------------------
    def _build_actions(self) -> None:
        w = self.window
        self.welcome_action = QAction("Welcome", w)
        self.welcome_action.setToolTip("What is ready, local model servers and the samples")
        icons.bind(self.welcome_action, "info")
        self.welcome_action.triggered.connect(self.show_welcome)
        self.guide_action = QAction("Guide", w)
        self.guide_action.setToolTip("Caps and choosing models, in plain words (F1)")
        self.guide_action.setShortcut("F1")
        self.guide_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        icons.bind(self.guide_action, "file")
        self.guide_action.triggered.connect(self.open_guide)
        self.recent_menu = RecentMenu(w)
        self.recent_menu.aboutToShow.connect(self.refresh_recent)
        self.recent_menu.folder_chosen.connect(self.open_recent_folder)
        self.recent_menu.question_chosen.connect(w.question_panel.set_question)
        self.recent_action = QAction("Recent", w)
        self.recent_action.setToolTip("Folders and questions used before")
        icons.bind(self.recent_action, "history")
        self.recent_action.setMenu(self.recent_menu)
        w.addAction(self.guide_action)
        w.add_toolbar_actions([self.recent_action, self.welcome_action, self.guide_action])
        w.add_menu_action("help", self.guide_action)
        button = w.toolbar.widgetForAction(self.recent_action)
        if isinstance(button, QToolButton):
            button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
            button.setAccessibleName("Recent folders and questions")
        self.refresh_recent()

    def refresh_recent(self) -> None:
        s = self._settings()
        self.recent_menu.set_items(list(s.recent_folders), list(s.recent_questions))

    def open_recent_folder(self, path: str) -> None:
        if not os.path.exists(path):
            self.notifier.warning(f"{path} is not there any more.", "It may have been moved or deleted.")
            return
        self.add_paths([path])

    # --- the welcome view ----------------------------------------------------------
    def _on_notice_action(self, action: str) -> None:
        if action == "undo_use_server":
            self.use.undo_use_server()
        elif action == "look_again":            # a stopped local server: look for servers again
            self.show_welcome()
            self.refresh()

    @property
    def welcome_visible(self) -> bool:
        return self.view.isVisibleTo(self.window)

    def show_welcome(self) -> None:
        self._history.leave_replay()
        self.view.show()
        self.window.run_panes.hide()
        if self.started:
            self.refresh()

    def hide_welcome(self) -> None:
        if not self.view.isHidden():
            self.view.hide()
            self.window.run_panes.show()
        self._settings().ui["welcome_seen"] = True

    def start(self) -> None:
        """After the first paint: re-open the last session, check what is ready."""
        self.started = True
        self.reopen_last_session()
        if not self.view.isHidden():
            self.refresh()

    def refresh(self) -> None:
        """Check the keychain and look for local servers (both off the loop's critical path)."""
        if self.keys_task is None or self.keys_task.done():
            self.keys_task = asyncio.ensure_future(self.check_keys())
        if self.discovery_task is None or self.discovery_task.done():
            self.discovery_task = asyncio.ensure_future(self.discover())

    async def check_keys(self) -> list[Any]:
        keys = self._keys()
        # lazy: free in the window (where it runs)
        from core import identity_migration
        if not identity_migration.keys_done():       # keys under the old, shared name move once
            await asyncio.to_thread(identity_migration.migrate_keys, keys)
            for note in identity_migration.take_notes():
                self.notifier.info(note)
        extra = [e.name for e in self._settings().endpoints]
        found = await asyncio.to_thread(keys.list, extra)
        cheap = [p.test_model for k in found if (p := providers.get(k.provider)) and p.test_model]
        self.view.set_keys([(k.provider, k.source) for k in found],
                           "" if keys.usable else keys.problem, cheap[0] if cheap else "")
        return found

    async def discover(self) -> list[Any]:
        self.view.set_scanning()
        discovery = await asyncio.to_thread(importlib.import_module, "core.discovery")
        await asyncio.to_thread(importlib.import_module, "httpx")
        endpoints = list(self._settings().endpoints)
        self.view.set_endpoints([(e.name, e.base_url, "checking…", True) for e in endpoints])
        found, checks = await asyncio.gather(discovery.discover(extra_ports(self._settings())),
                                             self._check_endpoints(discovery, endpoints))
        self.servers = found
        log.info("local model servers: %s", discovery.summary(self.servers))
        self.view.set_endpoints([(e.name, e.base_url, _state(check), check.ok)
                                 for e, check in zip(endpoints, checks)])
        self.view.set_servers(self.servers)
        return self.servers

    async def _check_endpoints(self, discovery: Any, endpoints: list[Any]) -> list[Any]:
        """GET {url}/models of each endpoint of the settings, with its key when it needs one."""
        async def one(endpoint: Any) -> Any:
            key = ""
            if endpoint.needs_key:
                key = (await asyncio.to_thread(lambda: self._keys().resolve(endpoint.name)[0])) or ""
            return await discovery.check_endpoint(endpoint.base_url, key, timeout_s=3.0)
        return list(await asyncio.gather(*(one(e) for e in endpoints)))

    async def close(self) -> None:
        """The window closes: stop looking, and let the probes end their connections."""
        tasks = [t for t in (self.discovery_task, self.keys_task) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # --- samples -----------------------------------------------------------------
    def _fill_samples(self) -> None:
        # lazy: free in the window (where it runs)
        from core.samples import SamplesMissing, sample_set
        try:
            self.samples = sample_set()
        except SamplesMissing as exc:
            self.samples = None
            log.warning("%s", exc)
            self.view.set_samples_missing(str(exc))
            return
        self.view.set_samples(self.samples.description, self.samples.questions)

    def load_samples(self, question: str = "") -> None:
        """Load the sample documents and fill in the question; the user's own sources are
        kept beside them or replaced only when the user says so."""
        if self.samples is None:
            self.notifier.error("The sample documents are missing from this installation.")
            return
        if self._runs.running:
            self.notifier.warning("A run is in progress.", "Stop it before loading the samples.")
            return
        listed = self.window.sources_pane.rows()
        choice = "replace"
        if listed:
            n = len(listed)
            choice = confirm.ask(
                self.window, "Your sources are listed: add the samples beside them?",
                f"{n} source{'s are' if n != 1 else ' is'} listed. The samples can join them (the next "
                "question is asked over both) or replace them (your files stay where they are).",
                [("add", "Add beside them"), ("replace", "Replace them"), ("cancel", "Cancel")])
            if choice == "cancel":
                return
        if choice == "replace":
            self._clear_sources()
            self.roots.clear()
        self.add_paths([str(self.samples.folder)])
        self.window.question_panel.set_question(question or self.samples.questions[0])
        self.hide_welcome()
        qp = self.window.question_panel
        if not qp.root_model():
            self.notifier.info("The samples are loading. Pick a root model (or use a local server "
                                 "on the Welcome page), then press Run.")

    def add_paths(self, paths: list[str]) -> None:
        self._remember_roots(paths)
        self._add_paths(paths)

    def _remember_roots(self, paths: list[str]) -> None:
        self.sources_run = None
        for p in paths:
            if str(p) not in self.roots:
                self.roots.append(str(p))

    def _after_run_request(self) -> None:
        if self._runs.running:
            self.hide_welcome()

    def _after_rerun(self, run_id: str) -> None:
        self.roots.clear()            # the documents now come from the store
        self.sources_run = run_id     # ... and a restart takes them from there again
        self.hide_welcome()

    # --- the guide -----------------------------------------------------------------
    def open_guide(self) -> Any:
        if self.guide is None:
            self.guide = GuideDialog({**self._default_caps(), "your_numbers": self._guide_numbers()}, self.window)
            self.guide.finished.connect(self._guide_closed)
        self.guide.show()
        self.guide.raise_()
        return self.guide

    def _guide_closed(self, _result: int) -> None:
        if self.guide is not None:
            self.guide.deleteLater()
        self.guide = None

    # --- the last session ------------------------------------------------------------
    def _documents_of(self, run_id: str) -> list[str]:
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        try:
            documents = list(self._history.store().documents(run_id))
        except StoreError as exc:
            log.warning("the sources of run %s could not be restored: %s", run_id, exc)
            return []
        self._sources.set_documents(documents)
        self.sources_run = run_id
        return [run_id] if documents else []

    def session_state(self) -> dict:
        """What `reopen_last_session` needs at the next start (kept in settings.ui)."""
        return {"roots": list(self.roots), "question": self.window.question_panel.question(),
                "run_id": self._runs.last_run_id(),
                "sources_run": self.sources_run if bool(self._sources.documents) else None}

    def reopen_last_session(self) -> bool:
        """Sources and question of the last session, as they were when the app closed."""
        state = self._settings().ui.get("last_session") or {}
        if not isinstance(state, dict) or bool(self._sources.documents):
            return False
        roots = [str(p) for p in state.get("roots") or [] if isinstance(p, str)]
        present = [p for p in roots if os.path.exists(p)]
        question = str(state.get("question") or "")
        if question:
            self.window.question_panel.set_question(question)
        if present:
            self.add_paths(present)
        elif state.get("sources_run"):       # the sources of a re-run: from the store
            present = self._documents_of(str(state["sources_run"]))
        if not (present or question):
            return False
        gone = len(roots) - len(present)
        self.notifier.info(
            f"Re-opened your last session: {len(present)} source folder{'s' if len(present) != 1 else ''}"
            + (f" ({gone} not found any more)" if gone else "") + (" and the question." if question else "."))
        return True
