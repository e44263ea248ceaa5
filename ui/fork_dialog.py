"""ForkDialog: "Fork from here…": continue a stored run live from one of its
root turns, as a new run linked to it; optionally after editing that turn's
code, with other models or caps.

    dialog = ForkDialog(parent, run_title="run a1b2", turns=[(1, code1), (2, code2)], turn=2,
                        root_model="lab/root", sub_model="lab/sub", caps={...},
                        choices=[ModelChoice("lab/root", local=True), ...])   # the model pickers' list
    if dialog.exec(): dialog.values() -> ForkChoice
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox,
                               QFormLayout, QHBoxLayout, QLabel, QPlainTextEdit, QSpinBox,
                               QVBoxLayout, QWidget)

from ui.dollar_spin import DollarSpin
from ui.model_picker import ModelChoice, ModelPicker
from ui.window_fit import sized_to_screen


@dataclass(frozen=True)
class ForkChoice:
    turn: int
    code: str | None                  # the turn's code, edited (None: as recorded)
    root_model: str
    sub_model: str
    caps: dict                        # max_depth, max_cost_usd, max_iterations


def _run_model(model: str, choices) -> list[ModelChoice]:
    """The run's own model when the pickers' list lacks it: with the local models when
    another model of its endpoint is one."""
    if not model or any(c.id == model for c in choices):
        return []
    prefix = model.partition("/")[0]
    return [ModelChoice(model, local=any(c.local and c.id.partition("/")[0] == prefix for c in choices))]


class ForkDialog(QDialog):
    def __init__(self, parent: QWidget | None, *, run_title: str, turns: list[tuple[int, str]], turn: int,
                 root_model: str, sub_model: str, caps: dict,
                 choices: list[ModelChoice] | tuple = (), run_id: str = "") -> None:
        super().__init__(parent)
        self.run_id = run_id                          # the run forked
        self.original_models = (root_model, sub_model)   # the run's own, before the user picks others
        self.setObjectName("forkDialog")
        self.setWindowTitle(f"Fork {run_title}")
        sized_to_screen(self, 720, 560)
        self._codes = dict(turns)
        layout = QVBoxLayout(self)
        intro = QLabel("The run is rebuilt up to this turn by re-executing its code with the recorded "
                       "sub-call answers (no cost); from there it continues live as a new run, linked "
                       "to this one.", self)
        intro.setWordWrap(True)
        intro.setObjectName("hint")
        layout.addWidget(intro)
        form = QFormLayout()
        self.turn_combo = QComboBox(self)
        self.turn_combo.setAccessibleName("Fork from turn")
        for number, _code in turns:
            self.turn_combo.addItem(f"turn {number}", number)
        form.addRow("Continue from", self.turn_combo)
        self.edit_check = QCheckBox("Edit this turn's code before it runs", self)
        form.addRow("", self.edit_check)
        layout.addLayout(form)
        self.code_edit = QPlainTextEdit(self)
        self.code_edit.setObjectName("forkCode")
        self.code_edit.setAccessibleName("The turn's code")
        self.code_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.code_edit.setReadOnly(True)
        layout.addWidget(self.code_edit, 1)
        models = QFormLayout()
        self.root_picker = ModelPicker(self)
        self.root_picker.setAccessibleName("Root model of the fork")
        self.sub_picker = ModelPicker(self)
        self.sub_picker.setAccessibleName("Sub model of the fork")
        for picker, model in ((self.root_picker, root_model), (self.sub_picker, sub_model)):
            picker.set_choices([*_run_model(model, choices), *choices])
            picker.set_model_id(model)
        models.addRow("Root model", self.root_picker)
        models.addRow("Sub model", self.sub_picker)
        caps_row = QHBoxLayout()
        self.depth_spin = QSpinBox(self)
        self.depth_spin.setRange(0, 3)
        self.depth_spin.setValue(int(caps.get("max_depth", 1) or 0))
        self.cost_spin = DollarSpin(self)
        self.cost_spin.setValue(float(caps.get("max_cost_usd") or 0))
        self.iter_spin = QSpinBox(self)
        self.iter_spin.setRange(1, 200)
        self.iter_spin.setValue(int(caps.get("max_iterations", 20) or 20))
        for label, widget in (("Depth", self.depth_spin), ("Cap", self.cost_spin),
                              ("Iterations", self.iter_spin)):
            caps_row.addWidget(QLabel(label, self))
            caps_row.addWidget(widget)
        caps_row.addStretch(1)
        models.addRow(caps_row)
        layout.addLayout(models)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel,
                                   self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Fork and run")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.turn_combo.currentIndexChanged.connect(self._show_code)
        self.edit_check.toggled.connect(lambda on: self.code_edit.setReadOnly(not on))
        index = self.turn_combo.findData(turn)
        self.turn_combo.setCurrentIndex(max(index, 0))
        self._show_code()

    def _show_code(self, *_args) -> None:
        self.code_edit.setPlainText(self._codes.get(self.turn_combo.currentData(), ""))

    def values(self) -> ForkChoice:
        turn = int(self.turn_combo.currentData())
        code = self.code_edit.toPlainText()
        edited = self.edit_check.isChecked() and code != self._codes.get(turn, "")
        return ForkChoice(turn=turn, code=code if edited else None,
                          root_model=self.root_picker.model_id(), sub_model=self.sub_picker.model_id(),
                          caps={"max_depth": self.depth_spin.value(),
                                "max_cost_usd": self.cost_spin.amount(),
                                "max_iterations": self.iter_spin.value()})
