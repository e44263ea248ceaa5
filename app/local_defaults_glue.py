"""Caps proposed when the user picks a local root model (core/local_defaults.py), said in
the question panel's status line. Only a pick from the list (QComboBox.activated) proposes:
restoring the last session's model keeps the caps the user left."""

from __future__ import annotations

from typing import Any

from app.ports import SettingsPort
from core.local_defaults import Proposal, is_local, propose


class LocalDefaultsGlue:
    def __init__(self, window: Any, *, settings: SettingsPort) -> None:
        self.window, self.settings = window, settings.current
        picker = window.question_panel.root_picker
        picker.activated.connect(lambda _index: self.model_picked(window.question_panel.root_model()))

    def model_picked(self, name: str) -> Proposal | None:
        """Propose caps for `name` if it is a local model whose size its name says."""
        # lazy: free in the window (where it runs)
        from app.settings import route_model
        qp = self.window.question_panel
        settings = self.settings()
        routed, api_base = route_model(name, settings.endpoints)
        model_settings = settings.models.get(name) or settings.models.get(routed)
        proposal = propose(name, getattr(model_settings, "context_window", None)) \
            if is_local(routed, api_base) else None
        if proposal is None:
            qp.set_reply_tokens(None)
            return None
        qp.set_caps({"max_depth": proposal.caps["max_depth"], "max_iterations": proposal.caps["max_iterations"]})
        own = getattr(model_settings, "max_tokens", None)        # the model's own setting wins
        qp.set_reply_tokens(None if own else proposal.caps["root_max_tokens"])
        qp.set_status(proposal.sentence() if not own else proposal.sentence().replace(
            f"{proposal.caps['root_max_tokens']:,} output tokens", f"{own:,} output tokens (its setting)"))
        return proposal
