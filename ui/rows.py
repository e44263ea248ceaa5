"""Shared pieces of the list panes: a table model over a list of row objects, and
how sizes and counts are written."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from core.token_count import round_count


class RowTableModel(QAbstractTableModel):
    """A flat table of `self._rows`; subclasses name COLUMNS and implement data()."""

    COLUMNS: tuple[str, ...] = ()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[Any] = []

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def human_count(n: int) -> str:
    """43k, 1.2k, 3.4M: the one short form of a count (core/token_count.py's)."""
    return round_count(n)


def list_table(model: RowTableModel, accessible_name: str, *, multi_select: bool = False):
    """The compact, row-selecting table view every list pane uses."""
    from PySide6.QtWidgets import QAbstractItemView, QTableView
    table = QTableView()
    table.setModel(model)
    table.setAccessibleName(accessible_name)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection if multi_select
                           else QAbstractItemView.SelectionMode.SingleSelection)
    table.setAlternatingRowColors(True)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(22)
    table.setShowGrid(False)
    table.setWordWrap(False)
    return table


def counted(n: int, noun: str, nouns: str | None = None) -> str:
    """"1 cell", "3 cells", "1 runtime error": a count with its noun in the right number."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"
