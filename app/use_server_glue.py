"""Welcome's "Use this": a detected local server's endpoint added (named, Free) and its
models picked as root and sub, said with an Undo; a cloud model whose key is there
picked as both, with a $1 cap when there is none.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from app.ports import SettingsPort


def cost_words(endpoint: Any) -> str:
    """"Free" or "Paid" as the endpoint's form says it (core/endpoint_cost.py)."""
    # lazy: free in the window (where it runs)
    from core.endpoint_cost import endpoint_free
    return "Free" if endpoint_free(endpoint) else "Paid"



class UseServerGlue(QObject):
    models_changed = Signal()          # an endpoint or models were added or taken back

    def __init__(self, window: Any, notifier: Any, view: Any, *, settings: SettingsPort) -> None:
        super().__init__(window)
        self.window = window
        self.notifier = notifier
        self.view = view                   # ui/welcome_view.py WelcomeView
        self._settings, self._save = settings.current, settings.save
        self._undo_use: dict | None = None       # what "Use this" changed, for its Undo

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
            added = f"Uses your endpoint “{endpoint.name}” as it is ({cost_words(endpoint)}). "
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
        self.models_changed.emit()
        qp.set_models(model_id, sub_id)
        self._undo_use = undo
        where = (f"{server.label}, free, nothing leaves this computer" if cost_words(endpoint) == "Free"
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
        self.models_changed.emit()
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
