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
from PySide6.QtGui import QColor, QStandardItem, QStandardItemModel

from core.runview import Node, RunView

NODE_ID_ROLE = Qt.ItemDataRole.UserRole + 1     # str: the node's call id
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2      # str: running|ok|error|refused|...
KIND_ROLE = Qt.ItemDataRole.UserRole + 3        # str: rlm|turn|cell|llm
COST_ROLE = Qt.ItemDataRole.UserRole + 4        # float: USD
TOKENS_ROLE = Qt.ItemDataRole.UserRole + 5      # tuple[int, int]: input, output
SERIAL_ROLE = Qt.ItemDataRole.UserRole + 6      # int: the node's serial number in the fold

# The figures come right after the call, so they are on screen without scrolling.
COLUMNS = ("Call", "Status", "Tokens", "Cost", "Latency", "Model", "Kind", "Prompt")
(COL_CALL, COL_STATUS, COL_TOKENS, COL_COST, COL_LATENCY, COL_MODEL, COL_KIND, COL_PROMPT) = range(len(COLUMNS))
_RIGHT = {COL_TOKENS, COL_COST, COL_LATENCY}
FAILED = frozenset({"error", "syntax error", "timeout", "crash", "memory", "failed", "fault"})
HELD = frozenset({"refused", "cancelled", "capped"})
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_DISPLAY, _TIP, _FG = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole
_ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

Index = QModelIndex | QPersistentModelIndex


def _short(n: int) -> str:
    """Token counts that fit a narrow column: 812, 1.5k, 48k, 1.2M."""
    return f"{n:,}" if n < 1000 else f"{n / 1000:.1f}k" if n < 10_000 else \
        f"{n // 1000}k" if n < 1_000_000 else f"{n / 1_000_000:.1f}M"


class CallTreeModel(QStandardItemModel):
    def __init__(self, view: RunView | None = None, parent: QObject | None = None,
                 colors: dict[str, str] | None = None) -> None:
        super().__init__(parent)
        self._view = view or RunView()
        self._items: list[list[QStandardItem]] = []     # per node serial: its row's items
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
        self.clear()                     # one modelReset
        self._headers()
        self._items, self._shown = [], []
        self._adopt(view)

    def _adopt(self, view: RunView) -> None:
        self._view = view
        self._append(view.node_list)

    def _headers(self) -> None:
        self.setColumnCount(len(COLUMNS))
        self.setHorizontalHeaderLabels(list(COLUMNS))

    def set_colors(self, colors: dict[str, str]) -> None:
        self._colors = {k: QColor(v) for k, v in colors.items()}
        for serial, items in enumerate(getattr(self, "_items", ())):
            items[COL_STATUS].setData(self._status_color(self._view.node_list[serial].status), _FG)

    def sync(self, updated: Iterable[str] = ()) -> None:
        """Append the nodes the fold added since the last sync, then rewrite the rows of
        the nodes in `updated` that the model already had."""
        nodes = self._view.node_list
        known = len(self._items)
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
            self.dataChanged.emit(self._items[first.serial][0].index(),
                                  self._items[last.serial][last_col].index())

    def _append(self, new: list[Node]) -> None:
        """Build the rows of `new` (parents before children); a node under another new one
        joins it before it is in the model, so each parent already shown gets one insert
        per sync, with the rows' first columns filled (the view's rowsInserted slots read
        them) and the other columns set with the model's signals held."""
        known = len(self._items)
        under: dict[int, list[list[QStandardItem]]] = {}     # parent serial (-1: top) -> rows
        for node in new:
            items = [QStandardItem() for _ in COLUMNS]
            for col, item in enumerate(items):
                item.setFlags(_FLAGS)
                if col in _RIGHT:
                    item.setData(_ALIGN_RIGHT, Qt.ItemDataRole.TextAlignmentRole)
            first = items[0]
            first.setColumnCount(len(COLUMNS))
            first.setData(node.id, NODE_ID_ROLE)
            first.setData(node.serial, SERIAL_ROLE)
            first.setData(node.kind, KIND_ROLE)
            self._items.append(items)
            self._shown.append(())
            self._write(node, items)
            parent = node.parent
            if parent is not None and parent.serial >= known:
                self._items[parent.serial][0].appendRow(items)   # not in the model yet: no signal
            else:
                under.setdefault(-1 if parent is None else parent.serial, []).append(items)
        last_col = len(COLUMNS) - 1
        for serial, rows in under.items():
            holder = self.invisibleRootItem() if serial < 0 else self._items[serial][0]
            start = holder.rowCount()
            holder.appendRows([row[0] for row in rows])             # one rowsInserted
            self.blockSignals(True)
            try:
                for i, row in enumerate(rows):
                    for col in range(1, len(COLUMNS)):
                        holder.setChild(start + i, col, row[col])
            finally:
                self.blockSignals(False)
            self.dataChanged.emit(rows[0][0].index(), rows[-1][last_col].index())

    def _refresh(self, node: Node) -> bool:
        return self._write(node, self._items[node.serial])

    def _write(self, node: Node, items: list[QStandardItem]) -> bool:
        """Put what the row shows of `node` into its items; False if nothing changed."""
        tip = self._tooltip(node, COL_CALL)
        cost_tip = self._tooltip(node, COL_COST)
        shown = (tuple(self._display(node, col) for col in range(len(COLUMNS))), tip, cost_tip, node.status,
                 node.cost_usd, (node.input_tokens, node.output_tokens))
        old = self._shown[node.serial]
        if shown == old:
            return False
        texts = shown[0]
        for col, item in enumerate(items):       # a new row's items start empty: set what shows
            text = texts[col]
            if (old[0][col] != text) if old else text:
                item.setData(text, _DISPLAY)
            want = cost_tip if col == COL_COST else tip
            if ((old[2] if col == COL_COST else old[1]) != want) if old else want:
                item.setData(want, _TIP)
        first = items[0]
        if not old or old[3] != node.status:
            first.setData(node.status, STATUS_ROLE)
            first.setData(f"{node.label} {node.status}", Qt.ItemDataRole.AccessibleTextRole)
            color = self._status_color(node.status)
            if old or color is not None:
                items[COL_STATUS].setData(color, _FG)
        first.setData(node.cost_usd, COST_ROLE)
        first.setData((node.input_tokens, node.output_tokens), TOKENS_ROLE)
        self._shown[node.serial] = shown
        return True

    # ---- lookups -------------------------------------------------------
    def node(self, index: Index) -> Node | None:
        if not index.isValid():
            return None
        serial = index.siblingAtColumn(0).data(SERIAL_ROLE)
        nodes = self._view.node_list
        return nodes[serial] if isinstance(serial, int) and 0 <= serial < len(self._items) else None

    def index_for(self, node_id: str, column: int = 0) -> QModelIndex:
        node = self._view.nodes.get(node_id)
        if node is None or node.serial >= len(self._items):
            return QModelIndex()
        return self._items[node.serial][column].index()

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
        if col == COL_COST and (node.cost_usd or node.subtree_usd):
            own = 0.0 if node.kind == "rlm" else node.cost_usd
            return f"own ${own:.4f} · subtree ${node.subtree_usd:.4f}"
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
        if col == COL_COST:
            return f"${node.cost_usd:.4f}" if node.cost_usd else ""
        if col == COL_LATENCY:
            ms = node.duration_ms
            if ms is None:
                return ""
            return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"
        return None
