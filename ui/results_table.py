"""ResultsTable: every sub-call of a run as a row, filterable, exportable as CSV.

Columns: call, status, model, source (the span of the documents the prompt
came from), prompt, answer, tokens in, tokens out, cost, latency. The filter
box matches any text column; the status box keeps one status. Export asks
for a file and emits `export_requested(path)` (the glue writes the CSV).

    table.set_rows([ResultShown(...), ...])
"""

from __future__ import annotations

import re

from dataclasses import dataclass

from core.control_chars import escape_controls
from PySide6.QtCore import (QModelIndex, QSortFilterProxyModel, Qt, Signal)
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QFileDialog, QHBoxLayout, QHeaderView,
                               QLabel, QLineEdit, QPushButton, QTableView, QVBoxLayout, QWidget)

from ui.cost_meter import money
from ui.rows import RowTableModel
from ui.plain_text import plain


@dataclass(frozen=True)
class ResultShown:
    call_id: str
    status: str
    model: str
    source: str            # "notes.txt chars 0-1200" / "notes.txt, line 4" / ""
    prompt: str
    answer: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    duration_ms: int | None = None
    kind: str = "llm"


COLUMNS = ("Call", "Status", "Model", "Source", "Prompt", "Answer", "In", "Out", "Cost", "Latency")
_TEXT_COLUMNS = (0, 1, 2, 3, 4, 5)


def _one_line(text: str, limit: int = 200) -> str:
    return " ".join(text[:limit * 2].split())[:limit]


class ResultsModel(RowTableModel):
    COLUMNS = COLUMNS
    _rows: list[ResultShown]

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, col = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:   # model text: control characters shown as \u00XX
            return escape_controls((row.call_id, row.status, row.model, row.source, _one_line(row.prompt),
                    _one_line(row.answer), f"{row.input_tokens:,}", f"{row.output_tokens:,}",
                    money(row.cost_usd),
                    "" if row.duration_ms is None else f"{row.duration_ms / 1000:.2f} s")[col])
        if role == Qt.ItemDataRole.ToolTipRole and col in (3, 4, 5):
            return plain((row.source, row.prompt[:4000], row.answer[:4000])[col - 3])
        if role == Qt.ItemDataRole.UserRole:       # sorting and filtering
            return (natural_key(row.call_id), row.status, row.model, row.source, row.prompt, row.answer,
                    row.input_tokens, row.output_tokens, row.cost_usd, row.duration_ms or 0)[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 6:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def set_rows(self, rows: list[ResultShown]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def rows(self) -> list[ResultShown]:
        return list(self._rows)


def natural_key(call_id: str) -> str:
    """"R.s4" before "R.s30": numbers padded, so ids sort as numbers, not as text."""
    return re.sub(r"\d+", lambda m: m.group(0).zfill(9), call_id)


class ResultsFilter(QSortFilterProxyModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.text = ""
        self.status: str | None = None
        self.setSortRole(Qt.ItemDataRole.UserRole)

    def set_filter(self, text: str, status: str | None) -> None:
        self.beginFilterChange()
        self.text, self.status = text.strip().lower(), status
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex) -> bool:
        model = self.sourceModel()
        row = model.rows()[source_row] if isinstance(model, ResultsModel) else None
        if row is None:
            return True
        if self.status and row.status != self.status:
            return False
        if not self.text:
            return True
        hay = " ".join((row.call_id, row.status, row.model, row.source, row.prompt, row.answer)).lower()
        return all(word in hay for word in self.text.split())


class ResultsTable(QWidget):
    export_requested = Signal(str)          # a CSV path chosen by the user

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsTable")
        self.model = ResultsModel(self)
        self.proxy = ResultsFilter(self)
        self.proxy.setSourceModel(self.model)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        top = QHBoxLayout()
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter sub-calls (prompt, answer, source, model)")
        self.filter_edit.setAccessibleName("Filter sub-calls")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setMinimumWidth(60)
        self.status_combo = QComboBox(self)
        self.status_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.status_combo.setMinimumContentsLength(4)
        self.status_combo.setAccessibleName("Filter by status")
        self.status_combo.addItem("Any status", None)
        for status in ("ok", "error", "refused", "cancelled", "running", "waiting"):
            self.status_combo.addItem(status, status)
        self.export_button = QPushButton("CSV…", self)
        self.export_button.setToolTip("Export the sub-calls as CSV")
        self.export_button.setAccessibleName("Export the sub-calls as CSV")
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.status_combo)
        top.addWidget(self.export_button)
        layout.addLayout(top)
        self.table = QTableView(self)
        self.table.setModel(self.proxy)
        self.table.setAccessibleName("Sub-calls")
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        for col, width in ((0, 70), (1, 60), (2, 110), (3, 150), (4, 220), (5, 220)):
            self.table.setColumnWidth(col, width)
        # Five rows in view at least (the tab is never a two-row sliver under the call detail).
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height() + 5 * 22
                                    + self.table.horizontalScrollBar().sizeHint().height()
                                    + 2 * self.table.frameWidth() + 4)
        layout.addWidget(self.table, 1)
        self.count_label = QLabel(self)
        self.count_label.setObjectName("hint")
        layout.addWidget(self.count_label)
        self.filter_edit.textChanged.connect(self._refilter)
        self.status_combo.currentIndexChanged.connect(self._refilter)
        self.export_button.clicked.connect(self._ask_export)
        self._update_count()

    def set_rows(self, rows: list[ResultShown]) -> None:
        self.model.set_rows(rows)
        self._update_count()

    def visible_rows(self) -> list[ResultShown]:
        rows = self.model.rows()
        return [rows[self.proxy.mapToSource(self.proxy.index(r, 0)).row()]
                for r in range(self.proxy.rowCount())]

    def _refilter(self, *_args) -> None:
        self.proxy.set_filter(self.filter_edit.text(), self.status_combo.currentData())
        self._update_count()

    def _update_count(self) -> None:
        total, shown = self.model.rowCount(), self.proxy.rowCount()
        self.count_label.setText(f"{total} sub-call{'s' if total != 1 else ''}" if shown == total
                                 else f"{shown} of {total} sub-calls")
        self.export_button.setEnabled(total > 0)

    def _ask_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the sub-calls", "sub-calls.csv",
                                              "CSV (*.csv)")
        if path:
            self.export_requested.emit(path)
