"""The welcome view: what the app does, what is ready (keys, local model
servers), and the samples. Shown in place of the run panes on the first start
and from the toolbar's Welcome button later.

It only shows things and emits intents; app/first_run_glue.py does the work
(discovery, settings, loading the samples). Servers are any objects with
`found`, `label`, `name`, `port`, `base_url`, `models` and `error`
(core.discovery.LocalServer).
"""

from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QFrame, QGridLayout, QHBoxLayout, QLabel, QPushButton, QScrollArea,
    QSizePolicy, QVBoxLayout, QWidget,
)

from ui import icons
from ui.plain_text import plain

INTRO = (
    "Ask questions about a folder of documents: reports, logs, tables, PDFs, e-mails.",
    "A root model writes small Python programs that read your documents piece by piece and hand "
    "pieces to a sub model, so the documents never have to fit into one prompt.",
    "You watch every step and what it costs, the dollar cap is never passed, and every run is "
    "kept for replay.",
)
PRIVACY = ("Nothing has been sent anywhere: the check above only asked programs on this "
           "computer (127.0.0.1). Documents go to a model only when you press Run.")


def _label(text: str = "", name: str = "", wrap: bool = True) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if name:
        label.setObjectName(name)
    return label


def _clear(grid: QGridLayout) -> None:
    while grid.count():
        item = grid.takeAt(0)
        if item.widget() is not None:
            item.widget().deleteLater()


class WelcomeView(QScrollArea):
    use_server = Signal(object, str)     # (server, model id): add the endpoint and select the model
    undo_requested = Signal()            # undo the last "Use this"
    use_model = Signal(str)              # a cloud model of a provider whose key is there
    try_samples = Signal(str)            # the suggested question to fill in
    rescan_requested = Signal()
    keys_requested = Signal()            # open Settings > Keys
    endpoints_requested = Signal()       # open Settings > Endpoints (a server on another port or host)
    guide_requested = Signal()
    close_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomeView")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget()
        body.setObjectName("welcomeBody")
        outer = QHBoxLayout(body)
        column = QWidget()
        column.setMaximumWidth(820)
        outer.addStretch(1)
        outer.addWidget(column, 20)
        outer.addStretch(1)
        layout = QVBoxLayout(column)
        layout.setSpacing(10)

        title = _label("Welcome to RLM Studio", "welcomeTitle")
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        title.setFont(font)
        layout.addWidget(title)
        self.intro_labels = [_label(line) for line in INTRO]
        for label in self.intro_labels:
            layout.addWidget(label)

        layout.addWidget(self._heading("1. What is ready"))
        keys_row = QHBoxLayout()
        self.keys_label = _label("Looking in the keychain…")
        self.keys_button = QPushButton("Add a key…")
        self.keys_button.setAccessibleName("Add an API key in Settings")
        icons.bind(self.keys_button, "key")
        self.keys_button.clicked.connect(self.keys_requested)
        self.model_button = QPushButton()
        self.model_button.hide()
        self.model_button.clicked.connect(lambda: self.use_model.emit(self.model_button.property("model")))
        keys_row.addWidget(self.keys_label, 1)
        keys_row.addWidget(self.model_button, 0, Qt.AlignmentFlag.AlignTop)
        keys_row.addWidget(self.keys_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(keys_row)

        # The user's own endpoints first, each with whether it answered.
        self.endpoints_label = _label("")
        self.endpoints_label.hide()
        layout.addWidget(self.endpoints_label)
        self.endpoints_box = QWidget()
        self.endpoints_grid = QGridLayout(self.endpoints_box)
        self.endpoints_grid.setContentsMargins(12, 0, 0, 0)
        self.endpoints_box.hide()
        layout.addWidget(self.endpoints_box)
        self._configured: set[str] = set()

        servers_head = QHBoxLayout()
        self.servers_label = _label("Looking for model servers on this computer…")
        self.rescan_button = QPushButton("Look again")
        self.rescan_button.setAccessibleName("Look again for local model servers")
        icons.bind(self.rescan_button, "search")
        self.rescan_button.clicked.connect(self.rescan_requested)
        servers_head.addWidget(self.servers_label, 1)
        servers_head.addWidget(self.rescan_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(servers_head)
        self.servers_box = QWidget()
        self.servers_grid = QGridLayout(self.servers_box)
        self.servers_grid.setContentsMargins(12, 0, 0, 0)
        layout.addWidget(self.servers_box)
        self.missing_label = _label("", "hint")
        layout.addWidget(self.missing_label)
        other_row = QHBoxLayout()
        self.other_server_label = _label(
            "A server on another port or another computer (LM Studio on 5001, a vLLM box, a "
            "company gateway)? Add its URL in Settings > Endpoints, e.g. http://127.0.0.1:5001/v1: "
            "Test connection checks it and Fetch models lists its models.", "hint")
        self.endpoints_button = QPushButton("Add a server…")
        self.endpoints_button.setAccessibleName("Add a model server in Settings > Endpoints")
        self.endpoints_button.setToolTip("Open Settings > Endpoints")
        icons.bind(self.endpoints_button, "settings")
        self.endpoints_button.clicked.connect(self.endpoints_requested)
        other_row.addWidget(self.other_server_label, 1)
        other_row.addWidget(self.endpoints_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(other_row)
        selected_row = QHBoxLayout()
        self.selected_label = _label("", "welcomeSelected")
        self.selected_label.hide()
        self.undo_button = QPushButton("Undo")
        self.undo_button.setAccessibleName("Undo Use this")
        self.undo_button.setToolTip("Remove what Use this added and pick the models picked before")
        self.undo_button.clicked.connect(self.undo_requested)
        self.undo_button.hide()
        selected_row.addWidget(self.selected_label, 1)
        selected_row.addWidget(self.undo_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(selected_row)

        layout.addWidget(self._heading("2. Try it on the samples"))
        self.samples_label = _label("")
        layout.addWidget(self.samples_label)
        samples_row = QHBoxLayout()
        self.question_combo = QComboBox()
        self.question_combo.setAccessibleName("Suggested question")
        self.question_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.question_combo.setMinimumContentsLength(30)
        self.question_combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.samples_button = QPushButton("Try the samples")
        self.samples_button.setObjectName("runButton")
        icons.bind(self.samples_button, "open")
        self.samples_button.setToolTip("Load the sample documents into Sources and fill in the question")
        self.samples_button.clicked.connect(
            lambda: self.try_samples.emit(self.question_combo.currentData() or ""))
        samples_row.addWidget(self.question_combo, 1)
        samples_row.addWidget(self.samples_button)
        layout.addLayout(samples_row)

        layout.addWidget(self._heading("3. Or use your own documents"))
        layout.addWidget(_label("Drop files or folders on Sources (left), type a question, pick the "
                                "models and press Run (Ctrl+Enter). After the answer you can ask a "
                                "follow-up about the same documents."))
        bottom = QHBoxLayout()
        self.guide_button = QPushButton("Guide: caps and models")
        icons.bind(self.guide_button, "info")
        self.guide_button.clicked.connect(self.guide_requested)
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip("Close this page (the toolbar's Welcome brings it back)")
        self.close_button.setAccessibleName("Close the welcome page")
        self.close_button.clicked.connect(self.close_requested)
        bottom.addWidget(self.guide_button)
        bottom.addStretch(1)
        bottom.addWidget(self.close_button)
        layout.addLayout(bottom)
        layout.addWidget(_label(PRIVACY, "hint"))
        layout.addStretch(1)
        self.setWidget(body)
        self._server_rows: list[tuple[Any, QComboBox, QPushButton]] = []

    def _heading(self, text: str) -> QLabel:
        label = _label(text, "paneTitle", wrap=False)
        return label

    # --- what is ready ---------------------------------------------------------
    def set_keys(self, keys: Sequence[tuple[str, str]], problem: str = "", suggestion: str = "") -> None:
        """keys: (provider, where: "keychain" / "env:OPENAI_API_KEY"); suggestion: a cheap
        model of one of them, offered with a "Use" button."""
        self.model_button.setProperty("model", suggestion)
        self.model_button.setText(f"Use {suggestion}")
        self.model_button.setAccessibleName(f"Use {suggestion} as root and sub model")
        self.model_button.setToolTip("Pick it as root and sub model (a $1.00 cap is set if there is none)")
        self.model_button.setVisible(bool(suggestion))
        if keys:
            names = ", ".join(f"{p} ({'keychain' if s == 'keychain' else s.removeprefix('env:')})"
                              for p, s in keys)
            self.keys_label.setText(f"API keys: {names}. Cloud models of these providers are ready.")
            self.keys_button.setText("Keys…")
        elif problem:
            self.keys_label.setText(f"No API keys, and the keychain cannot store any: {problem}. "
                                    "A local model server (below) needs no key.")
        else:
            self.keys_label.setText("No API keys yet. Add one for OpenAI, Anthropic, Gemini and "
                                    "others, or use a model server on this computer (below): it "
                                    "needs no key and costs nothing.")

    def set_scanning(self) -> None:
        self.servers_label.setText("Looking for model servers on this computer "
                                   "(Ollama, LM Studio, llama.cpp, vLLM)…")
        self.rescan_button.setEnabled(False)

    def set_endpoints(self, rows: Sequence[tuple[str, str, str, bool]]) -> None:
        """The endpoints of Settings > Endpoints, first: (name, URL, state, answered).
        A server found on this computer at one of these URLs is not offered again below."""
        _clear(self.endpoints_grid)
        self._configured = {url.rstrip("/") for _name, url, _state, _ok in rows}
        for row, (name, url, state, ok) in enumerate(rows):
            mark = QLabel("✔" if ok else "✖")
            mark.setObjectName("hint" if ok else "warning")
            text = _label(f"<b>{plain(name)}</b> · {plain(url)} · {plain(state)}")
            text.setAccessibleName(f"Endpoint {name}: {state}")
            self.endpoints_grid.addWidget(mark, row, 0, Qt.AlignmentFlag.AlignTop)
            self.endpoints_grid.addWidget(text, row, 1)
        self.endpoints_grid.setColumnStretch(1, 1)
        count = len(rows)
        self.endpoints_label.setText(
            f"Your model server{'s' if count != 1 else ''} (Settings > Endpoints):")
        self.endpoints_label.setVisible(bool(rows))
        self.endpoints_box.setVisible(bool(rows))

    def endpoint_rows(self) -> list[str]:
        """The endpoint lines as shown (for the tests and screen readers)."""
        return [w.accessibleName() for w in self.endpoints_box.findChildren(QLabel) if w.accessibleName()]

    def set_servers(self, servers: Sequence[Any]) -> None:
        _clear(self.servers_grid)
        self._server_rows = []
        found = [s for s in servers if s.found and s.base_url.rstrip("/") not in self._configured]
        missing = [s for s in servers if not s.found]
        self.rescan_button.setEnabled(True)
        if found:
            self.servers_label.setText(("Other model servers" if self._configured else "Model servers")
                                       + " found on this computer (no key, no cost):")
        elif self._configured:
            self.servers_label.setText("No other model server runs on this computer.")
        else:
            self.servers_label.setText("No model server runs on this computer. Start Ollama, LM Studio, "
                                       "llama.cpp or vLLM and press Look again, or add an API key.")
        for row, server in enumerate(found):
            count = len(server.models)
            text = f"<b>{server.label}</b> · {count} model{'s' if count != 1 else ''}" if count else \
                f"<b>{server.label}</b> · it lists no models"
            label = _label(text, wrap=False)
            label.setToolTip(plain(server.base_url))
            combo = QComboBox()
            combo.setAccessibleName(f"Model of {server.label}")
            combo.addItems(list(server.models))
            combo.setEnabled(count > 0)
            button = QPushButton("Use this")
            button.setAccessibleName(f"Use {server.label}")
            button.setToolTip(f"Adds this server to Settings > Endpoints as “{server.endpoint_name}” "
                              "with its models marked free, and picks a root and a sub model from "
                              "it (Undo takes it back)")
            button.setEnabled(count > 0)
            button.clicked.connect(lambda _=False, s=server, c=combo: self.use_server.emit(s, c.currentText()))
            self.servers_grid.addWidget(label, row, 0)
            self.servers_grid.addWidget(combo, row, 1)
            self.servers_grid.addWidget(button, row, 2)
            self._server_rows.append((server, combo, button))
        self.servers_grid.setColumnStretch(1, 1)
        self.servers_box.setVisible(bool(found))
        if missing:
            names = ", ".join(f"{s.name} ({s.port})" for s in missing)
            self.missing_label.setText(f"Not running here: {names}.")
            self.missing_label.setToolTip(plain("\n".join(f"{s.label}: {s.error}" for s in missing)))
        else:
            self.missing_label.setText("")

    def server_rows(self) -> list[tuple[Any, QComboBox, QPushButton]]:
        return list(self._server_rows)

    def set_selected(self, text: str, undo: bool = False) -> None:
        """What the last choice did, with an Undo button when it can be taken back."""
        self.selected_label.setText(text)
        self.selected_label.setVisible(bool(text))
        self.undo_button.setVisible(bool(text) and undo)

    # --- samples -----------------------------------------------------------------
    def set_samples(self, description: str, questions: Sequence[str]) -> None:
        self.samples_label.setText(description)
        self.question_combo.clear()
        for q in questions:
            self.question_combo.addItem(q if len(q) <= 110 else q[:108] + "…", q)
            self.question_combo.setItemData(self.question_combo.count() - 1, plain(q), Qt.ItemDataRole.ToolTipRole)
        self.samples_button.setEnabled(bool(questions))

    def set_samples_missing(self, reason: str) -> None:
        self.samples_label.setText(f"The samples are missing from this installation ({reason}).")
        self.samples_button.setEnabled(False)
