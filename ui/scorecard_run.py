"""EvaluateDialog: start an evaluation from the window, watch it question by question, stop it.

    dialog = EvaluateDialog(parent, models=["lab/coder-7b", ...], pair=("lab/coder-7b", "lab/small-3b"),
                            sample_set="/…/eval_questions.jsonl", sources=7, caps_note="Caps: …")
    dialog.start_requested.connect(glue.start)       # EvaluationSpec
    dialog.stop_requested.connect(glue.stop)
    dialog.set_jobs([JobShown(key, question, pair, mode, repeat)]); dialog.set_state(key, "running")
    dialog.set_finished("Scorecard saved: …")  /  dialog.set_error("…")

Picks a question set (JSONL; the samples' set offered), the documents (those in Sources,
the sample documents or a folder), model pairs (root and sub, editable pickers), the
modes to compare (rlm, auto, direct: core/engine/mode.py), repeats and how many run at
once. Plain data in, intents out: app/scorecard_glue.py validates and runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QFileDialog, QFormLayout, QHBoxLayout, QHeaderView,
                               QLabel, QLineEdit, QPushButton, QSpinBox, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from ui.window_fit import sized_to_screen

MODES = (("rlm", "RLM", True), ("auto", "Auto (plain call when it fits)", False),
         ("direct", "One plain call", False))
DOCUMENTS = (("sources", "The documents in Sources"), ("samples", "The sample documents"), ("folder", "A folder"))
STATE_TEXT = {"queued": "queued", "running": "running…", "right": "right", "wrong": "wrong",
              "stopped": "stopped", "not started": "not started"}


@dataclass(frozen=True)
class EvaluationSpec:
    set_path: str
    documents: str                        # "sources" | "samples" | "folder"
    folder: str = ""
    pairs: tuple[tuple[str, str], ...] = ()
    modes: tuple[str, ...] = ("rlm",)
    repeats: int = 1
    parallel: int = 2


@dataclass(frozen=True)
class JobShown:
    key: tuple                            # (pair, mode, question_id, repeat)
    question: str
    pair: str
    mode: str
    repeat: int
    detail: str = field(default="")


class EvaluateDialog(QDialog):
    start_requested = Signal(object)      # EvaluationSpec
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None, *, models: list[str], pair: tuple[str, str],
                 sample_set: str = "", sources: int = 0, caps_note: str = "") -> None:
        super().__init__(parent)
        self.setObjectName("evaluateDialog")
        self.setWindowTitle("New evaluation")
        self.setModal(False)
        sized_to_screen(self, 860, 640)
        self.models = list(models)
        layout = QVBoxLayout(self)
        form = QFormLayout()

        self.set_edit = QLineEdit(sample_set)
        self.set_edit.setPlaceholderText("A .jsonl file: one question per line (question, expected, checker)")
        self.set_edit.setAccessibleName("Question set")
        browse = QPushButton("Choose…")
        browse.clicked.connect(self._choose_set)
        row = QHBoxLayout()
        row.addWidget(self.set_edit, 1)
        row.addWidget(browse)
        form.addRow("Question set", row)

        self.documents_box = QComboBox()
        self.documents_box.setAccessibleName("Documents")
        for key, label in DOCUMENTS:
            self.documents_box.addItem(f"{label} ({sources} files)" if key == "sources" else label, key)
        self.folder_edit = QLineEdit()
        self.folder_edit.setPlaceholderText("The folder to read")
        self.folder_edit.setAccessibleName("Documents folder")
        self.folder_button = QPushButton("Choose…")
        self.folder_button.clicked.connect(self._choose_folder)
        row = QHBoxLayout()
        row.addWidget(self.documents_box)
        row.addWidget(self.folder_edit, 1)
        row.addWidget(self.folder_button)
        form.addRow("Documents", row)
        self.documents_box.currentIndexChanged.connect(self._documents_changed)
        self.documents_box.setCurrentIndex(0 if sources or not sample_set else 1)
        self._documents_changed()

        self.pairs_table = QTableWidget(0, 2)
        self.pairs_table.setHorizontalHeaderLabels(["Root model", "Sub model"])
        self.pairs_table.setAccessibleName("Model pairs")
        self.pairs_table.verticalHeader().hide()
        self.pairs_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.pairs_table.setMaximumHeight(130)
        add, remove = QPushButton("Add pair"), QPushButton("Remove pair")
        add.clicked.connect(lambda: self.add_pair(*self.pair_at(self.pairs_table.rowCount() - 1)))
        remove.clicked.connect(self._remove_pair)
        buttons = QVBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.pairs_table, 1)
        row.addLayout(buttons)
        form.addRow("Model pairs", row)
        self.add_pair(*pair)

        self.mode_checks: dict[str, QCheckBox] = {}
        row = QHBoxLayout()
        for key, label, on in MODES:
            check = QCheckBox(label)
            check.setChecked(on)
            self.mode_checks[key] = check
            row.addWidget(check)
        row.addStretch(1)
        form.addRow("Modes", row)

        self.repeats_spin = QSpinBox()
        self.repeats_spin.setRange(1, 20)
        self.repeats_spin.setAccessibleName("Repeats")
        self.parallel_spin = QSpinBox()
        self.parallel_spin.setRange(1, 8)
        self.parallel_spin.setValue(2)
        self.parallel_spin.setAccessibleName("Questions at once")
        row = QHBoxLayout()
        row.addWidget(self.repeats_spin)
        row.addWidget(QLabel("answers per question, at most"))
        row.addWidget(self.parallel_spin)
        row.addWidget(QLabel("at once"))
        row.addStretch(1)
        form.addRow("Repeats", row)
        layout.addLayout(form)
        self.caps_label = QLabel(caps_note)
        self.caps_label.setObjectName("hint")
        self.caps_label.setWordWrap(True)
        layout.addWidget(self.caps_label)

        self.error_label = QLabel()
        self.error_label.setObjectName("evaluateError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("QLabel { color: #c53030; }")
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        layout.addWidget(self.error_label)

        actions = QHBoxLayout()
        self.status_label = QLabel("Pick a question set, documents and models, then Start.")
        self.status_label.setWordWrap(True)
        self.start_button = QPushButton("Start")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self._start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop_requested)
        actions.addWidget(self.status_label, 1)
        actions.addWidget(self.start_button)
        actions.addWidget(self.stop_button)
        layout.addLayout(actions)

        self.progress_table = QTableWidget(0, 5)
        self.progress_table.setHorizontalHeaderLabels(["Question", "Pair", "Mode", "Repeat", "State"])
        self.progress_table.setAccessibleName("Progress per question")
        self.progress_table.verticalHeader().hide()
        self.progress_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.progress_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.progress_table, 1)
        self._rows: dict[tuple, int] = {}
        self._states: dict[tuple, str] = {}

    # --- the form ----------------------------------------------------------------
    def _combo(self, text: str) -> QComboBox:
        box = QComboBox()
        box.setEditable(True)
        box.addItems(self.models)
        box.setCurrentText(text)
        return box

    def add_pair(self, root: str, sub: str) -> None:
        r = self.pairs_table.rowCount()
        self.pairs_table.insertRow(r)
        root_box, sub_box = self._combo(root), self._combo(sub)
        root_box.setAccessibleName(f"Root model of pair {r + 1}")
        sub_box.setAccessibleName(f"Sub model of pair {r + 1}")
        self.pairs_table.setCellWidget(r, 0, root_box)
        self.pairs_table.setCellWidget(r, 1, sub_box)

    def pair_at(self, row: int) -> tuple[str, str]:
        if row < 0:
            return "", ""
        return (self.pairs_table.cellWidget(row, 0).currentText().strip(),
                self.pairs_table.cellWidget(row, 1).currentText().strip())

    def _remove_pair(self) -> None:
        row = self.pairs_table.currentRow()
        if self.pairs_table.rowCount() > 1:
            self.pairs_table.removeRow(row if row >= 0 else self.pairs_table.rowCount() - 1)

    def _documents_changed(self, *_args) -> None:
        folder = self.documents_box.currentData() == "folder"
        self.folder_edit.setEnabled(folder)
        self.folder_button.setEnabled(folder)

    def _choose_set(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Question set", self.set_edit.text(),
                                              "Question sets (*.jsonl);;All files (*)")
        if path:
            self.set_edit.setText(path)

    def _choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Documents", self.folder_edit.text())
        if path:
            self.folder_edit.setText(path)

    def spec(self) -> EvaluationSpec:
        pairs = tuple(self.pair_at(r) for r in range(self.pairs_table.rowCount()))
        return EvaluationSpec(self.set_edit.text().strip(), self.documents_box.currentData(),
                              self.folder_edit.text().strip(), pairs,
                              tuple(k for k, check in self.mode_checks.items() if check.isChecked()),
                              self.repeats_spin.value(), self.parallel_spin.value())

    def _start(self) -> None:
        self.error_label.hide()
        self.start_requested.emit(self.spec())

    # --- while it runs -------------------------------------------------------------
    def set_error(self, message: str) -> None:
        """Bad input or a failed start: said here; the form keeps what was typed."""
        self.error_label.setText(message)
        self.error_label.show()
        self.set_running(False)

    def set_running(self, running: bool, status: str = "") -> None:
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        if status:
            self.status_label.setText(status)

    def set_stopping(self) -> None:
        self.stop_button.setEnabled(False)
        self.status_label.setText("Stopping: no new question starts; the runs in flight are stopping…")

    def set_jobs(self, jobs: list[JobShown]) -> None:
        self.progress_table.setRowCount(len(jobs))
        self._rows = {}
        self._states = {}
        for r, job in enumerate(jobs):
            self._rows[job.key] = r
            self._states[job.key] = "queued"
            for c, text in enumerate((job.question, job.pair, job.mode, str(job.repeat), STATE_TEXT["queued"])):
                item = QTableWidgetItem(" ".join(text.split()))
                if c == 0:
                    item.setToolTip(f"{job.key[2]}: {job.question}")
                self.progress_table.setItem(r, c, item)
        self._count()

    def set_state(self, key: tuple, state: str, detail: str = "") -> None:
        r = self._rows.get(tuple(key))
        if r is None:
            return
        self._states[tuple(key)] = state
        item = self.progress_table.item(r, 4)
        item.setText(STATE_TEXT.get(state, state))
        item.setToolTip(detail)
        if state == "running":
            self.progress_table.scrollToItem(item)
        self._count()

    def states(self) -> dict[tuple, str]:
        return dict(self._states)

    def _count(self) -> None:
        states = list(self._states.values())
        done = sum(s not in ("queued", "running") for s in states)
        running = states.count("running")
        right = states.count("right")
        if self.stop_button.isEnabled():
            self.status_label.setText(f"{done} of {len(states)} answered ({right} right) · {running} running")

    def set_finished(self, message: str) -> None:
        for key, state in self._states.items():
            if state in ("queued", "running"):
                self.set_state(key, "not started" if state == "queued" else "stopped")
        self.set_running(False)
        self.status_label.setText(message)
