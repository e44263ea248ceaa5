"""Sources: the documents a question is asked over.

A drop zone for files and folders from the OS file manager, Add files / Add
folder buttons, a table of what was read (or skipped, with the reason), totals
and a progress bar while a big folder is read. The pane only shows rows and
sends intents (signals); app/controller.py does the reading.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QCheckBox, QFileDialog, QFrame, QHBoxLayout, QHeaderView, QLabel,
    QProgressBar, QPushButton, QStyledItemDelegate, QToolButton, QVBoxLayout, QWidget,
)

from core.token_count import about_tokens
from ui import confirm, icons
from ui.flow_layout import FlowLayout
from ui.plain_text import plain
from ui.rows import RowTableModel, list_table, human_count, human_size  # noqa: F401  (re-exported)
from ui.sources_model import (  # noqa: F401  (re-exported)
    PATH_ROLE, SORT_ROLE, SourceRow, SourcesModel, duplicates_text,
)

class ElideRight(QStyledItemDelegate):
    """A column cut at its end, not in its middle (the table's own mode)."""

    def initStyleOption(self, option, index) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideRight


class DropZone(QFrame):
    """Accepts files and folders dragged in from the OS file manager."""

    paths_dropped = Signal(list)  # list[str] of local paths

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("dropZone")
        self.setAcceptDrops(True)
        self.setAccessibleName("Drop files or folders here")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        icon = QLabel()
        icons.bind(icon, "drop", 22)
        text = QLabel("Drop files or folders here")
        text.setObjectName("hint")
        layout.addStretch(1)
        layout.addWidget(icon)
        layout.addWidget(text)
        layout.addStretch(1)

    @staticmethod
    def local_paths(event: QDropEvent | QDragEnterEvent) -> list[str]:
        mime = event.mimeData()
        if mime is None or not mime.hasUrls():
            return []
        return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]

    def _set_active(self, active: bool) -> None:
        self.setProperty("dragActive", active)
        self.style().unpolish(self)
        self.style().polish(self)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self.local_paths(event):
            event.acceptProposedAction()
            self._set_active(True)
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        event.acceptProposedAction()

    def dragLeaveEvent(self, event) -> None:
        self._set_active(False)

    def dropEvent(self, event: QDropEvent) -> None:
        self._set_active(False)
        paths = self.local_paths(event)
        if not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        self.paths_dropped.emit(paths)


class SourcesPane(QWidget):
    """The sources column: drop zone, buttons, table, totals, progress."""

    paths_added = Signal(list)        # list[str]: files or folders to read
    remove_requested = Signal(list)   # list[str]: document paths to drop
    clear_requested = Signal()
    cancel_requested = Signal()       # stop reading

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = SourcesModel(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        title = QLabel("Sources")
        title.setObjectName("paneTitle")
        layout.addWidget(title)

        self.drop_zone = DropZone()
        self.drop_zone.paths_dropped.connect(self.offer_paths)
        layout.addWidget(self.drop_zone)

        self.add_files_button = QPushButton("Add files…")
        icons.bind(self.add_files_button, "add-file")
        self.add_files_button.clicked.connect(self.choose_files)
        self.add_folder_button = QPushButton("Add folder…")
        icons.bind(self.add_folder_button, "add-folder")
        self.add_folder_button.clicked.connect(self.choose_folder)
        self.remove_button = QToolButton()
        icons.bind(self.remove_button, "remove")
        self.remove_button.setAccessibleName("Remove selected sources")
        self.remove_button.setToolTip("Remove selected (Delete)")
        self.remove_button.clicked.connect(self._on_remove)
        self.clear_button = QToolButton()
        icons.bind(self.clear_button, "clear")
        self.clear_button.setAccessibleName("Clear all sources")
        self.clear_button.setToolTip("Clear all sources")
        self.clear_button.clicked.connect(self.ask_clear)
        # The add buttons and the remove buttons wrap as two groups in a narrow column.
        adds, removes = QWidget(), QWidget()
        for group, widgets in ((adds, (self.add_files_button, self.add_folder_button)),
                               (removes, (self.remove_button, self.clear_button))):
            row = QHBoxLayout(group)
            row.setContentsMargins(0, 0, 0, 0)
            for widget in widgets:
                row.addWidget(widget)
        # OCR for what is read next (starts as Settings > Documents says).
        self.ocr_check = QCheckBox("OCR scans")
        self.ocr_check.setAccessibleName("Read scanned pages and images with OCR")
        self.ocr_check.setToolTip("Read scanned PDF pages and images with OCR (tesseract): slow, about "
                                  "2 to 10 s a page. Applies to what is read next; ticking it reads the "
                                  "scans listed as skipped again. The default is in Settings > Documents.")
        self.ocr_check.toggled.connect(self._ocr_toggled)
        flow = FlowLayout()
        flow.addWidget(adds)
        flow.addWidget(self.ocr_check)
        flow.addWidget(removes)
        layout.addLayout(flow)

        self.table = list_table(self.model, "Source documents", multi_select=True)
        # No sideways scrolling: the fixed columns take what their figures need, Name, Folder
        # and Why skipped share the rest and elide in the middle (the tooltip has it whole).
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(30)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        m = SourcesModel
        # Why skipped reads from its start ("corrupt (…"), a name keeps its extension ("boar…docx").
        self.table.setItemDelegateForColumn(m.COL_REASON, ElideRight(self.table))
        self.table.setColumnHidden(m.COL_FOLDER, True)
        self.table.setColumnHidden(m.COL_REASON, True)
        self.table.setColumnHidden(m.COL_FORMAT, True)        # the name has the extension
        self.table.viewport().installEventFilter(self)
        self.table.setAcceptDrops(False)
        self.table.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout.addWidget(self.table, 1)
        # The selected skipped file's reason, in full and wrapped (the column may be narrow).
        self.reason_label = QLabel()
        self.reason_label.setObjectName("hint")
        self.reason_label.setWordWrap(True)
        self.reason_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reason_label.hide()
        layout.addWidget(self.reason_label)
        self.table.selectionModel().selectionChanged.connect(self._show_reason)

        progress_row = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Reading progress")
        self.progress.setTextVisible(True)
        self.cancel_button = QToolButton()
        icons.bind(self.cancel_button, "stop")
        self.cancel_button.setAccessibleName("Stop reading")
        self.cancel_button.setToolTip("Stop reading")
        self.cancel_button.clicked.connect(self.cancel_requested)
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("hint")
        self.totals_label = QLabel()
        self.totals_label.setObjectName("hint")
        for label in (self.progress_label, self.totals_label):
            label.setWordWrap(True)            # a narrow column wraps the line, never widens
        layout.addLayout(progress_row)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.totals_label)
        self.set_reading(False)
        self._update_totals()
        self.model.rowsInserted.connect(self._update_totals)
        self.model.rowsRemoved.connect(self._update_totals)
        self.model.modelReset.connect(self._update_totals)
        self.model.dataChanged.connect(self._update_totals)

    # --- intents -------------------------------------------------------
    def choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Add files")
        if files:
            self.offer_paths(files)

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add folder")
        if folder:
            self.offer_paths([folder])

    def offer_paths(self, paths: list[str]) -> str:
        """New files or folders: with sources listed from elsewhere, ask whether they
        join them or replace them. Returns "add", "replace" or "cancel"."""
        rows = self.model.rows()
        roots = {r.source_path for r in rows}
        fresh = [str(p) for p in paths if str(p) not in roots]
        choice = "add"
        if rows and fresh:
            folders = [f for f in self.model.folders() if f]
            where = ""
            if folders:
                more = f" and {len(folders) - 3} more" if len(folders) > 3 else ""
                names = ", ".join(f"“{f}”" for f in folders[:3])
                where = f" (from the folder{'s' if len(folders) > 1 else ''} {names}{more})"
            choice = confirm.ask(
                self, "Add to the sources, or replace them?",
                f"{len(rows)} source{'s are' if len(rows) != 1 else ' is'} listed{where}. The next "
                "question is asked over every listed file.",
                [("add", "Add to them"), ("replace", "Replace them"), ("cancel", "Cancel")])
        if choice == "replace":
            self.clear_requested.emit()
        if choice != "cancel":
            self.paths_added.emit([str(p) for p in paths])
        return choice

    def ask_clear(self) -> bool:
        """The bin button: clear every source, after asking."""
        rows = self.model.rows()
        if rows and confirm.ask(self, "Clear all sources?",
                                f"The {len(rows)} listed source{'s' if len(rows) != 1 else ''} leave "
                                "the list (the files themselves stay where they are).",
                                [("clear", "Clear"), ("cancel", "Cancel")], destructive=True) != "clear":
            return False
        self.clear_requested.emit()
        return True

    def selected_paths(self) -> list[str]:
        rows = {i.row() for i in self.table.selectionModel().selectedRows()}
        return [self.model.index(r, 0).data(PATH_ROLE) for r in sorted(rows)]

    def _on_remove(self) -> None:
        paths = self.selected_paths()
        if paths:
            self.remove_requested.emit(paths)

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace) and self.table.hasFocus():
            self._on_remove()
            return
        super().keyPressEvent(event)

    def _ocr_toggled(self, on: bool) -> None:
        """OCR ticked: the scans skipped because OCR was off are read again."""
        if not on:
            return
        again = [r.source_path for r in self.model.rows()
                 if r.status != "read" and not r.is_duplicate and "OCR" in (r.reason or "")]
        if again:
            self.paths_added.emit(list(dict.fromkeys(again)))

    def ocr(self) -> bool:
        """Whether the next files are read with OCR."""
        return self.ocr_check.isChecked()

    def set_ocr(self, on: bool) -> None:
        """The default from the settings (no re-reading)."""
        self.ocr_check.blockSignals(True)
        self.ocr_check.setChecked(on)
        self.ocr_check.blockSignals(False)

    # --- what the controller calls ---------------------------------------
    def rows(self) -> list[SourceRow]:
        return self.model.rows()

    def select_cited(self, address: str) -> bool:
        """Select and show the source a citation's address names; False if none does."""
        for row, source in enumerate(self.model.rows()):
            if address == source.path or address.startswith(source.path + ":") \
                    or address.startswith(source.path + " "):
                self.table.selectRow(row)
                self.table.scrollTo(self.model.index(row, 0))
                return True
        return False

    def set_rows(self, rows: list[SourceRow]) -> None:
        self.model.set_rows(rows)

    def add_rows(self, rows: list[SourceRow]) -> None:
        self.model.add_rows(rows)

    def remove_paths(self, paths: list[str]) -> None:
        self.model.remove_paths(set(paths))

    def set_reading(self, reading: bool) -> None:
        self.progress.setVisible(reading)
        self.cancel_button.setVisible(reading)
        self.progress_label.setVisible(reading)
        if reading:
            self.progress.setRange(0, 0)   # busy until the first progress report
            self.progress_label.setText("Looking for files…")

    def set_progress(self, files_done: int, files_total: int, bytes_done: int,
                     bytes_total: int, current: str = "") -> None:
        if files_total <= 0:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, files_total)
            self.progress.setValue(min(files_done, files_total))
            self.progress.setFormat(f"{files_done} / {files_total} files")
        size = f" · {human_size(bytes_done)} of {human_size(bytes_total)}" if bytes_total else ""
        self.progress_label.setText(plain(f"Reading {Path(current).name if current else '…'}{size}"))

    def totals(self) -> dict[str, int]:
        """Read, skipped (not read: a problem) and duplicates (read once, under another
        path) counted apart, as the banner and the status bar count them."""
        rows = self.model.rows()
        read = [r for r in rows if r.status == "read"]
        duplicates = sum(r.is_duplicate for r in rows)
        return {"read": len(read), "skipped": len(rows) - len(read) - duplicates,
                "duplicates": duplicates,
                "bytes": sum(r.size for r in read), "chars": sum(r.chars for r in read),
                "tokens": sum(r.tokens for r in read), "unchanged": sum(r.unchanged for r in read)}

    def height_for_rows(self, rows: int) -> int:
        """The pane's height when its table shows `rows` rows (and its header) whole."""
        t = self.table
        table = (t.horizontalHeader().sizeHint().height() + rows * t.verticalHeader().defaultSectionSize()
                 + 2 * t.frameWidth() + t.horizontalScrollBar().sizeHint().height())
        layout = self.layout()
        if layout.hasHeightForWidth():          # wrapped button rows and totals at this width
            rest = layout.totalHeightForWidth(max(1, self.width())) - t.sizeHint().height()
        else:
            rest = layout.minimumSize().height() - t.minimumSizeHint().height()
        return rest + table

    def _show_reason(self, *_args) -> None:
        rows = [self.model.rows()[i.row()] for i in self.table.selectionModel().selectedRows()]
        skipped = [r for r in rows if r.status != "read"]
        if len(skipped) == 1:
            self.reason_label.setText(plain(f"{skipped[0].name} was skipped: {skipped[0].reason}."))
        elif skipped:
            self.reason_label.setText(f"{len(skipped)} of the selected files were skipped; "
                                      "the last column says why.")
        self.reason_label.setVisible(bool(skipped))

    def _update_columns(self) -> None:
        """The folder column shows with two folders or more, the reason column with a skip."""
        m = self.model
        self.table.setColumnHidden(m.COL_FOLDER, len(m.folders()) < 2)
        self.table.setColumnHidden(m.COL_REASON, not any(r.status != "read" for r in m.rows()))
        self.fit_columns()

    FIXED_SAMPLES = {SourcesModel.COL_STATUS: "duplicate", SourcesModel.COL_SIZE: "999.9 KB",
                     SourcesModel.COL_TOKENS: "99.9M", SourcesModel.COL_FORMAT: "docx"}
    SHARES = {SourcesModel.COL_NAME: 5, SourcesModel.COL_FOLDER: 3, SourcesModel.COL_REASON: 4}

    def fit_columns(self) -> None:
        """Every shown column inside the table's width: the figures at their widths, the
        rest shared by weight (Why skipped never below its header)."""
        t, header = self.table, self.table.horizontalHeader()
        fm, pad = header.fontMetrics(), 12
        room = t.viewport().width()
        shown = [c for c in range(len(SourcesModel.COLUMNS)) if not t.isColumnHidden(c)]
        fixed = {c: max(fm.horizontalAdvance(SourcesModel.COLUMNS[c]),
                        t.fontMetrics().horizontalAdvance(sample)) + pad
                 for c, sample in self.FIXED_SAMPLES.items() if c in shown}
        room -= sum(fixed.values())
        shared = [c for c in shown if c in self.SHARES]
        floor = {c: (fm.horizontalAdvance(SourcesModel.COLUMNS[c]) + 8 if c == SourcesModel.COL_REASON
                     else 80 if c == SourcesModel.COL_NAME else 50) for c in shared}
        # Too narrow for every column to be read: the size goes to the tooltip first, then
        # the folder (the name keeps its room).
        if room < sum(floor.values()) and fixed.get(SourcesModel.COL_SIZE):
            room += fixed[SourcesModel.COL_SIZE]
            fixed[SourcesModel.COL_SIZE] = 0
        if SourcesModel.COL_FOLDER in shared and room < sum(floor.values()):
            shared.remove(SourcesModel.COL_FOLDER)
            floor.pop(SourcesModel.COL_FOLDER)
            fixed[SourcesModel.COL_FOLDER] = 0
        weight = sum(self.SHARES[c] for c in shared) or 1
        widths = {c: max(floor[c], room * self.SHARES[c] // weight) for c in shared}
        over = sum(widths.values()) - room
        name = SourcesModel.COL_NAME
        if over > 0 and name in widths:          # narrower still: the name gives way last
            widths[name] = max(30, widths[name] - over)
        for c, w in {**fixed, **widths}.items():
            header.resizeSection(c, w)

    def eventFilter(self, obj, event) -> bool:
        if obj is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self.fit_columns()
        return super().eventFilter(obj, event)

    def _update_totals(self, *_args) -> None:
        self._update_columns()
        t = self.totals()
        if not t["read"] and not t["skipped"]:
            self.totals_label.setText("No sources yet.")
            return
        files = f"{t['read']} read" + (f" ({t['unchanged']} unchanged since an earlier read)"
                                       if t["unchanged"] else "")
        text = f"{files} · {human_size(t['bytes'])} · {about_tokens(t['tokens'])}"
        if t["skipped"]:
            text += f" · {t['skipped']} skipped"
        if t["duplicates"]:
            text += f" · {duplicates_text(t['duplicates'])}"
        self.totals_label.setText(text)
