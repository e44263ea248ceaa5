"""The one field for an amount of dollars: a cap, a threshold, a grid's budget.

Four decimals are kept, so a cap of $0.004 (a few sub-calls of a cheap model) can be typed and is
what the run gets; the text shows two decimals for whole cents ($1.00) and only the digits a smaller
amount needs ($0.004, $0.0125), so the common case reads as money. Every dollar field of the window
is one of these, so a cap typed in the question panel means the same in a fork, the settings and a
grid.
"""
from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QWidget

DECIMALS = 4


def dollar_text(value: float) -> str:
    """`1.0` -> "1.00", `0.004` -> "0.004", `0.0125` -> "0.0125" (no prefix)."""
    text = f"{value:.{DECIMALS}f}"
    whole, _, frac = text.partition(".")
    frac = frac.rstrip("0")
    return f"{whole}.{frac.ljust(2, '0')}"


class DollarSpin(QDoubleSpinBox):
    def __init__(self, parent: QWidget | None = None, *, maximum: float = 10_000.0,
                 none_text: str = "no cap") -> None:
        super().__init__(parent)
        self.setDecimals(DECIMALS)
        self.setRange(0.0, maximum)
        self.setPrefix("$")
        self.setSpecialValueText(none_text)

    def textFromValue(self, value: float) -> str:      # noqa: N802 (Qt's name)
        return dollar_text(value)

    def amount(self) -> float | None:
        """The amount as the run takes it: None for 0 (no cap), else rounded to the field's digits."""
        value = round(self.value(), DECIMALS)
        return value if value > 0 else None
