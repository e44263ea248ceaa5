"""The review grid's window: the grids stored so far, the chosen grid filling cell by cell
(state, value, cost), Run over Sources' documents with one dollar cap, Stop, Export; a
double-click on a cell asks for its evidence (its run and its cited passage). The
questions come from a file or from a saved column preset; a file's can be saved as one.

It only shows and asks: app/grid_glue.py runs grids and feeds the table model."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QDialog, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem,
    QPushButton, QSplitter, QTableView, QVBoxLayout, QWidget,
)

from ui.dollar_spin import DollarSpin
from ui.grid_model import GridTableModel

GRID_ID_ROLE = Qt.ItemDataRole.UserRole + 1


class GridView(QDialog):
    run_requested = Signal(str, float)        # COLUMNS file, grid cap in USD (0: none)
    stop_requested = Signal()
    grid_chosen = Signal(str)
    cell_opened = Signal(int, int)
    export_requested = Signal(str)            # a .csv, .xlsx or .html path
    preset_save_requested = Signal(str, str)  # preset name, COLUMNS file

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("gridView")
        self.setWindowTitle("Review grid: questions x documents")
        self.setModal(False)
        self.resize(1100, 700)
        layout = QVBoxLayout(self)

        top = QHBoxLayout()
        top.addWidget(QLabel("Questions"))
        self.columns_edit = QLineEdit()
        self.columns_edit.setPlaceholderText("a text file: one question per line, or JSON lines")
        self.columns_edit.setAccessibleName("Questions file")
        top.addWidget(self.columns_edit, 1)
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self._browse)
        top.addWidget(self.browse_button)
        top.addWidget(QLabel("Grid cap $"))
        self.cap_box = DollarSpin(maximum=100_000.0, none_text="none")
        self.cap_box.setAccessibleName("One dollar cap for the whole grid")
        top.addWidget(self.cap_box)
        self.run_button = QPushButton("Run over Sources")
        self.run_button.clicked.connect(lambda: self.run_requested.emit(self.columns_edit.text().strip(),
                                                                        float(self.cap_box.value())))
        top.addWidget(self.run_button)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop_requested.emit)
        top.addWidget(self.stop_button)
        self.export_button = QPushButton("Export…")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._export)
        top.addWidget(self.export_button)
        layout.addLayout(top)

        presets = QHBoxLayout()
        presets.addWidget(QLabel("or the preset"))
        self.preset_box = QComboBox()
        self.preset_box.setAccessibleName("Column preset")
        self.preset_box.setMinimumContentsLength(18)
        self.preset_box.currentIndexChanged.connect(self._preset_chosen)
        presets.addWidget(self.preset_box)
        presets.addSpacing(16)
        self.preset_name_edit = QLineEdit()
        self.preset_name_edit.setPlaceholderText("a name for the questions file's columns")
        self.preset_name_edit.setAccessibleName("Preset name")
        presets.addWidget(self.preset_name_edit, 1)
        self.save_preset_button = QPushButton("Save as preset")
        self.save_preset_button.clicked.connect(lambda: self.preset_save_requested.emit(
            self.preset_name_edit.text().strip(), self.columns_edit.text().strip()))
        presets.addWidget(self.save_preset_button)
        layout.addLayout(presets)
        self.set_presets([])

        self.status_label = QLabel("Pick a questions file; the grid runs over the documents in Sources.")
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status_label)

        split = QSplitter(Qt.Orientation.Horizontal)
        self.grid_list = QListWidget()
        self.grid_list.setAccessibleName("Grids")
        self.grid_list.currentItemChanged.connect(self._chosen)
        split.addWidget(self.grid_list)
        self.model = GridTableModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setAccessibleName("Grid cells")
        self.table.doubleClicked.connect(lambda index: self.cell_opened.emit(index.row(), index.column()))
        split.addWidget(self.table)
        split.setStretchFactor(1, 4)
        layout.addWidget(split, 1)
        self._listing = False

    # -- shown by the glue ----------------------------------------------------------------
    def set_grids(self, grids: list[dict], current: str | None = None) -> None:
        """History of grids: newest first, each "name · N done / M cells · $cost"."""
        self._listing = True
        self.grid_list.clear()
        for g in grids:
            cells = g.get("cells") or {}
            total = sum(cells.values())
            item = QListWidgetItem(f"{g['name']} · {cells.get('done', 0)} done / {total} cells · ${g['cost_usd']:.4f}")
            item.setData(GRID_ID_ROLE, g["id"])
            self.grid_list.addItem(item)
            if g["id"] == current:
                self.grid_list.setCurrentItem(item)
        self._listing = False

    def set_presets(self, names: list[str], current: str = "") -> None:
        """The saved column presets; the first entry runs the questions file instead."""
        self.preset_box.blockSignals(True)
        self.preset_box.clear()
        self.preset_box.addItem("(none: the questions file)", "")
        for name in names:
            self.preset_box.addItem(name, name)
        self.preset_box.setCurrentIndex(max(0, self.preset_box.findData(current)))
        self.preset_box.blockSignals(False)
        self._preset_chosen()

    def chosen_preset(self) -> str:
        """The preset the grid runs ("" : the questions file)."""
        return self.preset_box.currentData() or ""

    def current_grid(self) -> str | None:
        item = self.grid_list.currentItem()
        return item.data(GRID_ID_ROLE) if item is not None else None

    def set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.export_button.setEnabled(not running and self.model.rowCount() > 0)

    def set_status(self, text: str) -> None:
        self.status_label.setText(text)

    # -- internal ---------------------------------------------------------------------------
    def _chosen(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None = None) -> None:
        if item is not None and not self._listing:
            self.grid_chosen.emit(item.data(GRID_ID_ROLE))

    def _preset_chosen(self, _index: int = 0) -> None:
        preset = self.chosen_preset()
        self.columns_edit.setEnabled(not preset)
        self.browse_button.setEnabled(not preset)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Questions", "", "Questions (*.jsonl *.txt);;All files (*)")
        if path:
            self.columns_edit.setText(path)

    def _export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export grid", "grid.xlsx",
                                              "Excel (*.xlsx);;CSV (*.csv);;HTML report (*.html)")
        if path:
            self.export_requested.emit(path)
