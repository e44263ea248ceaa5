"""ModelPicker: a searchable model picker, local models first, cloud models by provider.

    picker = ModelPicker()
    picker.set_choices([ModelChoice("lab/coder-7b", "free", local=True),
                        ModelChoice("openai/gpt-4o-mini", "$0.15 in · $0.6 out per M", provider="openai")])
    picker.model_id()                 # "lab/coder-7b": the name as the user picked it

An editable combo box. Its list shows the models under headers: "Your servers" (the
endpoints of Settings > Endpoints and other local models) first, then one header per cloud
provider (OpenAI, Anthropic, ...), each model with its price per M tokens. Typing filters: a
list of the model ids that contain what was typed (any case) drops down under the field,
over thousands of litellm ids. Headers cannot be picked. Emits `opening` before the list
shows, so the catalog can load lazily. What is shown and returned is the id the user picked
(an endpoint's `lab/coder-7b`), never the routed name litellm is given (`openai/coder-7b`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QObject, QStringListModel, Qt, QTimer, Signal
from PySide6.QtWidgets import QAbstractButton, QApplication, QComboBox, QCompleter, QTreeView, QWidget

from ui.plain_text import plain

MODEL_ID_ROLE = Qt.ItemDataRole.UserRole + 1
HEADER_ROLE = Qt.ItemDataRole.UserRole + 2
LOCAL_GROUP = "Your servers and local models"
_CHOICE_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_HEADER_FLAGS = Qt.ItemFlag.NoItemFlags
# Cloud providers in this order (the ones analysts use most first), then the others A-Z.
PROVIDER_ORDER = ("ollama", "openai", "anthropic", "gemini", "openrouter", "groq", "mistral",
                  "deepseek", "together", "xai", "azure", "cohere", "fireworks", "perplexity")


@dataclass(frozen=True)
class ModelChoice:
    id: str
    price: str = ""        # e.g. "$0.15 / $0.60 per M" or "free"
    detail: str = ""       # tooltip: provider, context window, where the price comes from
    provider: str = ""     # core.providers name or endpoint name ("": the id's prefix)
    local: bool = False    # an endpoint of the settings or a server on this computer

    @classmethod
    def of_entry(cls, entry, price: tuple[float, float] | None = None) -> "ModelChoice":
        """A row for a catalog ModelEntry; `price` (in, out per M) overrides its own."""
        src = entry.source
        inp, out = entry.input_per_m, entry.output_per_m
        if price is not None:
            (inp, out), src = price, "settings"
        if inp is None or out is None:
            text = "price unknown"
        elif inp == 0 and out == 0:
            text = "free"
        else:
            text = f"${inp:g} in · ${out:g} out per M"
        detail = f"{entry.id}\nprovider: {entry.provider or '?'}\nprice from: {src}"
        if entry.context_window:
            detail += f"\ncontext window: {entry.context_window:,} tokens"
        local = entry.source in ("endpoint", "remote")     # litellm's ollama/* ids: under "Ollama"
        return cls(entry.id, text, detail, provider=entry.provider or "", local=local)

    @property
    def group(self) -> str:
        """The provider it is listed under ("" for local models)."""
        if self.local:
            return ""
        prefix = self.id.partition("/")[0] if "/" in self.id else ""
        return (self.provider or prefix or "other").lower()


def provider_title(name: str) -> str:
    """"openai" -> "OpenAI" (the names of core/providers.py), else the name itself."""
    from core.providers import get
    known = get(name)
    return known.display if known is not None else name


def ordered(choices: list[ModelChoice]) -> list[tuple[str, list[ModelChoice]]]:
    """(group title, its choices): local models first as given, then providers in
    PROVIDER_ORDER and the rest A-Z, each provider's models A-Z. An id listed twice
    keeps its first row."""
    seen: set[str] = set()
    groups: dict[str, list[ModelChoice]] = {}
    for choice in choices:
        if not choice.id or choice.id in seen:
            continue
        seen.add(choice.id)
        groups.setdefault(choice.group, []).append(choice)
    rank = {name: i for i, name in enumerate(PROVIDER_ORDER)}
    names = sorted((g for g in groups if g), key=lambda g: (rank.get(g, len(rank)), g))
    out = [(LOCAL_GROUP, groups[""])] if "" in groups else []
    out += [(provider_title(g), sorted(groups[g], key=lambda c: c.id.lower())) for g in names]
    return out


class ChoicesModel(QAbstractTableModel):
    """The picker's list as a thin adapter: rows are group headers (a title) or choices;
    columns are the id and the price. Nothing is built per row, so refilling with
    litellm's 3,500 models costs a sort, and Qt asks only for the rows it shows."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[str | ModelChoice] = []      # str: a header
        self.row_of: dict[str, int] = {}             # model id -> row
        self.dim: Any = None                         # the price column's brush
        self._bold: Any = None

    def set_groups(self, groups: list[tuple[str, list[ModelChoice]]]) -> None:
        self.beginResetModel()
        self.rows = [item for title, members in groups for item in (title, *members)]
        self.row_of = {item.id: i for i, item in enumerate(self.rows) if not isinstance(item, str)}
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else 2

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        # a header: shown, never picked (Qt asks every row when the list is reset)
        return _HEADER_FLAGS if self.rows[index.row()].__class__ is str else _CHOICE_FLAGS

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        item, column = self.rows[index.row()], index.column()
        if isinstance(item, str):
            if role == HEADER_ROLE:
                return True
            if role == Qt.ItemDataRole.FontRole:
                if self._bold is None:
                    from PySide6.QtGui import QFont
                    self._bold = QFont()
                    self._bold.setBold(True)
                return self._bold
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
                return item if column == 0 else ""
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return item.id if column == 0 else item.price
        if role == MODEL_ID_ROLE:
            return item.id
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain(item.detail or item.id)
        if role == Qt.ItemDataRole.ForegroundRole and column == 1:
            return self.dim
        return None


class ClickThrough(QObject):
    """A click outside the type-ahead list closes it and still reaches the button under
    the pointer: typing a model name and pressing Run starts the run at the first click
    (QCompleter's own filter hides the list and swallows the click)."""

    def __init__(self, popup: QWidget) -> None:
        super().__init__(popup)
        popup.installEventFilter(self)          # after QCompleter's: this one is asked first

    def eventFilter(self, popup, event) -> bool:
        if event.type() == QEvent.Type.MouseButtonPress and popup.isVisible() \
                and not popup.rect().contains(event.position().toPoint()):
            target = QApplication.widgetAt(event.globalPosition().toPoint())
            popup.hide()
            if isinstance(target, QAbstractButton) and target.isEnabled() and target.window() is not popup:
                QTimer.singleShot(0, target, target.click)
            return True
        return super().eventFilter(popup, event)


class ModelPicker(QComboBox):
    """Editable combo box of model ids under group headers; typing filters (see the module)."""

    opening = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.setMinimumContentsLength(18)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self._model = ChoicesModel(self)
        self.setModel(self._model)
        view = QTreeView()
        view.setHeaderHidden(True)
        view.setRootIsDecorated(False)
        view.setItemsExpandable(False)
        view.setAllColumnsShowFocus(True)
        view.setUniformRowHeights(True)      # 3,500 rows: no per-row height to ask
        view.setMinimumWidth(480)
        view.setStyleSheet("QTreeView::item { padding: 3px 8px; }")
        self.setView(view)
        self.setModelColumn(0)
        self._ids = QStringListModel(self)
        completer = QCompleter(self._ids, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        completer.setMaxVisibleItems(14)
        self.setCompleter(completer)
        self._click_through = ClickThrough(completer.popup())
        self._choices: list[ModelChoice] = []
        self.editTextChanged.connect(self._tip_if_cut)

    def _tip_if_cut(self, *_args) -> None:
        """A name longer than the box has room for is its line edit's tooltip (the
        box's own tooltip, which says what the model is for, shows otherwise)."""
        edit = self.lineEdit()
        if edit is None:
            return
        name = self.currentText()
        margins = edit.textMargins().left() + edit.textMargins().right() + 8
        cut = edit.fontMetrics().horizontalAdvance(name) + margins > edit.width()
        edit.setToolTip(plain(name) if cut else "")

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._tip_if_cut()

    def showPopup(self) -> None:
        self.opening.emit()
        view = self.view()
        view.resizeColumnToContents(0)
        view.resizeColumnToContents(1)
        view.setMinimumWidth(max(480, self.width(), view.columnWidth(0) + view.columnWidth(1) + 40))
        super().showPopup()

    def set_choices(self, choices: list[ModelChoice]) -> None:
        current = self.model_id()
        groups = ordered(list(choices))
        self._choices = [c for _title, members in groups for c in members]
        self._model.dim = self.palette().placeholderText()
        self.blockSignals(True)          # refilling is not a pick: the text is put back below
        try:
            self._model.set_groups(groups)
            self._ids.setStringList([c.id for c in self._choices])
        finally:
            self.blockSignals(False)
        self.set_model_id(current)

    def all_choices(self) -> list[ModelChoice]:
        """The choices in the order listed (headers left out)."""
        return list(self._choices)

    def choices(self) -> list[str]:
        return [c.id for c in self._choices]

    def groups(self) -> list[tuple[str, list[str]]]:
        """(header, model ids) as the list shows them."""
        out: list[tuple[str, list[str]]] = []
        for item in self._model.rows:
            if isinstance(item, str):
                out.append((item, []))
            elif out:
                out[-1][1].append(item.id)
        return out

    def matches(self, text: str) -> list[str]:
        """The ids that typing `text` lists under the field."""
        completer = self.completer()
        completer.setCompletionPrefix(text)
        found = completer.completionModel()
        return [found.index(r, 0).data() for r in range(found.rowCount())]

    def price_of(self, model_id: str) -> str:
        return next((c.price for c in self._choices if c.id == model_id), "")

    def model_id(self) -> str:
        return self.currentText().strip()

    def set_model_id(self, model_id: str) -> None:
        index = self._model.row_of.get(model_id, -1)   # not findData: it asks every row
        self.setCurrentIndex(index)          # -1 (no row, never a header) for a typed id
        self.setEditText(model_id)
        if self.lineEdit() is not None and not self.lineEdit().hasFocus():
            self.lineEdit().setCursorPosition(0)     # a narrow box shows the id's start ("ollama/qw…")
