"""Settings: keys, models, endpoints, default caps, documents, where grids run, theme.

The dialog edits the settings in their file form (the dict of
app.settings.settings_to_dict: prices as [in, out], endpoints with base_url)
and hands back `values()`, the fields it owns in that same form. Keys never pass through the settings: the
Keys page emits intents (set, test, delete) that app/controller.py carries out
in the keychain, and shows the answers it gets back.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemDelegate, QAbstractItemView, QButtonGroup, QCheckBox, QComboBox, QDialog, QDialogButtonBox,
    QFormLayout, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton,
    QRadioButton, QSpinBox, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget,
)

from core.local_defaults import one_block_default
from ui.dollar_spin import DollarSpin
from ui import icons
from ui.documents_page import DocumentsPage, OcrInfo
from ui.endpoints_page import EndpointsPage
from ui.window_fit import sized_to_screen

PAGES = ("keys", "models", "endpoints", "caps", "documents", "grid", "appearance")
EFFORTS = ("", "minimal", "low", "medium", "high")
MODEL_COLUMNS = ("Model", "In $/M", "Out $/M", "Free", "Max tokens", "Reasoning", "Prompt note",
                 "Context window", "One block")


def _label(text: str, hint: bool = False) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    if hint:
        label.setObjectName("hint")
    return label


class KeysPage(QWidget):
    key_set = Signal(str, str)      # provider, key
    key_session = Signal(str, str)  # provider, key: kept in memory until the app closes
    key_test = Signal(str)          # the glue tests the pasted key if there is one (pasted_key())
    key_delete = Signal(str)

    def __init__(self, providers: list[tuple[str, str]], parent=None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.keychain_label = _label("")
        self.keychain_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.keychain_label)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(("Provider", "Key", "From"))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setAccessibleName("Providers and their keys")
        self.table.itemSelectionChanged.connect(self._sync_combo)
        layout.addWidget(self.table, 1)

        form = QFormLayout()
        self.provider_combo = QComboBox()
        self.provider_combo.setAccessibleName("Provider")
        for name, display in providers:
            self.provider_combo.addItem(display, name)
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("Paste the API key")
        self.key_edit.setAccessibleName("API key")
        form.addRow("Provider", self.provider_combo)
        form.addRow("Key", self.key_edit)
        layout.addLayout(form)
        buttons = QHBoxLayout()
        self.set_button = QPushButton("Save in keychain")
        icons.bind(self.set_button, "key")
        self.set_button.clicked.connect(self._on_set)
        self.session_button = QPushButton("Use for this session")
        self.session_button.setToolTip("Keep the key in memory only, until RLM Studio closes: "
                                       "nothing is written anywhere")
        self.session_button.clicked.connect(self._on_session)
        self.test_button = QPushButton("Test")
        self.test_button.setToolTip("Sends one tiny request to the provider with the pasted key "
                                    "(or, if the field is empty, the saved one)")
        self.test_button.clicked.connect(lambda: self.key_test.emit(self.provider()))
        self.delete_button = QPushButton("Delete")
        icons.bind(self.delete_button, "delete")
        self.delete_button.clicked.connect(lambda: self.key_delete.emit(self.provider()))
        self._deletable: set[str] = set()      # providers with a stored key: Delete is enabled for them
        self.provider_combo.currentIndexChanged.connect(
            lambda _i: self.delete_button.setEnabled(self.provider() in self._deletable))
        for b in (self.set_button, self.session_button, self.test_button, self.delete_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.result_label = _label("", hint=True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.result_label)
        layout.addWidget(_label("Keys are kept in your system keychain only: never in the settings "
                                "file, the run database, logs or exports.", hint=True))

    def provider(self) -> str:
        return self.provider_combo.currentData() or ""

    def select_provider(self, name: str) -> None:
        index = self.provider_combo.findData(name)
        if index >= 0:
            self.provider_combo.setCurrentIndex(index)

    def _sync_combo(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.select_provider(self.table.item(rows[0].row(), 0).data(Qt.ItemDataRole.UserRole))

    def _on_set(self) -> None:
        key = self.key_edit.text().strip()
        if not key:
            self.show_result(False, "Paste a key first.")
            return
        self.key_set.emit(self.provider(), key)

    def _on_session(self) -> None:
        key = self.key_edit.text().strip()
        if not key:
            self.show_result(False, "Paste a key first.")
            return
        self.key_session.emit(self.provider(), key)

    def pasted_key(self) -> str:
        return self.key_edit.text().strip()

    def key_saved(self) -> None:
        self.key_edit.clear()

    def set_keychain(self, usable: bool, text: str) -> None:
        if usable:
            self.keychain_label.setText(f"Keychain: {text}")
        else:
            sentence = text[:1].upper() + text[1:] if text else ""
            self.keychain_label.setText(f"<b>The system keychain cannot store keys.</b> {sentence} "
                                        "You can still <b>Use for this session</b>: the key stays in "
                                        "memory until RLM Studio closes.")
        self.set_button.setEnabled(usable)

    def set_rows(self, rows: list[tuple[str, str, str, str]]) -> None:
        """rows: (provider, display name, masked key or "", source or "")."""
        self._deletable = {name for name, _d, masked, source in rows if masked and source in ("keychain", "session")}
        self.delete_button.setEnabled(self.provider() in self._deletable)
        self.table.setRowCount(len(rows))
        for i, (name, display, masked, source) in enumerate(rows):
            item = QTableWidgetItem(display)
            item.setData(Qt.ItemDataRole.UserRole, name)
            self.table.setItem(i, 0, item)
            self.table.setItem(i, 1, QTableWidgetItem(masked or "not set"))
            where = {"keychain": "keychain", "session": "this session only"}.get(
                source, source.replace("env:", "environment "))
            self.table.setItem(i, 2, QTableWidgetItem(where))

    def show_result(self, ok: bool, text: str) -> None:
        self.result_label.setText(("✔ " if ok else "✖ ") + text)


class ModelsPage(QWidget):
    def __init__(self, data: dict, parent=None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.root_edit = QLineEdit(data.get("root_model") or "")
        self.root_edit.setAccessibleName("Default root model")
        self.sub_edit = QLineEdit(data.get("sub_model") or "")
        self.sub_edit.setPlaceholderText("the root model")
        self.sub_edit.setAccessibleName("Default sub model")
        self.sub_call_edit = QLineEdit(", ".join(data.get("sub_call_models") or []))
        self.sub_call_edit.setPlaceholderText("none: only the run's root and sub models")
        self.sub_call_edit.setAccessibleName("More models for sub-calls")
        self.sub_call_edit.setToolTip(
            "Code a model writes may call llm_query(..., model=NAME) only with the run's root and "
            "sub models and the models listed here (comma-separated, e.g. lab/qwen3, "
            "groq/llama-3.3-70b-versatile). Each goes to its own provider or endpoint, with its own key.")
        form.addRow("Default root model", self.root_edit)
        form.addRow("Default sub model", self.sub_edit)
        form.addRow("More models for sub-calls", self.sub_call_edit)
        layout.addLayout(form)
        layout.addWidget(_label(
            "Per model: prices in USD per million tokens (leave empty to use the built-in price), "
            "'free' for local models, max_tokens (thinking models need room for thinking plus "
            "code), reasoning effort, a note added to the prompt for that model, and its context "
            "window in tokens (leave at default to use the built-in one; Auto needs it to choose a "
            "plain call), and 'one block' to read its replies only up to their first code block.", hint=True))
        self.table = QTableWidget(0, len(MODEL_COLUMNS))
        self.table.setHorizontalHeaderLabels(MODEL_COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setAccessibleName("Model settings")
        header = self.table.horizontalHeader()
        # Every column as wide as its header (and the model column as a long name): a narrow
        # dialog scrolls sideways instead of cutting "lab/co…" and "Context windov".
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        metrics = header.fontMetrics()
        for col, label in enumerate(MODEL_COLUMNS):
            sample = {0: "lab/qwen2.5-coder:14b", 1: "0.0000", 2: "0.0000", 4: "1,000,000",
                      6: "Be terse.", 7: "100,000,000"}.get(col, "")
            self.table.setColumnWidth(col, max(metrics.horizontalAdvance(label),
                                               metrics.horizontalAdvance(sample)) + 36)
        layout.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        self.add_button = QPushButton("Add model")
        self.add_button.clicked.connect(lambda: self.add_row("", {}))
        self.remove_button = QPushButton("Remove model")
        self.remove_button.clicked.connect(self._remove_selected)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        for model_id, values in (data.get("models") or {}).items():
            self.add_row(model_id, dict(values or {}))

    def add_row(self, model_id: str, values: dict) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(model_id))
        # Kept as set in settings.json (no column for it): the root temperature (core/local_defaults.py)
        self.table.item(row, 0).setData(Qt.ItemDataRole.UserRole, values.get("temperature"))
        price = values.get("price") or [None, None]
        for col, value in ((1, price[0]), (2, price[1])):
            self.table.setItem(row, col, QTableWidgetItem("" if value is None else f"{value:g}"))
        free = QCheckBox()
        free.setChecked(bool(values.get("free")))
        free.setAccessibleName("Free")
        self.table.setCellWidget(row, 3, free)
        tokens = QSpinBox()
        tokens.setRange(0, 1_000_000)
        tokens.setSingleStep(1024)
        tokens.setSpecialValueText("default")
        tokens.setValue(int(values.get("max_tokens") or 0))
        self.table.setCellWidget(row, 4, tokens)
        effort = QComboBox()
        for e in EFFORTS:
            effort.addItem(e or "default", e)
        effort.setCurrentIndex(max(0, effort.findData(values.get("reasoning_effort") or "")))
        self.table.setCellWidget(row, 5, effort)
        self.table.setItem(row, 6, QTableWidgetItem(values.get("prompt_note") or ""))
        window = QSpinBox()
        window.setRange(0, 100_000_000)
        window.setSingleStep(1024)
        window.setSpecialValueText("default")
        window.setValue(int(values.get("context_window") or 0))
        window.setAccessibleName("Context window")
        self.table.setCellWidget(row, 7, window)
        one_block = QCheckBox()
        chosen = values.get("one_block_per_turn")      # None: the default for the model's size
        one_block.setChecked(one_block_default(model_id) if chosen is None else bool(chosen))
        one_block.setAccessibleName("One block per turn")
        one_block.setToolTip("Read this model's root replies only up to their first closed code block")
        self.table.setCellWidget(row, 8, one_block)
        return row

    def focus_model(self, model_id: str, values: dict | None = None) -> int:
        """The row of `model_id` (added, pre-filled with `values`, when there is none),
        shown and its input price cell open for typing: what "Set a price…" opens."""
        row = next((r for r in range(self.table.rowCount())
                    if self.table.item(r, 0) and self.table.item(r, 0).text().strip() == model_id), -1)
        if row < 0:
            row = self.add_row(model_id, dict(values or {}))
        item = self.table.item(row, 1)
        self.table.scrollToItem(item)
        self.table.setCurrentCell(row, 1)
        self.table.setFocus()
        self.table.editItem(item)
        return row

    def commit_edits(self) -> None:
        """A cell still being typed in keeps what was typed (Save pressed with the editor open)."""
        editor = self.table.focusWidget() if self.table.state() == QAbstractItemView.State.EditingState else None
        if editor is not None and editor is not self.table:
            self.table.commitData(editor)
            self.table.closeEditor(editor, QAbstractItemDelegate.EndEditHint.NoHint)

    def sub_call_models(self) -> list[str]:
        names = [n.strip() for n in self.sub_call_edit.text().replace("\n", ",").split(",")]
        return list(dict.fromkeys(n for n in names if n))

    def _remove_selected(self) -> None:
        for row in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(row)

    def models(self) -> dict[str, dict]:
        self.commit_edits()
        out: dict[str, dict] = {}
        for row in range(self.table.rowCount()):
            model_id = (self.table.item(row, 0).text() if self.table.item(row, 0) else "").strip()
            if not model_id:
                continue
            prices = []
            for col in (1, 2):
                text = self.table.item(row, col).text().strip() if self.table.item(row, col) else ""
                try:
                    prices.append(float(text.lstrip("$")) if text else None)
                except ValueError:
                    raise ValueError(f"{model_id}: the price {text!r} is not a number") from None
            if (prices[0] is None) != (prices[1] is None):
                raise ValueError(f"{model_id}: give both prices, or neither")
            note = self.table.item(row, 6).text().strip() if self.table.item(row, 6) else ""
            out[model_id] = {
                "price": prices if prices[0] is not None else None,
                "free": self.table.cellWidget(row, 3).isChecked(),
                "max_tokens": self.table.cellWidget(row, 4).value() or None,
                "reasoning_effort": self.table.cellWidget(row, 5).currentData() or None,
                "prompt_note": note or None,
                "context_window": self.table.cellWidget(row, 7).value() or None,
                "one_block_per_turn": self.table.cellWidget(row, 8).isChecked(),
                "temperature": self.table.item(row, 0).data(Qt.ItemDataRole.UserRole)}
        return out


class CapsPage(QWidget):
    def __init__(self, caps: dict, parent=None) -> None:
        super().__init__(parent)
        self._original = dict(caps)
        form = QFormLayout(self)
        form.addRow(_label("Defaults for new runs; the question panel can change them per run.",
                           hint=True))
        self.depth = QSpinBox()
        self.depth.setRange(0, 3)
        self.depth.setValue(int(caps.get("max_depth", 1)))
        self.iterations = QSpinBox()
        self.iterations.setRange(1, 200)
        self.iterations.setValue(int(caps.get("max_iterations", 20)))
        self.cost = DollarSpin()
        self.cost.setValue(float(caps.get("max_cost_usd") or 0))
        self.sub_calls = QSpinBox()
        self.sub_calls.setRange(0, 1_000_000)
        self.sub_calls.setSpecialValueText("no limit")
        self.sub_calls.setValue(int(caps.get("max_sub_calls") or 0))
        self.wall = QSpinBox()
        self.wall.setRange(0, 24 * 3600)
        self.wall.setSuffix(" s")
        self.wall.setSpecialValueText("no limit")
        self.wall.setValue(int(caps.get("max_wall_seconds") or 0))
        self.cell_timeout = QSpinBox()
        self.cell_timeout.setRange(1, 24 * 3600)
        self.cell_timeout.setSuffix(" s")
        self.cell_timeout.setValue(int(caps.get("cell_timeout_s") or 120))
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 512)
        self.concurrency.setValue(int(caps.get("concurrency", 32)))
        self.memory = QSpinBox()
        self.memory.setRange(256, 1024 * 1024)
        self.memory.setSingleStep(1024)
        self.memory.setSuffix(" MB")
        self.memory.setValue(int(caps.get("memory_limit_mb") or 4096))
        self.memory.setToolTip("Memory of the REPL worker that holds your documents; a folder too large "
                               "for it is refused before the run, with its size")
        rows = (("Depth (0 REPL only, 1 sub-calls, 2-3 nested)", self.depth),
                ("Iterations (root turns)", self.iterations), ("Dollar cap", self.cost),
                ("Sub-calls at most", self.sub_calls), ("Wall time at most", self.wall),
                ("Time per code cell", self.cell_timeout), ("Sub-calls at once", self.concurrency),
                ("REPL memory limit", self.memory))
        for text, widget in rows:
            widget.setAccessibleName(text)
            form.addRow(text, widget)

    def caps(self) -> dict:
        return {**self._original, "max_depth": self.depth.value(), "max_iterations": self.iterations.value(),
                "max_cost_usd": self.cost.amount(),
                "max_sub_calls": self.sub_calls.value() or None,
                "max_wall_seconds": self.wall.value() or None,
                "cell_timeout_s": float(self.cell_timeout.value()),
                "concurrency": self.concurrency.value(), "memory_limit_mb": self.memory.value()}


class GridPage(QWidget):
    """Where the window's review grids run: here, or on a Ray cluster."""

    def __init__(self, ray_address: str, parent=None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        form.addRow(_label("Review grids run on this computer unless a Ray cluster's address is given: "
                           "then their cells run on the cluster's nodes (each node needs "
                           "pip install 'rlm-studio[ray]'). API keys stay on this computer.", hint=True))
        self.ray_edit = QLineEdit(ray_address)
        self.ray_edit.setPlaceholderText("HOST:PORT, e.g. 10.0.0.5:6379 (empty: this computer)")
        self.ray_edit.setAccessibleName("Ray cluster address")
        form.addRow("Ray cluster", self.ray_edit)

    def ray_address(self) -> str:
        """HOST:PORT or "" (ValueError: anything else)."""
        text = self.ray_edit.text().strip()
        host, _, port = text.rpartition(":")
        if text and (not host or not port.isdigit() or not 0 < int(port) < 65536):
            raise ValueError(f"the Ray cluster address must be HOST:PORT (e.g. 127.0.0.1:6379), not {text!r}")
        return text


class AppearancePage(QWidget):
    def __init__(self, theme: str, parent=None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.group = QButtonGroup(self)
        self.buttons: dict[str, QRadioButton] = {}
        for name, text in (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark")):
            button = QRadioButton(text)
            self.group.addButton(button)
            self.buttons[name] = button
            layout.addWidget(button)
        self.buttons.get(theme, self.buttons["system"]).setChecked(True)
        layout.addStretch(1)

    def theme(self) -> str:
        return next(n for n, b in self.buttons.items() if b.isChecked())


class SettingsDialog(QDialog):
    def __init__(self, data: dict, providers: list[tuple[str, str]], parent=None,
                 ocr: OcrInfo | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        sized_to_screen(self, 820, 560)
        layout = QVBoxLayout(self)
        self.tabs = QTabWidget()
        self.keys_page = KeysPage(providers)
        self.models_page = ModelsPage(data)
        self.endpoints_page = EndpointsPage(data)
        self.caps_page = CapsPage(dict(data.get("caps") or {}))
        ingest = data.get("ingest")
        self.documents_page = DocumentsPage(ingest if isinstance(ingest, dict) else {}, ocr or OcrInfo())
        self.grid_page = GridPage(data.get("ray_address") or "")
        self.appearance_page = AppearancePage(data.get("theme") or "system")
        for page, title in ((self.keys_page, "Keys"), (self.models_page, "Models"),
                            (self.endpoints_page, "Endpoints"), (self.caps_page, "Caps"),
                            (self.documents_page, "Documents"), (self.grid_page, "Grid"),
                            (self.appearance_page, "Appearance")):
            self.tabs.addTab(page, title)
        layout.addWidget(self.tabs, 1)
        self.error_label = _label("")
        self.error_label.hide()
        layout.addWidget(self.error_label)
        self.button_box = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                           | QDialogButtonBox.StandardButton.Cancel)
        self.button_box.accepted.connect(self._on_save)
        self.button_box.rejected.connect(self.reject)
        layout.addWidget(self.button_box)

    def show_page(self, page: str) -> None:
        if page in PAGES:
            self.tabs.setCurrentIndex(PAGES.index(page))

    def values(self) -> dict:
        """The settings fields this dialog owns, as edited (raises ValueError on bad input)."""
        return {"root_model": self.models_page.root_edit.text().strip(),
                "sub_model": self.models_page.sub_edit.text().strip(),
                "sub_call_models": self.models_page.sub_call_models(),
                "models": self.models_page.models(),
                "endpoints": self.endpoints_page.endpoints(),
                "caps": self.caps_page.caps(),
                "ingest": self.documents_page.ingest(),
                "ray_address": self.grid_page.ray_address(),
                "theme": self.appearance_page.theme()}

    def _on_save(self) -> None:
        try:
            self.values()
        except ValueError as exc:
            self.show_error(f"Please check the values: {exc}")
            return
        self.accept()

    def show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))

