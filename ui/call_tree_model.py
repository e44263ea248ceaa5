"""CallTreeModel: the call tree of a RunView as a Qt item model.

A thin adapter. The fold (core/runview.py) owns the nodes; this model only
remembers how many children of each node the view has been told about, so that
`sync()` can announce new nodes with beginInsertRows/endInsertRows (one insert
per parent and batch, never a model reset per event) and changed nodes with
dataChanged. Index ids are the nodes' serial numbers, not Python pointers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from core.runview import Node, RunView

NODE_ID_ROLE = Qt.ItemDataRole.UserRole + 1     # str: the node's call id
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2      # str: running|ok|error|refused|...
KIND_ROLE = Qt.ItemDataRole.UserRole + 3        # str: rlm|turn|cell|llm
COST_ROLE = Qt.ItemDataRole.UserRole + 4        # float: USD
TOKENS_ROLE = Qt.ItemDataRole.UserRole + 5      # tuple[int, int]: input, output

# The figures come right after the call, so they are on screen without scrolling.
COLUMNS = ("Call", "Status", "Tokens", "Cost", "Latency", "Model", "Kind", "Prompt")
(COL_CALL, COL_STATUS, COL_TOKENS, COL_COST, COL_LATENCY, COL_MODEL, COL_KIND, COL_PROMPT) = range(len(COLUMNS))
_RIGHT = {COL_TOKENS, COL_COST, COL_LATENCY}
FAILED = frozenset({"error", "syntax error", "timeout", "crash", "memory", "failed", "fault"})
HELD = frozenset({"refused", "cancelled", "capped"})

Index = QModelIndex | QPersistentModelIndex


def _short(n: int) -> str:
    """Token counts that fit a narrow column: 812, 1.5k, 48k, 1.2M."""
    return f"{n:,}" if n < 1000 else f"{n / 1000:.1f}k" if n < 10_000 else \
        f"{n // 1000}k" if n < 1_000_000 else f"{n / 1_000_000:.1f}M"


class CallTreeModel(QAbstractItemModel):
    def __init__(self, view: RunView | None = None, parent: QObject | None = None,
                 colors: dict[str, str] | None = None) -> None:
        super().__init__(parent)
        self._view = view or RunView()
        self._shown: list[int] = []       # per node serial: children announced to the view
        self._top = 0                     # top-level rows announced (0 or 1: the RLM "R")
        self._known = 0                   # nodes announced so far
        self._colors: dict[str, QColor] = {}
        self.set_colors(colors or {"error": "#c53030", "warning": "#b7791f", "running": "#2f6fdd"})
        self._adopt(self._view)

    # ---- feeding -------------------------------------------------------
    @property
    def view(self) -> RunView:
        return self._view

    def set_view(self, view: RunView) -> None:
        """Show another run (a model reset, once per run, not per event)."""
        self.beginResetModel()
        self._adopt(view)
        self.endResetModel()

    def _adopt(self, view: RunView) -> None:
        self._view = view
        self._shown = [len(n.children) for n in view.node_list]
        self._known = len(view.node_list)
        self._top = 1 if view.root is not None else 0

    def set_colors(self, colors: dict[str, str]) -> None:
        self._colors = {k: QColor(v) for k, v in colors.items()}

    def sync(self, updated: Iterable[str] = ()) -> None:
        """Announce nodes the fold added since the last sync, then changes to
        the nodes in `updated` that the view already knew."""
        nodes = self._view.node_list
        known = self._known
        if len(nodes) > known:
            new = nodes[known:]
            self._shown.extend(len(n.children) for n in new)
            self._known = len(nodes)
            parents: dict[int, Node] = {}
            top_new = False
            for node in new:
                p = node.parent
                if p is None:
                    top_new = True
                elif p.serial < known:
                    parents[p.serial] = p
            if top_new and not self._top:
                self.beginInsertRows(QModelIndex(), 0, 0)
                self._top = 1
                self.endInsertRows()
            for serial, p in parents.items():
                first, last = self._shown[serial], len(p.children) - 1
                if last < first:
                    continue
                self.beginInsertRows(self._index_of(p), first, last)
                self._shown[serial] = last + 1
                self.endInsertRows()
        last_col = len(COLUMNS) - 1
        seen: set[str] = set()
        for node_id in updated:
            if node_id in seen:
                continue
            seen.add(node_id)
            node = self._view.nodes.get(node_id)
            if node is None or node.serial >= known:
                continue                  # just inserted: the view reads it fresh
            self.dataChanged.emit(self.createIndex(node.row, 0, node.serial),
                                  self.createIndex(node.row, last_col, node.serial))

    # ---- lookups -------------------------------------------------------
    def node(self, index: Index) -> Node | None:
        if not index.isValid():
            return None
        serial = index.internalId()
        nodes = self._view.node_list
        return nodes[serial] if 0 <= serial < self._known else None

    def index_for(self, node_id: str, column: int = 0) -> QModelIndex:
        node = self._view.nodes.get(node_id)
        if node is None or node.serial >= self._known:
            return QModelIndex()
        return self.createIndex(node.row, column, node.serial)

    def _index_of(self, node: Node) -> QModelIndex:
        return self.createIndex(node.row, 0, node.serial)

    # ---- QAbstractItemModel --------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if not parent.isValid():
            return self._top
        if parent.column() != 0:
            return 0
        serial = parent.internalId()
        return self._shown[serial] if 0 <= serial < self._known else 0

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return len(COLUMNS)

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:
        if row < 0 or not 0 <= column < len(COLUMNS):
            return QModelIndex()
        if not parent.isValid():
            root = self._view.root
            if row >= self._top or root is None:
                return QModelIndex()
            return self.createIndex(row, column, root.serial)
        node = self.node(parent)
        if node is None or parent.column() != 0 or row >= self._shown[node.serial]:
            return QModelIndex()
        return self.createIndex(row, column, node.children[row].serial)

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        node = self.node(index)
        if node is None or node.parent is None:
            return QModelIndex()
        return self.createIndex(node.parent.row, 0, node.parent.serial)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section] if 0 <= section < len(COLUMNS) else None
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = self.node(index)
        if node is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(node, col)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == COL_COST and (node.cost_usd or node.subtree_usd):
                own = 0.0 if node.kind == "rlm" else node.cost_usd
                return f"own ${own:.4f} · subtree ${node.subtree_usd:.4f}"
            if node.error:
                return node.error[:2000]
            return node.preview or None
        if role == Qt.ItemDataRole.ForegroundRole and col == COL_STATUS:
            if node.status in FAILED:
                return self._colors.get("error")
            if node.status in HELD:
                return self._colors.get("warning")
            if node.status == "running":
                return self._colors.get("running")
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and col in _RIGHT:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == NODE_ID_ROLE:
            return node.id
        if role == STATUS_ROLE:
            return node.status
        if role == KIND_ROLE:
            return node.kind
        if role == COST_ROLE:
            return node.cost_usd
        if role == TOKENS_ROLE:
            return (node.input_tokens, node.output_tokens)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{node.label} {node.status}"
        return None

    def _display(self, node: Node, col: int) -> str | None:
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
