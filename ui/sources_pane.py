"""Sources: the documents a question is asked over.

A drop zone for files and folders from the OS file manager, Add files / Add
folder buttons, a table of what was read (or skipped, with the reason), totals
and a progress bar while a big folder is read. The pane only shows rows and
sends intents (signals); app/controller.py does the reading.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QRect, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QCheckBox, QFileDialog, QFrame, QHBoxLayout, QHeaderView, QLabel,
    QProgressBar, QPushButton, QStyle, QStyleOptionViewItem, QStyledItemDelegate, QToolButton,
    QVBoxLayout, QWidget,
)

from core.token_count import about_tokens
from ui import confirm, icons
from ui.flow_layout import FlowLayout
from ui.name_elide import differing_parts, elide_name
from ui.plain_text import plain
from ui.rows import RowTableModel, list_table, human_count, human_size  # noqa: F401  (re-exported)
from ui.sources_model import (  # noqa: F401  (re-exported)
    PATH_ROLE, SORT_ROLE, SourceRow, SourcesModel, duplicates_text,
)

def text_margin(widget: QWidget) -> int:
    """What a table cell takes off its width around the text (both sides)."""
    return 2 * (widget.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1)


class WrappedText(QStyledItemDelegate):
    """A column whose text wraps in its cell (the pane makes the row tall enough)."""

    def initStyleOption(self, option, index) -> None:
        super().initStyleOption(option, index)
        option.features |= QStyleOptionViewItem.ViewItemFeature.WrapText
        option.textElideMode = Qt.TextElideMode.ElideNone


class NameElide(QStyledItemDelegate):
    """Names cut where they are alike with the other names, never where they differ; the
    extension kept (ui/name_elide.py). `parts` is set by the pane when its rows change."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.parts: dict[str, tuple[int, int]] = {}

    def initStyleOption(self, option, index) -> None:
        super().initStyleOption(option, index)
        name = option.text
        room = option.rect.width() - text_margin(self.parent())
        if not name or room <= 0 or name not in self.parts:
            return
        metrics = option.fontMetrics
        cut = elide_name(name, self.parts[name], lambda t: metrics.horizontalAdvance(t) <= room)
        if cut is not None:
            option.text = cut


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
        # No sideways scrolling: the fixed columns take what their figures need, Name and
        # Folder the room their texts need first, Why skipped the rest, wrapped in its cell. A
        # name too long for its column is cut where it is like the others (the tooltip has it).
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(30)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        m = SourcesModel
        self.name_delegate = NameElide(self.table)
        self.table.setItemDelegateForColumn(m.COL_NAME, self.name_delegate)
        self.table.setItemDelegateForColumn(m.COL_REASON, WrappedText(self.table))
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
        rows = m.rows()
        self.name_delegate.parts = differing_parts(r.name for r in rows)
        self.table.setColumnHidden(m.COL_FOLDER, len(m.folders()) < 2)
        self.table.setColumnHidden(m.COL_REASON, not any(r.status != "read" for r in rows))
        self.fit_columns()

    FIXED_SAMPLES = {SourcesModel.COL_STATUS: "duplicate", SourcesModel.COL_SIZE: "999.9 KB",
                     SourcesModel.COL_TOKENS: "99.9M", SourcesModel.COL_FORMAT: "docx"}
    SHARED = (SourcesModel.COL_NAME, SourcesModel.COL_FOLDER, SourcesModel.COL_REASON)   # in this order
    MEASURED_ROWS = 2000        # the widest text among this many rows sizes a column

    def fit_columns(self) -> None:
        """Every shown column inside the table's width: the figures at their widths, then
        Name and Folder as wide as their texts (when there is room), Why skipped the rest
        (never below its header; its text wraps and its rows grow)."""
        t, header, m = self.table, self.table.horizontalHeader(), SourcesModel
        fm, pad = header.fontMetrics(), 12
        room = t.viewport().width()
        shown = [c for c in range(len(m.COLUMNS)) if not t.isColumnHidden(c)]
        rows = self.model.rows()[:self.MEASURED_ROWS]
        samples = dict(self.FIXED_SAMPLES)        # the status: the widest word the rows have
        samples[m.COL_STATUS] = max(({"read": "read"}.get(r.status, "duplicate" if r.is_duplicate else "skipped")
                                     for r in rows), key=len, default="read")
        fixed = {c: max(fm.horizontalAdvance(m.COLUMNS[c]), t.fontMetrics().horizontalAdvance(sample)) + pad
                 for c, sample in samples.items() if c in shown}
        room -= sum(fixed.values())
        shared = [c for c in self.SHARED if c in shown]
        texts = {m.COL_NAME: [r.name for r in rows], m.COL_FOLDER: list(dict.fromkeys(r.folder for r in rows))}
        needs = {c: max((t.fontMetrics().horizontalAdvance(x) for x in texts[c]), default=0) + pad
                 for c in texts}
        # The name before the others: up to 40% of the table whatever else is shown.
        floor = {c: (fm.horizontalAdvance(m.COLUMNS[c]) + pad if c == m.COL_REASON
                     else max(80, min(needs[c], t.viewport().width() * 2 // 5)) if c == m.COL_NAME
                     else 50) for c in shared}
        # Too narrow for every column to be read: the size goes to the tooltip first, then
        # the folder, then the tokens (the name keeps its room).
        if room < sum(floor.values()) and fixed.get(m.COL_SIZE):
            room += fixed[m.COL_SIZE]
            fixed[m.COL_SIZE] = 0
        if m.COL_FOLDER in shared and room < sum(floor.values()):
            shared.remove(m.COL_FOLDER)
            floor.pop(m.COL_FOLDER)
            fixed[m.COL_FOLDER] = 0
        if room < sum(floor.values()) and fixed.get(m.COL_TOKENS):
            room += fixed[m.COL_TOKENS]
            fixed[m.COL_TOKENS] = 0
        widths = dict(floor)
        for c in shared:                # in order: each takes what its widest text needs, if left
            if c in needs:
                widths[c] = max(floor[c], min(needs[c], widths[c] + room - sum(widths.values())))
        if shared:                      # what is left: the last shown (Why skipped, wrapped)
            widths[shared[-1]] += max(0, room - sum(widths.values()))
        over = sum(widths.values()) - room
        if over > 0 and m.COL_NAME in widths:     # narrower still: the name down to "…Q1….md"
            give = min(over, max(0, widths[m.COL_NAME] - 64))
            widths[m.COL_NAME] -= give
            over -= give
        if over > 0 and m.COL_REASON in widths:   # then the reason to its header's bare width
            give = min(over, max(0, widths[m.COL_REASON] - fm.horizontalAdvance(m.COLUMNS[m.COL_REASON]) - 4))
            widths[m.COL_REASON] -= give
            over -= give
        if over > 0 and m.COL_NAME in widths:
            widths[m.COL_NAME] = max(30, widths[m.COL_NAME] - over)
        for c, w in {**fixed, **widths}.items():
            header.resizeSection(c, w)
        t.horizontalScrollBar().setValue(0)     # a wider layout before may have scrolled it
        self._fit_reason_rows(widths.get(m.COL_REASON, 0))

    def _fit_reason_rows(self, width: int) -> None:
        """A skipped row as tall as its wrapped reason; the other rows at the default height."""
        rows, vh = self.model.rows(), self.table.verticalHeader()
        default = vh.defaultSectionSize()
        room = width - text_margin(self.table)
        metrics = self.table.fontMetrics()
        for i, row in enumerate(rows[:self.MEASURED_ROWS]):
            height = default
            if row.status != "read" and room > 0:
                box = metrics.boundingRect(QRect(0, 0, room, 10_000), int(Qt.TextFlag.TextWordWrap),
                                           row.reason)
                height = max(default, box.height() + 6)
            if vh.sectionSize(i) != height:
                vh.resizeSection(i, height)

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
