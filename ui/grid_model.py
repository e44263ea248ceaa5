"""The review grid as a Qt table model: a row per document, a column per question, each
cell its value (or its state), its state, cost and flag as roles. A thin adapter: it is
given plain data and cell updates (core/grid), and turns them into dataChanged."""

from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

STATE_ROLE = Qt.ItemDataRole.UserRole + 1
COST_ROLE = Qt.ItemDataRole.UserRole + 2
RUN_ROLE = Qt.ItemDataRole.UserRole + 3

STATE_COLORS = {"queued": None, "running": "#5b8def", "done": None, "failed": "#d9534f", "limited": "#e0a030"}


class GridTableModel(QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._columns: list[str] = []
        self._rows: list[str] = []
        self._cells: dict[tuple[int, int], dict] = {}

    def set_grid(self, columns: Sequence[str], rows: Sequence[str], cells: dict[tuple[int, int], dict]) -> None:
        """The whole grid: column names, row paths, cells by (row, col) with at least "state"
        and "text" (also "cost_usd", "flag", "error", "run_id")."""
        self.beginResetModel()
        self._columns, self._rows, self._cells = list(columns), list(rows), {k: dict(v) for k, v in cells.items()}
        self.endResetModel()

    def update_cell(self, row: int, col: int, **changes: Any) -> None:
        if not (0 <= row < len(self._rows) and 0 <= col < len(self._columns)):
            return
        self._cells.setdefault((row, col), {"state": "queued", "text": ""}).update(changes)
        index = self.index(row, col)
        self.dataChanged.emit(index, index)

    def cell(self, row: int, col: int) -> dict:
        return dict(self._cells.get((row, col), {"state": "queued", "text": ""}))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in range(len(self._rows)):
            for c in range(len(self._columns)):
                state = self._cells.get((r, c), {}).get("state", "queued")
                out[state] = out.get(state, 0) + 1
        return out

    def cost_usd(self) -> float:
        return sum(float(c.get("cost_usd") or 0.0) for c in self._cells.values())

    # -- QAbstractTableModel --------------------------------------------------------------
    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:   # noqa: N802
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:   # noqa: N802
        return 0 if parent.isValid() else len(self._columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:   # noqa: N802
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        names = self._columns if orientation == Qt.Orientation.Horizontal else self._rows
        return names[section] if 0 <= section < len(names) else None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        cell = self._cells.get((index.row(), index.column()), {"state": "queued", "text": ""})
        state = cell.get("state", "queued")
        if role == Qt.ItemDataRole.DisplayRole:
            return cell.get("text") or ("" if state == "done" else state)
        if role == Qt.ItemDataRole.ToolTipRole:
            parts = [state, f"${float(cell.get('cost_usd') or 0.0):.4f}"]
            for key in ("flag", "error"):
                if cell.get(key):
                    parts.append(str(cell[key]))
            return " · ".join(parts)
        if role == Qt.ItemDataRole.ForegroundRole:
            color = STATE_COLORS.get(state)
            return QBrush(QColor(color)) if color else None
        if role == STATE_ROLE:
            return state
        if role == COST_ROLE:
            return float(cell.get("cost_usd") or 0.0)
        if role == RUN_ROLE:
            return cell.get("run_id")
        return None
