"""The fixes the window offers when a cap blocks a run or limited one, as buttons: beside
a disabled Run (the cost preview's blocker), on the answer card's amber flag, and on a
banner. Each button sends an action id; this glue carries it out in the window's own
terms, never with command-line advice.

    fixes = LimitFixes(question_panel, settings=..., estimate=..., notifier=...)   # ports (app/ports.py)
    fixes.apply("set_cap:0.0226")       # True when the action was known

Actions (core/trust/preview.py and core/limits.py make them):
  set_cap:USD        the question panel's dollar cap to USD (rounded up to the cent)
  set_sub_max_tokens:N  the sub model's reply limit (its max tokens, Settings > Models) to N
  no_cap             no dollar cap for this run
  cost               a limited run: the cap doubled (a cent more at least; $1 when there was none)
  mark_free:MODEL    the model (as the user named it) marked free in the settings
  set_price:MODEL / prices   Settings > Models, to give it a price
  models             Settings > Models (a model's max tokens: replies cut at theirs)
  sub_calls / cell_time      Settings > Caps (the sub-call cap, the time per cell)
  sub_model          the cursor in the sub model picker
"""

from __future__ import annotations

from typing import Any
import math

from app.ports import EstimatePort, SettingsPort


class LimitFixes:
    def __init__(self, question_panel: Any, *, settings: SettingsPort, estimate: EstimatePort,
                 notifier: Any) -> None:
        self.qp = question_panel
        self._settings, self._save, self._open = settings.current, settings.save, settings.open
        self._changed = estimate.update_estimate
        self.notifier = notifier

    def apply(self, action: str) -> bool:
        kind, _, arg = action.partition(":")
        qp = self.qp
        if kind == "set_cap" and arg:
            try:
                usd = float(arg)
            except ValueError:
                return False
            qp.set_caps({"max_cost_usd": _cents_up(usd)})
            qp.set_status(f"Dollar cap set to ${qp.caps()['max_cost_usd']:.2f}.")
            qp.focus_field("cost")
        elif kind == "set_sub_max_tokens" and arg.isdigit():
            self._sub_reply_limit(int(arg))
        elif kind == "no_cap":
            qp.set_caps({"max_cost_usd": None})
            qp.set_status("No dollar cap for the next run.")
            qp.focus_field("cost")
        elif kind == "cost":
            now = qp.caps().get("max_cost_usd") or 0.0
            qp.set_caps({"max_cost_usd": _cents_up(max(now * 2, now + 0.01)) if now else 1.0})
            qp.set_status(f"Dollar cap raised to ${qp.caps()['max_cost_usd']:.2f}: run again to use it.")
            qp.focus_field("cost")
        elif kind == "mark_free" and arg:
            self._mark_free(arg)
        elif kind == "set_price" and arg:
            self._price_row(arg)
        elif kind in ("set_price", "prices", "models"):
            self._open("models")
        elif kind in ("sub_calls", "cell_time"):
            self._open("caps")
        elif kind == "sub_model":
            qp.focus_field("sub_model")
        else:
            return False
        if kind in ("set_cap", "no_cap", "cost"):
            self.notifier.clear("cap")         # the banner's cause is fixed: it goes away
        return True

    def _price_row(self, model: str) -> None:
        """Settings > Models at `model`'s row (added when missing, pre-filled with what its spec
        knows: a price the map gives, its context window), the input price open for typing."""
        # lazy: free in the window (where it runs)
        from app.settings import model_spec
        dialog = self._open("models")
        values: dict = {}
        try:
            spec = model_spec(self._settings(), model)
        except ValueError:
            spec = None
        if spec is not None and spec.price is not None and not spec.price.free:
            values["price"] = [spec.price.input_per_m, spec.price.output_per_m]
        if spec is not None and spec.context_window:
            values["context_window"] = spec.context_window
        page = getattr(dialog, "models_page", None)
        if page is not None:
            page.focus_model(model, values)

    def _sub_reply_limit(self, tokens: int) -> None:
        """The sub model's reply limit (its max tokens in Settings > Models) set to `tokens`."""
        # lazy: free in the window (where it runs)
        from app.settings import ModelSettings
        sub = self.qp.sub_model() or self.qp.root_model()
        entry = self._settings().models.setdefault(sub, ModelSettings())
        entry.max_tokens = tokens
        self._save()
        self._changed()
        self.qp.set_status(f"Replies of {sub} are limited to {tokens:,} tokens (Settings > Models).")

    def _mark_free(self, model: str) -> None:
        # lazy: free in the window (where it runs)
        from app.settings import ModelSettings
        settings = self._settings()
        entry = settings.models.get(model)
        if entry is None:
            settings.models[model] = ModelSettings(free=True)
        else:
            entry.free, entry.price = True, None
        self._save()
        self._changed()
        self.notifier.info(f"{model} is marked free (Settings > Models can change it).")


def _cents_up(usd: float) -> float:
    """The cap box shows cents: round up so the value still covers `usd`."""
    return math.ceil(round(usd * 100, 6)) / 100


def one_stop(text: str) -> str:
    """`text` as one sentence that ends once ("... $0.0127." never "... $0.0127..")."""
    text = text.strip()
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def cap_advice(cap_hit: str | None, error: str | None) -> str:
    """What can take a capped run further; more turns never help a call that cannot fit."""
    if cap_hit == "cost" or (error and "dollar cap" in error):
        if error and "To fix it, set" in error:
            return "Set what the message names, then run again."
        return "Raise the dollar cap in the question panel to let the run go further."
    if cap_hit == "iterations":
        return "Raise the iterations in the question panel to go further."
    if cap_hit == "wall_time":
        return "Raise the time limit to let the run go further."
    return "Raise the cap that stopped it to go further."
