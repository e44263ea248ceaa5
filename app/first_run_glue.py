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
from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolButton

from core.identity import env
from ui import confirm, icons
from ui.recent_menu import RecentMenu
from ui.welcome_view import WelcomeView
from core import providers
from ui.guide import GuideDialog

log = logging.getLogger(__name__)

PORTS_ENV = "RLMSTUDIO_DESKTOP_DISCOVERY_PORTS"


def _cost_words(endpoint: Any) -> str:
    """"Free" or "Paid" as the endpoint's form says it (core/endpoint_cost.py)."""
    # lazy: +3 modules (first use only)
    from core.endpoint_cost import endpoint_free
    return "Free" if endpoint_free(endpoint) else "Paid"


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


class FirstRunGlue:
    """Narrow dependencies: the window, the notifier, and what it asks of the rest as
    callables: the settings and saving them, the keychain, leaving a replay, the sources
    (add, clear, any there?), whether a run is in progress, the last run's id, opening
    Settings at a page, the default caps, and telling the model pickers that models changed."""

    def __init__(self, window: Any, notifier: Any, *, settings: Callable[[], Any],
                 save_settings: Callable[[], None], keys: Callable[[], Any], leave_replay: Callable[[], None],
                 add_paths: Callable[[list], None], clear_sources: Callable[[], None],
                 has_documents: Callable[[], bool], is_running: Callable[[], bool],
                 last_run_id: Callable[[], str | None], open_settings: Callable[[str], Any],
                 default_caps: Callable[[], dict], models_changed: Callable[[], None],
                 guide_numbers: Callable[[], Any] = lambda: "",
                 store_documents: Callable[[str], Any] = lambda _run_id: [],
                 set_documents: Callable[[list], None] = lambda _docs: None) -> None:
        self.window = window
        self.notifier = notifier
        self._settings, self._save = settings, save_settings
        self._keys, self._leave_replay = keys, leave_replay
        self._add_paths, self._clear_sources, self._has_documents = add_paths, clear_sources, has_documents
        self._is_running, self._last_run_id = is_running, last_run_id
        self._default_caps, self._models_changed = default_caps, models_changed
        self._guide_numbers = guide_numbers
        self._store_documents, self._set_documents = store_documents, set_documents
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
        self.view.use_server.connect(self.use_server_and_say)
        self.view.undo_requested.connect(self.undo_use_server)
        self._undo_use: dict | None = None       # what "Use this" changed, for its Undo
        self.view.use_model.connect(self.use_model)
        self.view.try_samples.connect(self.load_samples)
        self.view.rescan_requested.connect(self.refresh)
        self.view.keys_requested.connect(lambda: open_settings("keys"))
        self.view.endpoints_requested.connect(lambda: open_settings("endpoints"))
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

        if not settings().ui.get("welcome_seen"):
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
            self.undo_use_server()
        elif action == "look_again":            # a stopped local server: look for servers again
            self.show_welcome()
            self.refresh()

    @property
    def welcome_visible(self) -> bool:
        return self.view.isVisibleTo(self.window)

    def show_welcome(self) -> None:
        self._leave_replay()
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

    # --- "Use this" ----------------------------------------------------------------
    def use_server_and_say(self, server: Any, model: str) -> str:
        """Welcome's Use this: use_server, then say on the Welcome page what it added to the
        settings and what it picked, with an Undo beside it."""
        model_id = self.use_server(server, model)
        qp = self.window.question_panel
        root, sub = qp.root_model(), qp.sub_model()
        picked = f"Root model: {root}" + (f", sub model: {sub}." if sub != root else " (also the sub model).")
        said = (self._undo_use or {}).get("said", "")
        self.view.set_selected(f"{said}{picked}", undo=True)
        return model_id

    def use_server(self, server: Any, model: str) -> str:
        """Use a detected server: its endpoint is added, named and Free, and said with an
        Undo; root and sub are picked from its models. An endpoint already at that URL is
        used as it stands: its Free or Paid and its prices are never changed, nor are the
        models another endpoint's names resolve to. Returns the root's model id."""
        # lazy: free in the window (where it runs)
        from app.settings import Endpoint
        s = self._settings()
        base = server.base_url.rstrip("/")
        endpoint = next((e for e in s.endpoints if e.base_url.rstrip("/") == base), None)
        undo = {"root_model": s.root_model, "added": None, "models_of": None, "models": None}
        if endpoint is None:
            name, n = server.endpoint_name, 2
            while s.endpoint(name) is not None:
                name, n = f"{server.endpoint_name}-{n}", n + 1
            endpoint = Endpoint(name, base, list(dict.fromkeys(server.models)), needs_key=False,
                                runs_here=True)    # said, not left to its address
            s.endpoints.append(endpoint)
            undo["added"] = name
            added = (f"Added the endpoint “{name}” ({base}) to Settings > Endpoints, with its "
                     f"{len(endpoint.models)} model{'s' if len(endpoint.models) != 1 else ''} marked free. ")
        else:
            undo["models_of"], undo["models"] = endpoint.name, list(endpoint.models)
            endpoint.models = list(dict.fromkeys([*endpoint.models, *server.models]))
            added = f"Uses your endpoint “{endpoint.name}” as it is ({_cost_words(endpoint)}). "
        undo["said"] = added
        # lazy: free in the window (where it runs)
        from core.discovery import root_and_sub
        root, sub = root_and_sub(list(server.models), model)      # a strong root, a small sub
        model_id, sub_id = f"{endpoint.name}/{root}", f"{endpoint.name}/{sub}"
        qp = self.window.question_panel
        undo["picked"] = (qp.root_model(), qp.sub_model())
        if not s.root_model:
            s.root_model = model_id
        self._save()
        self._models_changed()
        qp.set_models(model_id, sub_id)
        self._undo_use = undo
        where = (f"{server.label}, free, nothing leaves this computer" if _cost_words(endpoint) == "Free"
                 else f"{server.label}, at {endpoint.name}'s prices")
        if sub_id != model_id:
            text = (f"{added}Selected {model_id} as root (it writes the code) and {sub_id} as sub model "
                    f"(it reads the pieces): {where}.")
        else:
            text = (f"{added}Selected {model_id} as root and sub model: {where}. A small model as "
                    "root often writes broken code: a larger one (7B or more) does better.")
        self.view.set_selected(text)
        self.notifier.info(text, action="undo_use_server", action_label="Undo", topic="use_server")
        return model_id

    def undo_use_server(self) -> None:
        """Take back the last Use this: the endpoint it added is removed (or the models it added
        to yours), and the models picked before come back."""
        undo = self._undo_use
        if not undo:
            return
        self._undo_use = None
        s = self._settings()
        if undo["added"]:
            s.endpoints = [e for e in s.endpoints if e.name != undo["added"]]
            said = f"Removed the endpoint {undo['added']}."
        else:
            endpoint = s.endpoint(undo["models_of"])
            if endpoint is not None:
                endpoint.models = undo["models"]
            said = f"{undo['models_of']} has its models as before."
        s.root_model = undo["root_model"]
        self._save()
        self._models_changed()
        if undo.get("picked"):
            self.window.question_panel.set_models(*undo["picked"])
        self.view.set_selected(f"Undone: {said} The models picked before are back.")
        self.notifier.clear("use_server")
        self.notifier.info(f"Undone: {said}")

    def use_model(self, model_id: str) -> None:
        """A cloud model whose key is there: root and sub; a $1 cap when there is none."""
        s = self._settings()
        if not s.root_model:
            s.root_model = model_id
            self._save()
        qp = self.window.question_panel
        qp.set_models(model_id, model_id)
        capped = ""
        if not qp.caps().get("max_cost_usd"):
            qp.set_caps({"max_cost_usd": 1.0})
            capped = " The dollar cap is set to $1.00; change it beside Run."
        text = f"Selected {model_id} as root and sub model.{capped}"
        self.view.set_selected(text)
        self.notifier.info(text)

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
        if self._is_running():
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
        if self._is_running():
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
            documents = list(self._store_documents(run_id))
        except StoreError as exc:
            log.warning("the sources of run %s could not be restored: %s", run_id, exc)
            return []
        self._set_documents(documents)
        self.sources_run = run_id
        return [run_id] if documents else []

    def session_state(self) -> dict:
        """What `reopen_last_session` needs at the next start (kept in settings.ui)."""
        return {"roots": list(self.roots), "question": self.window.question_panel.question(),
                "run_id": self._last_run_id(),
                "sources_run": getattr(self, "sources_run", None) if self._has_documents() else None}

    def reopen_last_session(self) -> bool:
        """Sources and question of the last session, as they were when the app closed."""
        state = self._settings().ui.get("last_session") or {}
        if not isinstance(state, dict) or self._has_documents():
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
