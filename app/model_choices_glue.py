"""The question panel's model pickers: the models of the settings at once, the
catalogue (core.catalog, read off the loop on first open) after, each with its
price hint; read again when endpoints or models are added.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any, Protocol

from app.ports import RunsPort, SettingsPort
from app.run_service import IMPORT_LOCK
from ui.model_picker import ModelChoice
from ui.notifier import Notifier


class ServersPort(Protocol):
    servers: list[Any]                 # the local servers looked for (core.discovery), .kind and .found


def settings_spec(settings: Any, model_id: str) -> Any:
    """A model's spec from the settings alone (core/models.py), for the pickers' hints."""
    # lazy: free in the window (where it runs)
    from app.settings import NoPriceMap, model_spec
    return model_spec(settings, model_id, price_map=NoPriceMap())


class ModelChoicesGlue:
    def __init__(self, panel: Any, notifier: Notifier, *, settings: SettingsPort, runs: RunsPort,
                 servers: ServersPort) -> None:
        self.panel = panel
        self.notifier = notifier
        self._settings = settings
        self._runs = runs
        self._servers = servers
        self.catalog: list[Any] = []
        self.catalog_task: asyncio.Task | None = None

    def choice(self, model_id: str, detail: str = "") -> ModelChoice:
        """A model of the settings: an endpoint's is listed with the local ones, its price hint
        from its spec (a Free endpoint's: "free"; yours: your price), read from the settings."""
        settings = self._settings.current()
        local = model_id.partition("/")[0] in {e.name for e in settings.endpoints}
        try:
            spec = settings_spec(settings, model_id)
        except ValueError:
            return ModelChoice(model_id, "", detail, local=local)
        hint = spec.price_text if spec.price is not None or local else ""
        return ModelChoice(model_id, hint, detail, local=local)

    def known_model_ids(self) -> list[str]:
        s = self._settings.current()
        ids = [s.root_model, s.sub_model, *s.models.keys(),
               *(f"{e.name}/{m}" for e in s.endpoints for m in e.models)]
        return list(dict.fromkeys(i for i in ids if i))

    def show_known(self) -> None:
        """The settings' models in the pickers (before the catalogue is read)."""
        self.panel.set_model_choices([self.choice(m) for m in self.known_model_ids()])

    def want_models(self) -> None:
        if self.catalog_task is None:
            self.catalog_task = asyncio.ensure_future(self.load_catalog())

    async def load_catalog(self) -> None:
        endpoints = self._settings.current().endpoints

        def fetch() -> list[Any]:
            with IMPORT_LOCK:               # may import litellm: off the loop, never beside another import of it
                catalog = importlib.import_module("core.catalog")
                return catalog.list_models(endpoints, fetch_remote=False)
        qp = self.panel
        if not self._runs.running:
            qp.set_status("Loading the model list…")
        try:
            self.catalog = await asyncio.to_thread(fetch)
        except (OSError, ValueError) as exc:
            self.catalog_task = None
            self.notifier.warning(f"The model list could not be loaded: {exc}",
                                  "You can still type a model id.")
            return
        finally:
            if qp.status() == "Loading the model list…":
                qp.set_status("")
        self.fill()

    def models_changed(self) -> None:
        """Endpoints or models were added: the pickers list them (the catalog is read again)."""
        self.catalog_task = None
        self.fill()

    def fill(self) -> None:
        settings = self._settings.current()
        overrides = settings.models
        known = {e.id for e in self.catalog}
        choices = [self.choice(m, detail=m) for m in self.known_model_ids() if m not in known]
        # lazy: +1 modules in the window (where it runs); loaded off the loop with the catalogue first
        from core.catalog import without_idle_servers
        running = [s.kind for s in self._servers.servers if s.found]
        for entry in without_idle_servers(self.catalog, running):    # no idle server's catalogue
            own = overrides.get(entry.id)
            price = (0.0, 0.0) if own is not None and own.free else \
                (own.price.input_per_m, own.price.output_per_m) if own is not None and own.price else None
            if price is None and entry.source in ("endpoint", "remote"):   # an endpoint's: by its spec
                spec = settings_spec(settings, entry.id)
                price = (spec.price.input_per_m, spec.price.output_per_m) if spec.price is not None else None
            choices.append(ModelChoice.of_entry(entry, price))
        self.panel.set_model_choices(choices)

    def shutdown(self) -> None:
        if self.catalog_task is not None and not self.catalog_task.done():
            self.catalog_task.cancel()
