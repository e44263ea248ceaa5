"""The model picker: an editable combo box of model ids with their prices."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QComboBox, QTreeView

MODEL_ID_ROLE = Qt.ItemDataRole.UserRole + 1


@dataclass(frozen=True)
class ModelChoice:
    id: str
    price: str = ""        # e.g. "$0.15 / $0.60 per M" or "free"
    detail: str = ""       # tooltip: provider, context window, where the price comes from

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
        return cls(entry.id, text, detail)



class ModelPicker(QComboBox):
    """Editable combo box of model ids; the popup shows the price per M tokens.
    Emits `opening` before the popup shows, so the catalog can load lazily."""

    opening = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.setMinimumContentsLength(18)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self._model = QStandardItemModel(0, 2, self)
        self.setModel(self._model)
        view = QTreeView()
        view.setHeaderHidden(True)
        view.setRootIsDecorated(False)
        view.setItemsExpandable(False)
        view.setAllColumnsShowFocus(True)
        view.setMinimumWidth(480)
        view.setStyleSheet("QTreeView::item { padding: 3px 8px; }")
        self.setView(view)
        self.setModelColumn(0)
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
        edit.setToolTip(name if cut else "")

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
        self._model.removeRows(0, self._model.rowCount())
        for choice in choices:
            name = QStandardItem(choice.id)
            name.setData(choice.id, MODEL_ID_ROLE)
            price = QStandardItem(choice.price)
            price.setForeground(self.palette().placeholderText())
            for item in (name, price):
                item.setToolTip(choice.detail or choice.id)
                item.setEditable(False)
            self._model.appendRow([name, price])
        self.set_model_id(current)

    def choices(self) -> list[str]:
        return [self._model.item(r, 0).text() for r in range(self._model.rowCount())]

    def price_of(self, model_id: str) -> str:
        for r in range(self._model.rowCount()):
            if self._model.item(r, 0).text() == model_id:
                return self._model.item(r, 1).text()
        return ""

    def model_id(self) -> str:
        return self.currentText().strip()

    def set_model_id(self, model_id: str) -> None:
        index = self.findText(model_id, Qt.MatchFlag.MatchExactly)
        if index >= 0:
            self.setCurrentIndex(index)
        self.setEditText(model_id)
