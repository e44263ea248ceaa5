"""CallTreeModel: the call tree of a RunView as a Qt item model.

A thin adapter. The fold (core/runview.py) owns the nodes; this model copies what
the view shows of each node into Qt's own items (a QStandardItemModel), so laying
out and painting the tree never calls into Python: with the engine computing on
its own thread, every call from Qt into Python waits for the GIL, and a Python
item model is asked thousands of times per frame (index, parent, rowCount, data
for each row, on every layout and paint) once a run has hundreds of sub-calls.

`sync(updated)` appends the nodes the fold added since the last sync (in creation
order: parents before children) and rewrites the rows of the nodes in `updated`,
announcing those with one dataChanged per parent, over the rows from its first
changed child to its last. Item rows carry the node's serial number, not a
Python object.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QStandardItemModel

from core.runview import Node, RunView
from ui.plain_text import plain

NODE_ID_ROLE = Qt.ItemDataRole.UserRole + 1     # str: the node's call id
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2      # str: running|ok|error|refused|...
KIND_ROLE = Qt.ItemDataRole.UserRole + 3        # str: rlm|turn|cell|llm
COST_ROLE = Qt.ItemDataRole.UserRole + 4        # float: USD
TOKENS_ROLE = Qt.ItemDataRole.UserRole + 5      # [int, int]: input, output
SERIAL_ROLE = Qt.ItemDataRole.UserRole + 6      # int: the node's serial number in the fold

# The figures come right after the call, so they are on screen without scrolling.
COLUMNS = ("Call", "Status", "Tokens", "Cost", "Latency", "Model", "Kind", "Prompt")
(COL_CALL, COL_STATUS, COL_TOKENS, COL_COST, COL_LATENCY, COL_MODEL, COL_KIND, COL_PROMPT) = range(len(COLUMNS))
_RIGHT = {COL_TOKENS, COL_COST, COL_LATENCY}
FAILED = frozenset({"error", "syntax error", "timeout", "crash", "memory", "failed", "fault"})
HELD = frozenset({"refused", "cancelled", "capped", "waiting"})   # waiting: for budget (the cap)
_DISPLAY, _TIP, _FG = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole
_ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

Index = QModelIndex | QPersistentModelIndex


def _short(n: int) -> str:
    """Token counts that fit a narrow column: 812, 1.5k, 48k, 1.2M."""
    return f"{n:,}" if n < 1000 else f"{n / 1000:.1f}k" if n < 10_000 else \
        f"{n // 1000}k" if n < 1_000_000 else f"{n / 1_000_000:.1f}M"


class CallTreeModel(QStandardItemModel):
    """Python makes no QStandardItem: an item Python made is tied to a Python wrapper that
    outlives it when Qt deletes the item (a reset, the model's end), and the process
    crashed later (a segfault in the next test). Qt makes each item on its first setData."""

    def __init__(self, view: RunView | None = None, parent: QObject | None = None,
                 colors: dict[str, str] | None = None) -> None:
        super().__init__(parent)
        self._view = view or RunView()
        self._shown: list[tuple] = []                   # per node serial: the values its row shows
        self._colors: dict[str, QColor] = {}
        self.set_colors(colors or {"error": "#c53030", "warning": "#b7791f", "running": "#2f6fdd"})
        self._headers()
        self._adopt(self._view)

    # ---- feeding -------------------------------------------------------
    @property
    def view(self) -> RunView:
        return self._view

    def set_view(self, view: RunView) -> None:
        """Show another run (a model reset, once per run, not per event)."""
        self._shown = []
        self.clear()                     # one modelReset
        self._headers()
        self._adopt(view)

    def _adopt(self, view: RunView) -> None:
        self._view = view
        self._append(view.node_list)

    def _headers(self) -> None:
        self.setColumnCount(len(COLUMNS))
        self.setHorizontalHeaderLabels(list(COLUMNS))

    def set_colors(self, colors: dict[str, str]) -> None:
        self._colors = {k: QColor(v) for k, v in colors.items()}
        for serial in range(len(getattr(self, "_shown", ()))):
            node = self._view.node_list[serial]
            self.setData(self._index(node, COL_STATUS), self._status_color(node.status), _FG)

    def sync(self, updated: Iterable[str] = ()) -> None:
        """Append the nodes the fold added since the last sync, then rewrite the rows of
        the nodes in `updated` that the model already had."""
        nodes = self._view.node_list
        known = len(self._shown)
        if len(nodes) > known:
            self._append(nodes[known:])
        spans: dict[int, tuple[Node, Node]] = {}
        by_id = self._view.nodes
        self.blockSignals(True)          # one dataChanged per parent below, not one per item and role
        try:
            for node_id in updated:
                node = by_id.get(node_id)
                if node is None or node.serial >= known or not self._refresh(node):
                    continue             # just appended (it was built fresh), or unchanged
                key = node.parent.serial if node.parent is not None else -1
                span = spans.get(key)
                if span is None:
                    spans[key] = (node, node)
                elif node.row < span[0].row:
                    spans[key] = (node, span[1])
                elif node.row > span[1].row:
                    spans[key] = (span[0], node)
        finally:
            self.blockSignals(False)
        last_col = len(COLUMNS) - 1
        for first, last in spans.values():
            self.dataChanged.emit(self._index(first, 0), self._index(last, last_col))

    def _append(self, new: list[Node]) -> None:
        """Insert the rows of `new` (parents before children): one insert per parent, then
        their values set with the model's signals held and one dataChanged over them. The
        items are made by Qt (setData on an empty cell), never by Python."""
        groups: dict[int, list[Node]] = {}          # parent serial (-1: top) -> its new children
        for node in new:
            self._shown.append(())
            groups.setdefault(node.parent.serial if node.parent is not None else -1, []).append(node)
        last_col = len(COLUMNS) - 1
        nodes = self._view.node_list
        for serial, children in groups.items():     # a parent's group comes after its own row's
            parent = self._index(nodes[serial], 0) if serial >= 0 else QModelIndex()
            start = self.rowCount(parent)
            self.insertRows(start, len(children), parent)        # one rowsInserted
            self.blockSignals(True)
            try:
                index, set_cell = self.index, self.setItemData
                for i, node in enumerate(children):
                    row = start + i
                    cells: list[dict] = [{Qt.ItemDataRole.TextAlignmentRole: _ALIGN_RIGHT} if col in _RIGHT
                                         else {} for col in range(len(COLUMNS))]
                    cells[0].update({NODE_ID_ROLE: node.id, SERIAL_ROLE: node.serial, KIND_ROLE: node.kind})
                    self._write(node, lambda col, value, role, cells=cells: cells[col].__setitem__(role, value))
                    for col, roles in enumerate(cells):              # one call per cell, all its roles
                        if roles:
                            set_cell(index(row, col, parent), roles)
                    self.insertColumns(0, len(COLUMNS), index(row, 0, parent))   # room for its children
            finally:
                self.blockSignals(False)
            self.dataChanged.emit(self.index(start, 0, parent), self.index(start + len(children) - 1, last_col, parent))

    def _refresh(self, node: Node) -> bool:
        parent = self._index(node.parent, 0) if node.parent is not None else QModelIndex()
        index, row = self.index, node.row
        return self._write(node, lambda col, value, role: self.setData(index(row, col, parent), value, role))

    def _write(self, node: Node, put: Any) -> bool:
        """Put what the row shows of `node` (put(column, value, role)); False if unchanged."""
        tip = self._tooltip(node, COL_CALL)
        cost_tip = self._tooltip(node, COL_COST)
        shown = (tuple(self._display(node, col) for col in range(len(COLUMNS))), tip, cost_tip, node.status,
                 node.cost_usd, (node.input_tokens, node.output_tokens))
        old = self._shown[node.serial]
        if shown == old:
            return False
        texts = shown[0]
        for col in range(len(COLUMNS)):          # a new row's items start empty: set what shows
            text = texts[col]
            if (old[0][col] != text) if old else text:
                put(col, text, _DISPLAY)
            want = cost_tip if col == COL_COST else tip
            if ((old[2] if col == COL_COST else old[1]) != want) if old else want:
                put(col, plain(want), _TIP)
        if not old or old[3] != node.status:
            put(0, node.status, STATUS_ROLE)
            put(0, f"{node.label} {node.status}", Qt.ItemDataRole.AccessibleTextRole)
            color = self._status_color(node.status)
            if old or color is not None:
                put(COL_STATUS, color, _FG)
        put(0, node.cost_usd, COST_ROLE)
        put(0, [node.input_tokens, node.output_tokens], TOKENS_ROLE)   # a list: Qt keeps it, not a Python object
        self._shown[node.serial] = shown
        return True

    # ---- lookups -------------------------------------------------------
    def _index(self, node: Node, column: int = 0) -> QModelIndex:
        parent = self._index(node.parent, 0) if node.parent is not None else QModelIndex()
        return self.index(node.row, column, parent)

    def node(self, index: Index) -> Node | None:
        if not index.isValid():
            return None
        serial = index.siblingAtColumn(0).data(SERIAL_ROLE)
        nodes = self._view.node_list
        return nodes[serial] if isinstance(serial, int) and 0 <= serial < len(self._shown) else None

    def index_for(self, node_id: str, column: int = 0) -> QModelIndex:
        node = self._view.nodes.get(node_id)
        if node is None or node.serial >= len(self._shown):
            return QModelIndex()
        return self._index(node, column)

    # ---- what a row shows ----------------------------------------------
    def _status_color(self, status: str) -> Any:
        if status in FAILED:
            return self._colors.get("error")
        if status in HELD:
            return self._colors.get("warning")
        if status == "running":
            return self._colors.get("running")
        return None

    @staticmethod
    def _tooltip(node: Node, col: int) -> str | None:
        if col == COL_COST and (node.cost_usd or node.subtree_cost_usd):
            return f"own ${node.cost_usd:.4f} · subtree ${node.subtree_cost_usd:.4f}"
        if node.error:
            return node.error[:2000]
        return node.preview or None

    @staticmethod
    def _display(node: Node, col: int) -> str | None:
        if col == COL_CALL:
            if node.kind in ("llm", "rlm") and node.parent is not None:
                return f"{node.kind} {node.id}"     # the same id as in the sub-calls table
            return node.label
        if col == COL_STATUS:
            return node.status
        if col == COL_KIND:
            return node.kind
        if col == COL_MODEL:
            return node.model
        if col == COL_PROMPT:
            return node.preview
        if col == COL_TOKENS:
            if not (node.input_tokens or node.output_tokens):
                return ""
            return f"{_short(node.input_tokens)} / {_short(node.output_tokens)}"
        if col == COL_COST:                 # a node with no call of its own (a nested RLM): its subtree
            usd = node.cost_usd or node.subtree_cost_usd
            return f"${usd:.4f}" if usd else ""
        if col == COL_LATENCY:
            ms = node.duration_ms
            if ms is None:
                return ""
            return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"
        return None
