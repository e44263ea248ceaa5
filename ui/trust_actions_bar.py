"""The row of trust buttons under the history list: Verify, Fork…, Compare…, Family.

    bar = TrustActionsBar()
    history_pane.add_accessory(bar)
    bar.verify_button.clicked.connect(...)
    bar.show_state(selected=True, compare_label="Compare…")

The glue (app/trust_actions.py) connects the buttons and says what they show; this
widget only builds them.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget


class TrustActionsBar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trustActions")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.verify_button = QPushButton("Verify", self)
        self.verify_button.setToolTip("Re-run the selected run's code with the recorded sub-call answers "
                                      "(no cost) and check that every cell and the answer come out the same")
        self.fork_button = QPushButton("Fork…", self)
        self.fork_button.setToolTip("Continue the selected run live from one of its turns, as a new run")
        self.compare_button = QPushButton("Compare…", self)
        self.compare_button.setToolTip("Compare the selected run with another: press, select the other run, "
                                       "press again")
        self.family_button = QPushButton("Family", self)
        self.family_button.setCheckable(True)
        self.family_button.setToolTip("Show only the selected run, the run it came from and its forks and re-runs")
        for button in (self.verify_button, self.fork_button, self.compare_button, self.family_button):
            row.addWidget(button)
        row.addStretch(1)

    def show_state(self, *, selected: bool, compare_label: str) -> None:
        """Enable the buttons for a selected run; `compare_label` says where Compare stands."""
        for button in (self.verify_button, self.fork_button, self.compare_button):
            button.setEnabled(selected)
        self.compare_button.setText(compare_label)
        self.family_button.setEnabled(selected or self.family_button.isChecked())

    def check_family(self, on: bool = True) -> None:
        """Tick Family without its toggled signal (the glue filtered the list itself)."""
        self.family_button.blockSignals(True)
        self.family_button.setChecked(on)
        self.family_button.blockSignals(False)
