"""The rows of the Sources list: one per document read or file skipped."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt

from core.control_chars import escape_controls
from core.token_count import text_tokens
from ui.plain_text import plain
from ui.rows import RowTableModel, human_count, human_size

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
    estimated_tokens: int | None = None   # core.token_count.text_tokens of the text (None: chars / 4)

    @classmethod
    def of_document(cls, doc) -> "SourceRow":
        """A row for an ingested (or stored) document: path, format, size, chars."""
        pages = tuple(getattr(doc, "ocr_pages", ()) or ())
        note = f"OCR: page{'s' if len(pages) > 1 else ''} {', '.join(map(str, pages))}" if pages else ""
        return cls(path=doc.path, status="read", format=doc.format or "", size=doc.size or 0,
                   chars=doc.chars, source_path=getattr(doc, "source_path", "") or "", note=note,
                   unchanged=bool(getattr(doc, "unchanged", False)),
                   estimated_tokens=_tokens(doc))

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
    def is_duplicate(self) -> bool:
        return self.status != "read" and self.reason.startswith("duplicate of ")

    @property
    def tokens(self) -> int:
        return self.estimated_tokens if self.estimated_tokens is not None else self.chars // 4

    @property
    def folder(self) -> str:
        """The folder the user added this file with ("" for a file added on its own)."""
        root = self.source_path.rstrip("/\\")
        if not root or root == self.path or Path(root).name == self.name:
            parent = str(Path(self.path).parent)
            return "" if parent == "." else parent
        return Path(root).name


def _tokens(doc) -> int | None:
    """The document's estimated tokens: those ingestion kept (a Document whose text is read
    back on demand is not read for them), else of its text; None without either."""
    kept = getattr(doc, "tokens", None)
    if kept is not None:
        return int(kept)
    if getattr(doc, "held", True) is False:
        return None                          # chars / 4
    text = getattr(doc, "text", None)
    return text_tokens(text) if text is not None else None


def duplicates_text(n: int) -> str:
    """The words for files read once under another path, the same in the totals line,
    the status bar and the CLI: "1 duplicate (read once)"."""
    return f"{n} duplicate{'s' if n != 1 else ''} (read once)"


class SourcesModel(RowTableModel):
    """Rows of SourceRow, one per document or skipped file."""

    # The skip reason has the last column: however wide it is made, it pushes nothing away.
    # The numbers right after the name and status, so a narrow pane still shows them.
    COLUMNS = ("Name", "Status", "Size", "~Tokens", "Folder", "Format", "Why skipped")
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
                status = "duplicate" if row.is_duplicate else "skipped"
            return escape_controls((row.name, status, human_size(row.size),   # file names: \u00XX
                                    human_count(row.tokens) if row.status == "read" else "", row.folder,
                                    row.format, row.reason if row.status != "read" else "")[col])
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = row.path + (f"\nfolder: {row.folder}" if row.folder else "") + \
                (f"\n{human_size(row.size)}" + (f" · {row.format}" if row.format else "") if row.size else "") + \
                (f"\n~{human_count(row.tokens)} tokens" if row.status == "read" else "")
            if row.status != "read":
                tip += f"\nskipped: {row.reason}"
            return plain(tip)
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
