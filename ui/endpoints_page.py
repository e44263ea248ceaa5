"""Settings > Endpoints: the user's OpenAI-compatible servers, one form each.

A list of endpoints on the left; the selected one's form on the right: Name, URL, whether it
needs a key (and the key, saved to the keychain on Save), its models as a list, and whether
they are free. Test connection and Fetch models emit intents with the URL and key; the glue
(app/settings_glue.py) asks the server in the background and calls show_check().

    page = EndpointsPage({"endpoints": [{"name": "lab", "base_url": "http://127.0.0.1:1234/v1"}]})
    page.endpoints()        # [{"name", "base_url", "needs_key", "models", "runs_here"}]
    page.typed_keys()       # {"lab": "sk-..."}: keys typed here, for the keychain
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
    QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget,
)

URL_PLACEHOLDER = "http://127.0.0.1:1234/v1"
# Asked once per endpoint: do its models run on this computer (free) or are they paid?
# None: not said yet; shown as the default for its address (core/endpoint_cost.py).
ENDPOINT_COSTS = (("free", "Free: runs on this computer or my network", True),
                  ("paid", "Paid: give its models prices in Models", False))


def _hint(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setObjectName("hint")
    return label


def _free_by_address(url: str) -> bool:
    from core.endpoint_cost import by_address
    return by_address(url)


class EndpointsPage(QWidget):
    test_requested = Signal(str, str)      # url, key ("": the stored one, if any)
    fetch_requested = Signal(str, str)

    def __init__(self, data: dict, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[dict[str, Any]] = []
        self._loading = False
        layout = QVBoxLayout(self)
        layout.addWidget(_hint(
            "Your own OpenAI-compatible servers (LM Studio, Ollama, llama.cpp, vLLM, a company "
            "gateway), on this computer or another. A model is then picked as <name>/<model id>, "
            "e.g. lab/qwen2.5-coder."))
        body = QHBoxLayout()
        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.setAccessibleName("Endpoints")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.currentRowChanged.connect(self._show_row)
        left.addWidget(self.list, 1)
        row_buttons = QHBoxLayout()
        self.add_button = QPushButton("Add endpoint")
        self.add_button.clicked.connect(lambda: self.add_row({}))
        self.remove_button = QPushButton("Remove")
        self.remove_button.setAccessibleName("Remove endpoint")
        self.remove_button.clicked.connect(self._remove_current)
        row_buttons.addWidget(self.add_button)
        row_buttons.addWidget(self.remove_button)
        left.addLayout(row_buttons)
        body.addLayout(left, 2)

        self.form_box = QWidget()
        form = QFormLayout(self.form_box)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("lab (models are then lab/<model id>)")
        self.name_edit.setAccessibleName("Endpoint name")
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText(URL_PLACEHOLDER)
        self.url_edit.setAccessibleName("Endpoint URL")
        self.url_edit.setToolTip("The OpenAI-compatible base URL, usually ending in /v1. "
                                 "LM Studio: port 1234, Ollama: 11434, llama.cpp: 8080, vLLM: 8000.")
        self.needs_key = QCheckBox("Needs a key")
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("only if the server asks for one; kept in the keychain")
        self.key_edit.setAccessibleName("Endpoint key")
        self.cost_combo = QComboBox()
        self.cost_combo.setAccessibleName("Cost of its models")
        for key, label, _free in ENDPOINT_COSTS:
            self.cost_combo.addItem(label, key)
        self.cost_combo.setToolTip("Local servers (loopback or private addresses) are free by default; "
                                   "a proxy or gateway to a paid API is not: mark it Paid and give its "
                                   "models prices.")
        form.addRow("Name", self.name_edit)
        form.addRow("URL", self.url_edit)
        form.addRow("", self.needs_key)
        form.addRow("Key", self.key_edit)
        form.addRow("Cost", self.cost_combo)
        checks = QHBoxLayout()
        self.test_button = QPushButton("Test connection")
        self.test_button.setToolTip("Asks GET <URL>/models with the key, and says what came back")
        self.fetch_button = QPushButton("Fetch models")
        self.fetch_button.setToolTip("Fills the list below with the models the server lists")
        self.test_button.clicked.connect(lambda: self._ask(self.test_requested))
        self.fetch_button.clicked.connect(lambda: self._ask(self.fetch_requested))
        checks.addWidget(self.test_button)
        checks.addWidget(self.fetch_button)
        checks.addStretch(1)
        form.addRow("", checks)
        self.result_label = _hint("")
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("", self.result_label)
        self.models_list = QListWidget()
        self.models_list.setAccessibleName("Models of the endpoint")
        self.models_list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        form.addRow("Models", self.models_list)
        model_row = QHBoxLayout()
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("a model id, e.g. qwen2.5-coder-7b-instruct")
        self.model_edit.setAccessibleName("Model id to add")
        self.model_edit.returnPressed.connect(self._add_typed_model)
        self.add_model_button = QPushButton("Add")
        self.add_model_button.setAccessibleName("Add model")
        self.add_model_button.clicked.connect(self._add_typed_model)
        self.remove_model_button = QPushButton("Remove")
        self.remove_model_button.setAccessibleName("Remove model")
        self.remove_model_button.clicked.connect(self._remove_models)
        model_row.addWidget(self.model_edit, 1)
        model_row.addWidget(self.add_model_button)
        model_row.addWidget(self.remove_model_button)
        form.addRow("", model_row)
        body.addWidget(self.form_box, 5)
        layout.addLayout(body, 1)

        self.name_edit.textChanged.connect(lambda t: self._edit("name", t.strip()))
        self.url_edit.textChanged.connect(self._url_changed)
        self.needs_key.toggled.connect(lambda on: self._edit("needs_key", on))
        self.key_edit.textChanged.connect(lambda t: self._edit("key", t.strip()))
        self.cost_combo.activated.connect(self._cost_chosen)
        for endpoint in data.get("endpoints") or []:
            self.add_row(dict(endpoint))
        if self._rows:
            self.list.setCurrentRow(0)
        self._show_row(self.list.currentRow())

    # --- rows ---------------------------------------------------------------------
    def add_row(self, values: dict) -> int:
        """Add an endpoint (a new one when `values` is empty) and select it; its index."""
        url = str(values.get("base_url") or "")
        said = values.get("runs_here") is not None
        row = {"name": str(values.get("name") or ""), "base_url": url,
               "needs_key": bool(values.get("needs_key")), "models": list(values.get("models") or []),
               "runs_here": bool(values["runs_here"]) if said else (_free_by_address(url) if url else True),
               "said": said, "key": ""}
        self._rows.append(row)
        self.list.addItem(QListWidgetItem(self._title(row)))
        self.list.setCurrentRow(len(self._rows) - 1)
        if not values:
            self.name_edit.setFocus()
        return len(self._rows) - 1

    def current(self) -> int:
        return self.list.currentRow()

    def select(self, index: int) -> None:
        self.list.setCurrentRow(index)

    @staticmethod
    def _title(row: dict) -> str:
        name = row["name"] or "new endpoint"
        return f"{name} · {row['base_url']}" if row["base_url"] else name

    def _show_row(self, index: int) -> None:
        self.form_box.setEnabled(0 <= index < len(self._rows))
        self.remove_button.setEnabled(0 <= index < len(self._rows))
        row = self._rows[index] if 0 <= index < len(self._rows) else None
        self._loading = True
        try:
            self.name_edit.setText(row["name"] if row else "")
            self.url_edit.setText(row["base_url"] if row else "")
            self.needs_key.setChecked(bool(row and row["needs_key"]))
            self.key_edit.setText(row["key"] if row else "")
            self.cost_combo.setCurrentIndex(0 if row is None or row["runs_here"] else 1)
            self.models_list.clear()
            self.models_list.addItems(row["models"] if row else [])
            self.result_label.setText("")
        finally:
            self._loading = False

    def _edit(self, field: str, value: Any) -> None:
        index = self.list.currentRow()
        if self._loading or not 0 <= index < len(self._rows):
            return
        row = self._rows[index]
        row[field] = value
        self.list.item(index).setText(self._title(row))

    def _url_changed(self, text: str) -> None:
        """Until the user chooses, an endpoint's cost follows its address."""
        self._edit("base_url", text.strip())
        index = self.list.currentRow()
        if self._loading or not 0 <= index < len(self._rows) or self._rows[index]["said"]:
            return
        free = _free_by_address(text.strip())
        self._rows[index]["runs_here"] = free
        self.cost_combo.setCurrentIndex(0 if free else 1)

    def _cost_chosen(self, _i: int) -> None:
        self._edit("runs_here", self.cost_combo.currentData() == "free")
        self._edit("said", True)

    def _remove_current(self) -> None:
        index = self.list.currentRow()
        if 0 <= index < len(self._rows):
            del self._rows[index]
            self.list.takeItem(index)
            self._show_row(self.list.currentRow())

    # --- models ---------------------------------------------------------------------
    def models(self) -> list[str]:
        return [self.models_list.item(i).text() for i in range(self.models_list.count())]

    def add_models(self, names: list[str]) -> int:
        """Add model ids to the selected endpoint (known ones once); how many were new."""
        have = self.models()
        new = [n for n in dict.fromkeys(n.strip() for n in names) if n and n not in have]
        self.models_list.addItems(new)
        self._edit("models", self.models())
        return len(new)

    def _add_typed_model(self) -> None:
        names = [n for n in self.model_edit.text().replace(",", " ").split() if n]
        if not names:
            self.show_result(False, "Type a model id first.")
            return
        self.add_models(names)
        self.model_edit.clear()

    def _remove_models(self) -> None:
        for item in self.models_list.selectedItems():
            self.models_list.takeItem(self.models_list.row(item))
        self._edit("models", self.models())

    # --- checks ---------------------------------------------------------------------
    def _ask(self, signal: Any) -> None:
        url = self.url_edit.text().strip()
        if not url:
            self.show_result(False, f"Type the server's URL first, e.g. {URL_PLACEHOLDER}")
            return
        self.show_result(None, f"Asking {url.rstrip('/')}/models…")
        self.test_button.setEnabled(False)
        self.fetch_button.setEnabled(False)
        signal.emit(url, self.key_edit.text().strip())

    def show_check(self, check: Any, fetch: bool) -> None:
        """The answer to Test connection or Fetch models (a core.discovery.EndpointCheck)."""
        self.test_button.setEnabled(True)
        self.fetch_button.setEnabled(True)
        if not check.ok:
            self.show_result(False, check.summary())
            return
        text = check.summary()
        if fetch:
            added = self.add_models(list(check.models))
            text += f"; {added} added to the list" if added else "; the list has them all"
        elif check.models:
            text += ": " + ", ".join(check.models[:5]) + (", …" if len(check.models) > 5 else "")
        self.show_result(True, text)

    def show_result(self, ok: bool | None, text: str) -> None:
        mark = "" if ok is None else ("✔ " if ok else "✖ ")
        self.result_label.setText(mark + text)

    # --- values ---------------------------------------------------------------------
    def typed_keys(self) -> dict[str, str]:
        """Keys typed into the form, by endpoint name (for the keychain on Save)."""
        return {r["name"]: r["key"] for r in self._rows if r["name"] and r["key"]}

    def endpoints(self) -> list[dict]:
        from core.providers import is_valid_name
        out = []
        for row in self._rows:
            if not row["name"] and not row["base_url"] and not row["models"]:
                continue                      # an added row left empty
            if not row["name"]:
                raise ValueError(f"the endpoint at {row['base_url'] or '(no URL)'} needs a name")
            if not is_valid_name(row["name"]):
                raise ValueError(f"endpoint {row['name']!r}: use lower case letters, digits, '.', '_' "
                                 "and '-' in its name")
            if not row["base_url"].startswith(("http://", "https://")):
                raise ValueError(f"endpoint {row['name']}: the URL must start with http:// or https:// "
                                 f"(e.g. {URL_PLACEHOLDER})")
            out.append({"name": row["name"], "base_url": row["base_url"],
                        "needs_key": row["needs_key"] or bool(row["key"]),
                        "models": list(row["models"]), "runs_here": bool(row["runs_here"])})
        names = [e["name"] for e in out]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"two endpoints are called {', '.join(twice)}")
        return out
