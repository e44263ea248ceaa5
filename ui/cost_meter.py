"""CostMeter: the always-visible strip with what a run costs and how far it is.

Dollars spent against the cap as a bar (normal; amber from 80 %; red at the
cap), tokens in/out, calls in flight, elapsed time, iteration k of max, cells
and the syntax-error rate. `refresh(view, now)` reads a RunView; the level is
also a dynamic property `level` ("normal" | "warning" | "error") for style sheets.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QSizePolicy, QVBoxLayout, QWidget

from core.runview import RunView
from ui.highlight import is_dark
from ui.rows import counted, human_count
from ui.spend_chart import SpendChart
from ui.theme import PALETTES

WARN_FRACTION = 0.8
LEVELS = ("normal", "warning", "error")


def level_for(fraction: float | None) -> str:
    """'normal', 'warning' (from 80 % of the cap) or 'error' (at the cap)."""
    if fraction is None or fraction < WARN_FRACTION:
        return "normal"
    return "warning" if fraction < 1.0 else "error"


def money(usd: float) -> str:
    return f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


def cost_text(usd: float, unpriced: tuple | list = ()) -> str:
    """What a run cost, honestly: "cost unknown" when nothing priced was spent and a model
    has no price, "$0.0123 + unknown" when part of it is unknown, else the amount."""
    if not unpriced:
        return money(usd)
    return f"{money(usd)} + unknown" if usd > 0 else "cost unknown"


def in_flight_in_tree(view: RunView) -> int:
    """Model calls running in the call tree: sub-calls, nested RLMs and streaming turns."""
    return sum(1 for n in view.node_list if n.running and n.parent is not None and n.kind != "cell")


def waiting_text(count: int, worst_usd: float) -> str:
    """"37 sub-calls wait for budget: each may cost up to $0.0060" ('' when none wait)."""
    if count <= 0:
        return ""
    calls = "1 sub-call waits" if count == 1 else f"{count} sub-calls wait"
    each = "it" if count == 1 else "each"
    return f"{calls} for budget: {each} may cost up to {money(worst_usd)}"


def clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class CostMeter(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("costMeter")
        self.setAccessibleName("Cost meter")
        self._level = ""
        self._texts: dict[str, str] = {}
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 6, 2)
        row.setSpacing(12)
        self.chart = SpendChart(self)
        self.chart.setFixedSize(150, 18)
        self.bar = QProgressBar(self)
        self.bar.setObjectName("costBar")
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.bar.setFixedSize(150, 4)
        self.bar.setAccessibleName("Dollars spent against the cap")
        picture = QVBoxLayout()
        picture.setContentsMargins(0, 0, 0, 0)
        picture.setSpacing(1)
        picture.addWidget(self.chart)
        picture.addWidget(self.bar)
        self.cost = self._label("cost", "Cost")
        row.addLayout(picture)
        row.addWidget(self.cost)
        self.tokens = self._label("tokens", "Tokens in and out")
        self.in_flight = self._label("inFlight", "Calls in flight")
        self.elapsed = self._label("elapsed", "Elapsed time")
        self.iteration = self._label("iteration", "Iteration")
        self.cells = self._label("cells", "Cells and syntax errors")
        for label in (self.tokens, self.in_flight, self.elapsed, self.iteration, self.cells):
            row.addWidget(label)
        row.addStretch(1)
        self.status = self._label("runStatus", "Run status")
        row.addWidget(self.status)
        # Narrow windows: the least needed figures give way first (all stay in the tooltip).
        self.give_way = [self.cells, self.iteration, self.tokens, self.elapsed, self.in_flight]
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.refresh(RunView())

    def _label(self, name: str, accessible: str) -> QLabel:
        label = QLabel(self)
        label.setObjectName(name)
        label.setAccessibleName(accessible)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    @property
    def level(self) -> str:
        return self._level

    def refresh(self, view: RunView, now: float | None = None, replay: bool = False) -> None:
        """`replay`: the calls in flight are counted in the call tree, so the meter and
        the tree agree at every point of the replay."""
        b, f = view.budget, view.figures
        fraction = b.fraction
        if b.cap_usd is None:
            self._set(self.cost, f"{cost_text(b.spent_usd, b.unpriced)} (no cap)")
            self.bar.setValue(0)
            tip = "No dollar cap for this run"
            if b.unpriced:
                tip += f"; no price is known for {', '.join(b.unpriced)}: their cost is unknown"
        else:
            self._set(self.cost, f"{money(b.spent_usd)} / {money(b.cap_usd)}")
            self.bar.setValue(int(min(fraction or 0.0, 1.0) * 1000))
            tip = f"{(fraction or 0) * 100:.0f} % of the cap spent; {money(b.reserved_usd)} reserved by calls in flight"
        if b.overrun_usd:
            tip += f"\n{money(b.overrun_usd)} billed above the reserved worst case (the cap could not cover it)"
        if b.estimated_usage_calls:
            tip += f"\n{b.estimated_usage_calls} call attempt(s) without usage from the provider: cost estimated"
        self.bar.setToolTip(tip)
        self.cost.setToolTip(tip)
        self._set_level(level_for(fraction))
        self._set(self.tokens, f"{human_count(b.input_tokens)} in / {human_count(b.output_tokens)} out")
        nested = f" · {b.nested_running} nested RLM{'s' if b.nested_running != 1 else ''}" if b.nested_running else ""
        if b.nested_waiting:
            nested += f" (+{b.nested_waiting} queued)"
        flying = in_flight_in_tree(view) if replay else b.in_flight
        waiting = waiting_text(b.waiting_for_budget, b.waiting_worst_usd)
        self._set(self.in_flight, f"{flying} in flight{nested}" + (f" · {waiting}" if waiting else ""))
        self.chart.set_data(view.spend, b.cap_usd, view.elapsed(now))
        self._set(self.elapsed, clock(view.elapsed(now)))
        top = view.meta.max_iterations
        self._set(self.iteration, f"iteration {view.iteration} of {top}" if top else f"iteration {view.iteration}")
        self._set(self.cells, f"{counted(f.cells, 'cell')} · {f.syntax_error_rate * 100:.0f}% syntax errors")
        self._set(self.status, view.status if view.status != "idle" else "")
        self.setToolTip(" · ".join(t for t in self._texts.values() if t))

    def _set(self, label: QLabel, text: str) -> None:
        if self._texts.get(label.objectName()) != text:
            self._texts[label.objectName()] = text
            label.setText(text)
            self._fit()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """Show as many figures as fit in the width, hiding the least needed first:
        the texts never run into each other."""
        row = self.layout()
        margins = row.contentsMargins()
        fixed = self.chart.width() + margins.left() + margins.right()
        labels = [self.cost, self.status, *reversed(self.give_way)]
        needed = fixed + sum(lab.sizeHint().width() + row.spacing() for lab in labels)
        for label in self.give_way:
            label.setVisible(True)
        for label in self.give_way:
            if needed <= self.width():
                break
            needed -= label.sizeHint().width() + row.spacing()
            label.setVisible(False)
        row.setGeometry(self.contentsRect())      # place what is left now, at this width

    def restyle(self) -> None:
        """Repaint the bar in the current theme's colours."""
        level, self._level = self._level, ""
        self._set_level(level or "normal")

    def _set_level(self, level: str) -> None:
        if level == self._level:
            return
        self._level = level
        self.setProperty("level", level)
        palette = PALETTES["dark" if is_dark() else "light"]
        color = {"normal": palette["accent"], "warning": palette["warning"], "error": palette["error"]}[level]
        self.bar.setStyleSheet(f"QProgressBar::chunk {{ background-color: {color}; }}")
        self.chart.set_colors(color, palette["error"], palette["border"])
        self.cost.setStyleSheet("" if level == "normal" else f"color: {color}; font-weight: bold;")
        self.bar.setAccessibleDescription({"normal": "within the cap", "warning": "near the cap",
                                           "error": "cap reached"}[level])
