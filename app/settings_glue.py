"""The settings dialog's glue: opening it, saving what it returns, and its Keys
page (set, test, delete in the OS keychain through core.secrets.KeyStore).

Part of app/controller.py's job, kept apart so each module stays small. Keys
go from the dialog's field straight to the keychain: never into the settings,
the log or the status bar (only masked forms are shown).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.ports import EnginePort
from core import providers
from ui.settings_dialog import SettingsDialog
from core.llm.errors import LLMError
from core.routing import route
from core.discovery import check_endpoint

log = logging.getLogger(__name__)

KEYCHAIN_ADVICE = (". On Linux, install and unlock gnome-keyring or KWallet, or set the provider's "
                   "environment variable (e.g. OPENAI_API_KEY) before starting RLM Studio.")


class SettingsGlue(QObject):
    """The settings in force and the dialog that changes them: the SettingsPort
    (app/ports.py) every other glue reads them through. Narrow dependencies: the window
    (the dialog's parent), the notifier, and the engine's loop (a key test awaits there)."""

    applied = Signal(object)           # the settings before; `current()` holds the new ones

    def __init__(self, window: Any, notifier: Any, *, settings: Any, engine: EnginePort) -> None:
        super().__init__(window)
        self.window = window
        self.notifier = notifier
        self._current = settings
        self._on_engine = engine.run
        self.dialog: Any = None
        self._keys: Any = None
        self._check_task: "asyncio.Task | None" = None

    @property
    def settings(self) -> Any:
        return self._current

    def current(self) -> Any:
        return self._current

    def save(self) -> None:
        # lazy: free in the window (where it runs)
        from app.settings import save_settings
        try:
            save_settings(self._current)
        except OSError as exc:
            self.notifier.error("Your settings could not be saved.", f"{exc}")

    def default_caps(self) -> dict:
        caps = self._current.caps
        return {k: caps[k] for k in ("max_depth", "max_cost_usd", "max_iterations") if k in caps}

    def keys(self) -> Any:
        """The keychain (created on first use: keyring's import is not free)."""
        if self._keys is None:
            # lazy: +2 modules in the window (where it runs)
            from core.secrets import KeyStore
            self._keys = KeyStore()
        return self._keys

    def use_keys(self, store: Any) -> None:
        """Use another KeyStore (tests: a file-backed or a failing backend)."""
        self._keys = store

    # --- the dialog ---------------------------------------------------------------
    def open(self, page: str = "") -> Any:
        """Open the settings dialog (window-modal, not blocking) at `page`; returns it."""
        if self.dialog is not None:
            self.dialog.show_page(page)
            self.dialog.raise_()
            return self.dialog
        # lazy: free in the window (where it runs)
        from app.settings import settings_to_dict
        names = [(p.name, p.display) for p in providers.PROVIDERS.values() if p.needs_key]
        names += [(e.name, f"{e.name} (endpoint)") for e in self.settings.endpoints if e.needs_key]
        dialog = SettingsDialog(settings_to_dict(self.settings), names, self.window, ocr=ocr_info())
        dialog.keys_page.key_set.connect(self.set_key)
        dialog.keys_page.key_session.connect(self.set_session_key)
        dialog.keys_page.key_delete.connect(self.delete_key)
        dialog.keys_page.key_test.connect(lambda p: asyncio.ensure_future(self.test_key(p)))
        ep = dialog.endpoints_page
        ep.test_requested.connect(lambda url, key: self.check_endpoint(url, key, fetch=False))
        ep.fetch_requested.connect(lambda url, key: self.check_endpoint(url, key, fetch=True))
        dialog.accepted.connect(lambda: self._accepted(dialog))
        dialog.finished.connect(self._closed)
        self.dialog = dialog
        self.refresh_keys()
        dialog.show_page(page)
        dialog.open()
        return dialog

    def _accepted(self, dialog: Any) -> None:
        self.apply_values(dialog.values())
        # lazy: +2 modules in the window (where it runs)
        from core.secrets import KeychainUnavailable
        for name, key in dialog.endpoints_page.typed_keys().items():   # typed in an endpoint's form
            try:
                self.keys().set(name, key)
            except (KeychainUnavailable, ValueError) as exc:
                self.notifier.warning(f"The key of the endpoint {name} was not saved: {exc}",
                                      "Open Settings > Keys to use it for this session instead.",
                                      action="keys", action_label="Open Keys")

    def check_endpoint(self, url: str, key: str, *, fetch: bool) -> "asyncio.Task":
        """Test connection / Fetch models: GET {url}/models in the background (the key typed
        in the form, else the one stored for the endpoint of that URL); the answer goes to
        the Endpoints page. Closing the dialog cancels it."""
        if not key:
            owner = next((e.name for e in self.settings.endpoints
                          if e.base_url.rstrip("/") == url.rstrip("/") and e.needs_key), "")
            key = (self.keys().resolve(owner)[0] or "") if owner else ""

        async def ask() -> Any:
            check = await check_endpoint(url, key)
            log.info("endpoint check %s: %s", url, check.summary())
            if self.dialog is not None:
                self.dialog.endpoints_page.show_check(check, fetch)
            return check
        if self._check_task is not None:
            self._check_task.cancel()
        self._check_task = asyncio.ensure_future(ask())
        return self._check_task

    def _closed(self, _result: int) -> None:
        if self._check_task is not None:
            self._check_task.cancel()
            self._check_task = None
        if self.dialog is not None:
            self.dialog.deleteLater()
        self.dialog = None

    def apply_values(self, values: dict) -> None:
        """Take the dialog's values (settings file form); keep the rest as it was."""
        # lazy: free in the window (where it runs)
        from app.settings import settings_from_dict, settings_to_dict
        settings = settings_from_dict({**settings_to_dict(self.settings), **values})
        if settings.warnings:
            self.notifier.warning(
                "Some settings were not taken: " + "; ".join(settings.warnings),
                "Open Settings and fix them.", action="settings", action_label="Open Settings")
        self.take(settings)

    def take(self, settings: Any = None) -> None:
        """New settings in force (None: the current ones, changed in place), saved; `applied` says so."""
        before, self._current = self._current, settings if settings is not None else self._current
        self.save()
        self.applied.emit(before)

    # --- keys -------------------------------------------------------------------
    def refresh_keys(self) -> None:
        if self.dialog is None:
            return
        store = self.keys()
        page = self.dialog.keys_page
        page.set_keychain(store.usable, store.backend_name if store.usable
                          else store.problem + KEYCHAIN_ADVICE)
        extra = [e.name for e in self.settings.endpoints]
        found = {k.provider: k for k in store.list(extra)}
        rows = []
        for i in range(page.provider_combo.count()):
            name, display = page.provider_combo.itemData(i), page.provider_combo.itemText(i)
            info = found.get(name)
            rows.append((name, display, info.masked if info else "", info.source if info else ""))
        page.set_rows(rows)

    def _page(self) -> Any:
        return self.dialog.keys_page if self.dialog is not None else None

    def set_key(self, provider: str, key: str) -> bool:
        # lazy: +2 modules in the window (where it runs)
        from core.secrets import KeychainUnavailable
        page = self._page()
        try:
            self.keys().set(provider, key)
        except (KeychainUnavailable, ValueError) as exc:
            if page:
                page.show_result(False, str(exc))
            return False
        if page:
            page.key_saved()
            page.show_result(True, f"The {provider} key is in the keychain.")
        self.refresh_keys()
        return True

    def set_session_key(self, provider: str, key: str) -> bool:
        page = self._page()
        try:
            self.keys().set_for_session(provider, key)
        except ValueError as exc:
            if page:
                page.show_result(False, str(exc))
            return False
        if page:
            page.key_saved()
            page.show_result(True, f"The {provider} key is used until RLM Studio closes; it is "
                                   "written nowhere.")
        self.refresh_keys()
        return True

    def delete_key(self, provider: str) -> bool:
        deleted = self.keys().delete(provider)
        page = self._page()
        if page:
            page.show_result(deleted, f"The {provider} key was deleted." if deleted
                             else f"The keychain had no {provider} key.")
        self.refresh_keys()
        return deleted

    async def test_key(self, provider: str) -> tuple[bool, str]:
        """One tiny request with the provider's key; the answer shows on the Keys page."""
        page = self._page()
        pasted = page.pasted_key() if page is not None else ""     # the key just pasted comes first
        known = providers.get(provider)
        key = None
        if known is not None and known.test_model:
            # the provider's own test model at its own URL: core/routing.py gives the key
            found = route(known.test_model, keys=self.keys())
            key = (pasted or found.key) if found.key_owner == provider else None
        else:
            key = pasted or self.keys().resolve(provider)[0]
        if not key:
            ok, text = False, f"No {provider} key is set: paste one above, then press Test."
        elif known is None or not known.test_model:
            ok, text = False, "There is no test model for this provider; run a small question instead."
        else:
            if page:
                page.show_result(True, f"Testing with {known.test_model}…")
            ok, text = await try_key(known.test_model, key, on_engine=self._on_engine,
                                     api_base=found.api_base)
        page = self._page()          # the dialog may have closed meanwhile
        if page:
            page.show_result(ok, text)
        return ok, text


async def try_key(model: str, key: str, on_engine: Any = None, api_base: str | None = None) -> tuple[bool, str]:
    """(works, message): a one-token completion with `key`, sent through the transport
    contract (core/llm/transport.py) on the route a run's call to `model` takes; a failure
    is the contract's LLMError, whose message is the one a run would show. In the window
    it runs on the engine's loop (`on_engine`), where the routes' clients live."""
    async def call() -> None:
        # lazy: +7 modules in the window (where it runs)
        from core.llm.client import transport_for
        # lazy: +1 modules in the window (where it runs)
        from core.llm.transport import Request
        transport = transport_for(model, api_base)
        await transport.prepare()              # litellm's route imports it off the loop
        await transport.send(Request(model=model, messages=[{"role": "user", "content": "Say OK"}],
                                     max_tokens=1, stream=False, api_base=api_base, api_key=key,
                                     timeout_s=30.0), lambda piece: None)
    try:
        await (on_engine(call()) if on_engine is not None else call())
    except LLMError as exc:             # whatever the provider answers with is the result of the test
        log.info("key test with %s failed: %s", model, exc.kind)
        return False, str(exc)
    return True, f"The key works ({model} answered)."


def ocr_info() -> Any:
    """What Settings > Documents says about tesseract on this computer."""
    # lazy: the OCR helpers only when Settings opens (core.ingest is not loaded at start-up)
    from core.ingest.formats import ocr
    from ui.documents_page import OcrInfo      # lazy: beside the settings dialog, which has it loaded
    path = ocr.find_tesseract() or ""
    return OcrInfo(path, ocr.languages(path) if path else (), ocr.INSTALL_HINT)
