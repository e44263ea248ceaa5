"""Sources: the documents a question is asked over.

A drop zone for files and folders from the OS file manager, Add files / Add
folder buttons, a table of what was read (or skipped, with the reason), totals
and a progress bar while a big folder is read. The pane only shows rows and
sends intents (signals); app/controller.py does the reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.control_chars import escape_controls
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QFileDialog, QFrame, QHBoxLayout, QHeaderView, QLabel,
    QProgressBar, QPushButton, QToolButton, QVBoxLayout, QWidget,
)

from ui import confirm, icons
from ui.rows import RowTableModel, list_table, human_count, human_size  # noqa: F401  (re-exported)

PATH_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2


@dataclass(frozen=True)
class SourceRow:
    path: str                  # the document's path (inside an archive: a path below it)
    status: str                # "read" | "skipped"
    format: str = ""
    size: int = 0
    chars: int = 0
    reason: str = ""           # for skipped rows: why
    source_path: str = ""      # the file or folder the user added
    note: str = ""             # for read rows: "OCR: pages 2, 3"
    unchanged: bool = False    # not read again: the same file as an earlier read

    @classmethod
    def of_document(cls, doc) -> "SourceRow":
        """A row for an ingested (or stored) document: path, format, size, chars."""
        pages = tuple(getattr(doc, "ocr_pages", ()) or ())
        note = f"OCR: page{'s' if len(pages) > 1 else ''} {', '.join(map(str, pages))}" if pages else ""
        return cls(path=doc.path, status="read", format=doc.format or "", size=doc.size or 0,
                   chars=doc.chars, source_path=getattr(doc, "source_path", "") or "", note=note,
                   unchanged=bool(getattr(doc, "unchanged", False)))

    @classmethod
    def of_skip(cls, skip) -> "SourceRow":
        """A row for a file that was not read: path, reason, detail."""
        reason = (skip.reason or "unknown").replace("_", " ") + (f" ({skip.detail})" if skip.detail else "")
        if skip.reason == "duplicate" and skip.detail:
            reason = skip.detail           # "duplicate of PATH": read once, costs nothing
        return cls(path=skip.path, status="skipped", format=Path(skip.path).suffix.lstrip("."),
                   size=getattr(skip, "size", 0) or 0, reason=reason,
                   source_path=getattr(skip, "source_path", "") or "")

    @property
    def name(self) -> str:
        return Path(self.path).name or self.path

    @property
    def tokens(self) -> int:
        return self.chars // 4

    @property
    def folder(self) -> str:
        """The folder the user added this file with ("" for a file added on its own)."""
        root = self.source_path.rstrip("/\\")
        if not root or root == self.path or Path(root).name == self.name:
            parent = str(Path(self.path).parent)
            return "" if parent == "." else parent
        return Path(root).name


class SourcesModel(RowTableModel):
    """Rows of SourceRow, one per document or skipped file."""

    # The skip reason has the last column: however wide it is made, it pushes nothing away.
    # The numbers right after the name and status, so a narrow pane still shows them.
    COLUMNS = ("Name", "Status", "Size", "Tokens (est.)", "Folder", "Format", "Why skipped")
    (COL_NAME, COL_STATUS, COL_SIZE, COL_TOKENS, COL_FOLDER, COL_FORMAT, COL_REASON) = range(7)

    _rows: list[SourceRow]

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if row.status == "read":
                status = f"read ({row.note})" if row.note else "read"
            else:   # a duplicate is not lost: its text is in the context once, under the other path
                status = "duplicate" if row.reason.startswith("duplicate of ") else "skipped"
            return escape_controls((row.name, status, human_size(row.size),   # file names: \u00XX
                                    human_count(row.tokens) if row.status == "read" else "", row.folder,
                                    row.format, row.reason if row.status != "read" else "")[col])
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = row.path
            if row.status != "read":
                tip += f"\nskipped: {row.reason}"
            return escape_controls(tip)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (self.COL_SIZE, self.COL_TOKENS):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == PATH_ROLE:
            return row.path
        if role == SORT_ROLE:
            return (row.name.lower(), row.status, row.size, row.tokens, row.folder.lower(), row.format,
                    row.reason)[col]
        return None

    def folders(self) -> list[str]:
        return list(dict.fromkeys(r.folder for r in self._rows))

    def rows(self) -> list[SourceRow]:
        return list(self._rows)

    def set_rows(self, rows: list[SourceRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def add_rows(self, rows: list[SourceRow]) -> None:
        """Append rows; a row whose path is already listed replaces the old one."""
        known = {r.path: i for i, r in enumerate(self._rows)}
        fresh = []
        for row in rows:
            if row.path in known:
                i = known[row.path]
                self._rows[i] = row
                self.dataChanged.emit(self.index(i, 0), self.index(i, len(self.COLUMNS) - 1))
            else:
                known[row.path] = len(self._rows) + len(fresh)
                fresh.append(row)
        if fresh:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
            self._rows.extend(fresh)
            self.endInsertRows()

    def remove_paths(self, paths: set[str]) -> None:
        for i in range(len(self._rows) - 1, -1, -1):
            if self._rows[i].path in paths:
                self.beginRemoveRows(QModelIndex(), i, i)
                del self._rows[i]
                self.endRemoveRows()


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

        buttons = QHBoxLayout()
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
        buttons.addWidget(self.add_files_button)
        buttons.addWidget(self.add_folder_button)
        buttons.addStretch(1)
        buttons.addWidget(self.remove_button)
        buttons.addWidget(self.clear_button)
        layout.addLayout(buttons)

        self.table = list_table(self.model, "Source documents", multi_select=True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.setMinimumSectionSize(36)
        m = SourcesModel
        for col, width in ((m.COL_NAME, 120), (m.COL_FOLDER, 90), (m.COL_STATUS, 60),
                           (m.COL_FORMAT, 70), (m.COL_SIZE, 64), (m.COL_TOKENS, 84)):
            self.table.setColumnWidth(col, max(width, header.fontMetrics().horizontalAdvance(
                m.COLUMNS[col]) + 18))
        self.table.setColumnHidden(m.COL_FOLDER, True)
        self.table.setColumnHidden(m.COL_REASON, True)
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
            where = f" from {', '.join(folders[:3])}" if folders else ""
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

    # --- what the controller calls ---------------------------------------
    def rows(self) -> list[SourceRow]:
        return self.model.rows()

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
        self.progress_label.setText(f"Reading {Path(current).name if current else '…'}{size}")

    def totals(self) -> dict[str, int]:
        rows = self.model.rows()
        read = [r for r in rows if r.status == "read"]
        return {"read": len(read), "skipped": len(rows) - len(read),
                "bytes": sum(r.size for r in read), "chars": sum(r.chars for r in read),
                "unchanged": sum(r.unchanged for r in read)}

    def height_for_rows(self, rows: int) -> int:
        """The pane's height when its table shows `rows` rows (and its header) whole."""
        t = self.table
        table = (t.horizontalHeader().sizeHint().height() + rows * t.verticalHeader().defaultSectionSize()
                 + 2 * t.frameWidth() + t.horizontalScrollBar().sizeHint().height())
        return self.layout().minimumSize().height() - t.minimumSizeHint().height() + table

    def _show_reason(self, *_args) -> None:
        rows = [self.model.rows()[i.row()] for i in self.table.selectionModel().selectedRows()]
        skipped = [r for r in rows if r.status != "read"]
        if len(skipped) == 1:
            self.reason_label.setText(f"{skipped[0].name} was skipped: {skipped[0].reason}.")
        elif skipped:
            self.reason_label.setText(f"{len(skipped)} of the selected files were skipped; "
                                      "the last column says why.")
        self.reason_label.setVisible(bool(skipped))

    def _update_columns(self) -> None:
        """The folder column shows with two folders or more, the reason column with a skip."""
        m = self.model
        self.table.setColumnHidden(m.COL_FOLDER, len(m.folders()) < 2)
        self.table.setColumnHidden(m.COL_REASON, not any(r.status != "read" for r in m.rows()))

    def _update_totals(self, *_args) -> None:
        self._update_columns()
        t = self.totals()
        if not t["read"] and not t["skipped"]:
            self.totals_label.setText("No sources yet.")
            return
        files = f"{t['read']} read" + (f" ({t['unchanged']} unchanged)" if t["unchanged"] else "")
        text = f"{files} · {human_size(t['bytes'])} · ~{human_count(t['chars'] // 4)} tokens"
        if t["skipped"]:
            text += f" · {t['skipped']} skipped"
        self.totals_label.setText(text)
