"""CallTreeView: the tree of every call of a run (a QTreeView over CallTreeModel).

Uniform row heights keep it fast with thousands of nodes; the run's RLM row is
expanded as soon as it appears; `node_selected(str)` names the chosen node. The Call
column widens to the widest label it has shown (indent included), so an id such as
"llm R.s3.s12" is never cut to "llm …"; the tree scrolls sideways instead.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QModelIndex, QPersistentModelIndex, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeView, QWidget

from ui.call_tree_model import (COL_CALL, COL_COST, COL_KIND, COL_LATENCY, COL_PROMPT, COL_STATUS,
                                 COL_TOKENS, COLUMNS, NODE_ID_ROLE, CallTreeModel)

AUTO_EXPAND_DEPTH = 2      # the RLM, its turns and their cells
_WIDTHS = {COL_CALL: 150, COL_STATUS: 64, COL_TOKENS: 96, COL_COST: 64, COL_LATENCY: 60,
           COL_KIND: 44, COL_PROMPT: 260}


class CallTreeView(QTreeView):
    node_selected = Signal(str)

    def __init__(self, model: CallTreeModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("callTree")
        self.setAccessibleName("Call tree")
        self.setUniformRowHeights(True)
        self.setIndentation(14)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setModel(model)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._set_widths()
        model.rowsInserted.connect(self._expand_rlm)
        model.modelReset.connect(self._expand_root)
        self._seen: set[int] = set()        # the serials of the rows whose values were seen
        model.dataChanged.connect(self._new_rows)
        # The model's clear() (another run) makes its columns again, at Qt's default width.
        model.columnsInserted.connect(lambda parent, *_: None if parent.isValid() else self._set_widths())
        self.selectionModel().selectionChanged.connect(self._on_selection)

    def tree_model(self) -> CallTreeModel:
        model = self.model()
        assert isinstance(model, CallTreeModel)
        return model

    def selected_id(self) -> str | None:
        indexes = self.selectionModel().selectedRows()
        return indexes[0].data(NODE_ID_ROLE) if indexes else None

    def select_node(self, node_id: str) -> bool:
        index = self.tree_model().index_for(node_id)
        if not index.isValid():
            return False
        self.scrollTo(index)
        self.setCurrentIndex(index)
        return True

    def _expand_rlm(self, parent: QModelIndex, first: int, last: int) -> None:
        """The run's RLM row appeared: open it (its turns and cells open as they are
        written, in _new_rows: a row is inserted empty and gets its values after)."""
        model = self.tree_model()
        if not parent.isValid():
            self.expandRecursively(model.index(0, 0), AUTO_EXPAND_DEPTH)

    def _set_widths(self) -> None:
        for col in range(len(COLUMNS)):
            self.setColumnWidth(col, _WIDTHS.get(col, 80))

    def call_width_needed(self, index: QModelIndex | QPersistentModelIndex) -> int:
        """The Call column's width that shows `index`'s label whole: its indent, the
        branch mark and the text."""
        level, parent = 1, index.parent()
        while parent.isValid():
            level, parent = level + 1, parent.parent()
        text = index.siblingAtColumn(COL_CALL).data() or ""
        return level * self.indentation() + self.fontMetrics().horizontalAdvance(str(text)) + 16

    def _new_rows(self, first: QModelIndex, last: QModelIndex) -> None:
        """Rows got their values. Those not seen before:
        the top-level RLM's turns and cells open, so its sub-calls show as they start
        (nested RLMs stay closed until opened), and the Call column widens to the widest
        label, never narrowing (a user's wider column stays)."""
        if first.column() > COL_CALL:
            return
        model, parent = self.tree_model(), first.parent()
        need = 0
        for row in range(first.row(), last.row() + 1):
            index = model.index(row, COL_CALL, parent)
            node = model.node(index)
            if node is None or node.serial in self._seen:
                continue                   # an update of a row already seen
            self._seen.add(node.serial)
            need = max(need, self.call_width_needed(index))
            if node.depth == 0 and node.kind in ("turn", "cell"):
                self.expand(index)
        if need > self.columnWidth(COL_CALL):
            self.setColumnWidth(COL_CALL, need)

    def _expand_root(self) -> None:
        self._seen.clear()
        model = self.tree_model()
        if model.rowCount() > 0:
            self.expandRecursively(model.index(0, 0), AUTO_EXPAND_DEPTH)

    def _on_selection(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        node_id = self.selected_id()
        if node_id is not None:
            self.node_selected.emit(node_id)
