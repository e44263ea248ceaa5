"""ApprovalDialog: the run pauses before a large batch of sub-calls until the
user approves or refuses it.

    dialog = ApprovalDialog(parent, ApprovalShown(calls=120, cost_low=0.4, cost_high=1.1, ...))
    dialog.decided.connect(lambda ok: ...)   # True: approve, False: refuse
    dialog.open()

Closing the window (Esc) refuses. Not modal to the whole app: the rest of the
window (transcript, tree, Stop) keeps working while the run waits.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QDialog, QHBoxLayout, QLabel, QPushButton, QSpinBox,
                               QVBoxLayout, QWidget)

from ui.dollar_spin import DollarSpin
from ui.cost_meter import money
from ui.flow_layout import FlowLayout


@dataclass(frozen=True)
class ApprovalShown:
    calls: int                       # sub-calls in the batch
    cost_low: float | None = None    # its estimated cost range, USD
    cost_high: float | None = None
    model: str = ""
    reason: str = ""                 # which threshold it crossed ("more than 50 calls", "over $0.50")
    spent_usd: float | None = None   # spent so far in the run


class ApprovalDialog(QDialog):
    decided = Signal(bool)

    def __init__(self, parent: QWidget | None, info: ApprovalShown) -> None:
        super().__init__(parent)
        self.setObjectName("approvalDialog")
        self.setWindowTitle("Approve a large batch?")
        self.setModal(False)
        self.info = info
        self.answer: bool | None = None
        layout = QVBoxLayout(self)
        cost = ""
        if info.cost_high is not None:
            cost = (f" (worst case {money(info.cost_high)})" if info.cost_low is None
                    else f" (about {money(info.cost_low)} to {money(info.cost_high)})")
        text = (f"The run wants to send a batch of {info.calls:,} sub-calls"
                f"{' to ' + info.model if info.model else ''}{cost}.")
        self.message = QLabel(text, self)
        self.message.setObjectName("approvalMessage")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        details = []
        if info.reason:
            details.append(f"It is above your approval threshold ({info.reason}).")
        if info.spent_usd is not None:
            details.append(f"Spent so far: {money(info.spent_usd)}.")
        details.append("Refuse, and the root model is told the batch was refused.")
        hint = QLabel(" ".join(details), self)
        hint.setObjectName("hint")
        hint.setWordWrap(True)
        layout.addWidget(hint)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.refuse_button = QPushButton("Refuse", self)
        self.refuse_button.setAccessibleName("Refuse the batch")
        self.approve_button = QPushButton("Approve", self)
        self.approve_button.setAccessibleName("Approve the batch")
        self.approve_button.setDefault(True)
        buttons.addWidget(self.refuse_button)
        buttons.addWidget(self.approve_button)
        layout.addLayout(buttons)
        self.approve_button.clicked.connect(self.approve)
        self.refuse_button.clicked.connect(self.refuse)
        self.rejected.connect(self.refuse)        # Esc, window closed

    def approve(self) -> None:
        self._decide(True)

    def refuse(self) -> None:
        self._decide(False)

    def _decide(self, answer: bool) -> None:
        if self.answer is not None:
            return
        self.answer = answer
        self.decided.emit(answer)
        if self.isVisible():
            self.done(QDialog.DialogCode.Accepted if answer else QDialog.DialogCode.Rejected)


class ApprovalThresholds(QWidget):
    """"Ask before batches over [N] calls or [$X]" (0: never ask). The values are the
    caps `approve_batch_calls` and `approve_batch_usd` (core/config.py)."""
    changed = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalThresholds")
        row = FlowLayout(self)          # a narrow panel wraps the fields instead of growing
        self.calls_spin = QSpinBox(self)
        self.calls_spin.setRange(0, 1_000_000)
        self.calls_spin.setSpecialValueText("never")
        self.calls_spin.setSuffix(" calls")
        self.calls_spin.setAccessibleName("Ask before batches of more sub-calls than")
        self.usd_spin = DollarSpin(self, none_text="never")
        self.usd_spin.setAccessibleName("Ask before batches that may cost more than")
        self.setToolTip("The run pauses and asks you before a batch of sub-calls larger than this "
                        "(calls, or worst-case dollars). 'never' switches the question off.")
        ask = QLabel("Ask before batches over", self)
        row.addWidget(ask)
        for spin in (self.calls_spin, self.usd_spin):
            spin.setMinimumWidth(spin.fontMetrics().horizontalAdvance("never calls") + 36)
        row.addWidget(self.calls_spin)
        row.addWidget(QLabel("or", self))
        row.addWidget(self.usd_spin)
        self.calls_spin.valueChanged.connect(self._emit)
        self.usd_spin.valueChanged.connect(self._emit)

    def values(self) -> dict:
        return {"approve_batch_calls": self.calls_spin.value() or None,
                "approve_batch_usd": self.usd_spin.amount()}

    def set_values(self, caps: dict) -> None:
        for spin, key in ((self.calls_spin, "approve_batch_calls"), (self.usd_spin, "approve_batch_usd")):
            spin.blockSignals(True)
            spin.setValue(caps.get(key) or 0)
            spin.blockSignals(False)

    def _emit(self, *_args) -> None:
        self.changed.emit(self.values())
