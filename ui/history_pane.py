"""History: past runs with search and filters; open (replay), export, delete, re-run.

The pane shows `HistoryRow`s and emits intents; app/controller.py asks the
store. Filters are sent as one dict: {"search", "status", "model", "since_days", "evaluations"}.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from core.control_chars import escape_controls
from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
    QMenu, QPushButton, QToolButton, QVBoxLayout, QWidget,
)

from core.plain_call import plain_call_line
from core.run_names import fork_line, run_title, short_question
from core.support import unsupported_line
from ui import icons
from ui.rows import RowTableModel, list_table
from ui.plain_text import plain

RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 1
STATUSES = ("finished", "capped", "failed", "cancelled", "interrupted", "running")
PERIODS = (("Any time", None), ("Today", 1), ("Last 7 days", 7), ("Last 30 days", 30),
           ("Last year", 365))
EXPORT_FORMATS = (("json", "JSON"), ("md", "Markdown"), ("html", "HTML"))


@dataclass(frozen=True)
class HistoryRow:
    id: str
    question: str
    status: str
    created: datetime | None = None
    root_model: str = ""
    sub_model: str = ""
    cost_usd: float | None = None
    duration_ms: int | None = None
    limited: str = ""            # what a cap or limit changed (core/limits.py), "" when nothing
    unpriced: str = ""           # models without a known price: the cost is unknown
    unsupported: tuple[str, ...] = ()    # values of the answer nothing the run read holds
    evaluation_id: str = ""      # the evaluation whose question it answered ("" for the user's own runs)
    parent_run_id: str = ""      # a re-run, follow-up or fork: the run it came from
    fork_turn: int | None = None     # a fork: the parent's turn it went on from
    plain_call: str = ""         # "one plain call: N tokens in, M out" for a plain call (core/plain_call.py)

    @classmethod
    def of_run(cls, run: dict) -> "HistoryRow":
        """A row for one of RunStore.list_runs()'s dicts."""
        created = parse_time(run.get("created_utc"))
        duration = run.get("wall_ms")
        if duration is None:
            finished = parse_time(run.get("finished_utc"))
            if created and finished:
                duration = int((finished - created).total_seconds() * 1000)
        return cls(id=str(run["id"]), question=run.get("question") or "",
                   status=run.get("status") or "", created=created,
                   root_model=run.get("root_model_label") or run.get("root_model") or "",
                   sub_model=run.get("sub_model_label") or run.get("sub_model") or "",
                   cost_usd=run.get("cost_usd"), duration_ms=duration, limited=run.get("limited") or "",
                   unpriced=run.get("unpriced") or "",
                   unsupported=tuple(str(v) for v in run.get("unsupported") or ()),
                   evaluation_id=run.get("evaluation_id") or "",
                   parent_run_id=run.get("parent_run_id") or "", fork_turn=run.get("fork_turn"),
                   plain_call=plain_call_line(run) or "")


def format_when(created: datetime | None, now: datetime | None = None) -> str:
    """"09:29" today, "12-01 09:29" this year, "2025-12-01 09:29" before: short in a narrow pane."""
    if created is None:
        return ""
    local = created.astimezone()
    now = (now or datetime.now(timezone.utc)).astimezone()
    if local.date() == now.date():
        return local.strftime("%H:%M")
    if local.year == now.year:
        return local.strftime("%m-%d %H:%M")
    return local.strftime("%Y-%m-%d %H:%M")


def format_duration(ms: int | None) -> str:
    if ms is None:
        return ""
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def format_cost(usd: float | None, unknown_part: bool = False) -> str:
    """A run's cost; with `unknown_part` (a model had no price) never a bare "$0.0000"."""
    if usd is None:
        return ""
    text = f"${usd:.4f}" if usd < 0.1 else f"${usd:.2f}"
    if unknown_part:
        return f"{text} + ?" if usd > 0 else "unknown"
    return text


class HistoryModel(RowTableModel):
    # Models last: it takes what is left, and the question keeps its width.
    COLUMNS = ("When", "Question", "Status", "Cost", "Duration", "Models")
    (COL_WHEN, COL_QUESTION, COL_STATUS, COL_COST, COL_DURATION, COL_MODELS) = range(6)

    _rows: list[HistoryRow]

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return format_when(row.created)
            if col == 1:
                return escape_controls(" ".join(row.question.split())[:200])
            if col == 2:
                return " · ".join([row.status] + [f"fork of turn {row.fork_turn}"] * bool(row.fork_turn)
                                  + ["limited"] * bool(row.limited)
                                  + ["unsupported"] * bool(row.unsupported)
                                  + ["one plain call"] * bool(row.plain_call)
                                  + ["evaluation"] * bool(row.evaluation_id))
            if col == 5:
                return row.root_model if row.sub_model in ("", row.root_model) \
                    else f"{row.root_model} / {row.sub_model}"
            if col == 3:
                return format_cost(row.cost_usd, bool(row.unpriced))
            if col == 4:
                return format_duration(row.duration_ms)
        if role == Qt.ItemDataRole.ToolTipRole:
            when = row.created.astimezone().strftime("%Y-%m-%d %H:%M") if row.created else ""
            tip = f"{row.question}\n\nrun {row.id}, {when}\nroot {row.root_model}, sub {row.sub_model or row.root_model}"
            line = unsupported_line({"unsupported": list(row.unsupported)})
            tip += f"\n{row.plain_call[:1].upper()}{row.plain_call[1:]}" if row.plain_call else ""
            fork = fork_line(self.fork_of(row))
            return plain(tip + (f"\n\n{fork}" if fork else "") + (f"\n\nLimited: {row.limited}" if row.limited else "")
                                   + (f"\nUnsupported: {line}" if line else ""))
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (3, 4):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == RUN_ID_ROLE:
            return row.id
        return None

    def fork_of(self, row: HistoryRow) -> dict | None:
        """RunStarted.forked_from of a fork's row, its parent named by its row when listed."""
        if not row.fork_turn or not row.parent_run_id:
            return None
        parent = next((r for r in self._rows if r.id == row.parent_run_id), None)
        title = run_title({"question": parent.question, "created_utc": parent.created.timestamp()}
                          if parent is not None and parent.created else {"id": row.parent_run_id})
        return {"run_id": row.parent_run_id, "turn": row.fork_turn, "title": title}

    def set_rows(self, rows: list[HistoryRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def rows(self) -> list[HistoryRow]:
        return list(self._rows)

    def row_of(self, run_id: str) -> int:
        for i, row in enumerate(self._rows):
            if row.id == run_id:
                return i
        return -1


class HistoryPane(QWidget):
    filters_changed = Signal(dict)
    open_requested = Signal(str)
    export_requested = Signal(str, str)    # run id, "json" | "md" | "html"
    delete_requested = Signal(str)
    rerun_requested = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = HistoryModel(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        title = QLabel("History")
        title.setObjectName("paneTitle")
        layout.addWidget(title)

        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Search questions and answers")
        self.search_edit.setAccessibleName("Search runs")
        self.search_edit.setClearButtonEnabled(True)
        icons.bind(self.search_edit.addAction(icons.icon("search"),
                                              QLineEdit.ActionPosition.LeadingPosition), "search")
        layout.addWidget(self.search_edit)

        filters = QHBoxLayout()
        self.status_combo = QComboBox()
        self.status_combo.setAccessibleName("Filter by status")
        self.status_combo.addItem("Any status", None)
        for status in STATUSES:
            self.status_combo.addItem(status.capitalize(), status)
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("Model")
        self.model_edit.setAccessibleName("Filter by model")
        self.period_combo = QComboBox()
        self.period_combo.setAccessibleName("Filter by date")
        for label, days in PERIODS:
            self.period_combo.addItem(label, days)
        filters.addWidget(self.status_combo)
        filters.addWidget(self.model_edit, 1)
        filters.addWidget(self.period_combo)
        layout.addLayout(filters)
        # An evaluation's runs (Models > Scorecards) are many and alike: hidden unless asked for.
        self.evaluations_check = QCheckBox("Show evaluation runs")
        self.evaluations_check.setToolTip("Runs that answered the questions of an evaluation "
                                          "(Models > Scorecards); hidden by default")
        layout.addWidget(self.evaluations_check)

        self.table = list_table(self.model, "Past runs")
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        metrics = header.fontMetrics()
        m = HistoryModel
        for col, sample in ((m.COL_WHEN, "12-01 07:24"), (m.COL_QUESTION, "Which quarterly report"),
                            (m.COL_STATUS, "interrupted"), (m.COL_COST, "$0.0000"),
                            (m.COL_DURATION, "10 min 00 s"), (m.COL_MODELS, "ollama/qwen2.5")):
            self.table.setColumnWidth(col, max(metrics.horizontalAdvance(sample),
                                               metrics.horizontalAdvance(m.COLUMNS[col])) + 20)
        self.table.doubleClicked.connect(lambda _i: self._emit_for_selected(self.open_requested))
        layout.addWidget(self.table, 1)
        # A selected fork names its parent, with a link that replays it.
        self.fork_label = QLabel()
        self.fork_label.setObjectName("hint")
        self.fork_label.setWordWrap(True)
        self.fork_label.setTextFormat(Qt.TextFormat.RichText)
        self.fork_label.linkActivated.connect(self.open_requested.emit)
        self.fork_label.hide()
        layout.addWidget(self.fork_label)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._show_fork())

        actions = QHBoxLayout()
        self.open_button = QPushButton("Replay")
        icons.bind(self.open_button, "open")
        self.open_button.setToolTip("Replay the selected run in the panes")
        self.open_button.clicked.connect(lambda: self._emit_for_selected(self.open_requested))
        self.rerun_button = QPushButton("Re-run")
        icons.bind(self.rerun_button, "rerun")
        self.rerun_button.setToolTip("Load its sources, question, models and caps to run again")
        self.rerun_button.clicked.connect(self.ask_rerun)
        # Set by the window: asks before a re-run replaces the sources (False: keep them).
        self.confirm_rerun: Callable[[], bool] | None = None
        self.export_button = QToolButton()
        icons.bind(self.export_button, "export")
        self.export_button.setAccessibleName("Export the selected run")
        self.export_button.setToolTip("Export (JSON, Markdown, HTML)")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        self.export_actions: dict[str, QAction] = {}
        for fmt, label in EXPORT_FORMATS:
            action = menu.addAction(f"Export as {label}…")
            action.triggered.connect(lambda _c=False, f=fmt: self._emit_export(f))
            self.export_actions[fmt] = action
        self.export_button.setMenu(menu)
        self.delete_button = QToolButton()
        icons.bind(self.delete_button, "delete")
        self.delete_button.setAccessibleName("Delete the selected run")
        self.delete_button.setToolTip("Delete the selected run")
        self.delete_button.clicked.connect(lambda: self._emit_for_selected(self.delete_requested))
        actions.addWidget(self.open_button)
        actions.addWidget(self.rerun_button)
        actions.addStretch(1)
        actions.addWidget(self.export_button)
        actions.addWidget(self.delete_button)
        layout.addLayout(actions)
        self.empty_label = QLabel("No runs yet.")
        self.empty_label.setObjectName("hint")
        layout.addWidget(self.empty_label)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(250)
        self._debounce.timeout.connect(self._emit_filters)
        self.search_edit.textChanged.connect(self._debounce.start)
        self.model_edit.textChanged.connect(self._debounce.start)
        self.status_combo.currentIndexChanged.connect(self._emit_filters)
        self.period_combo.currentIndexChanged.connect(self._emit_filters)
        self.evaluations_check.toggled.connect(self._emit_filters)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)
        self.model.modelReset.connect(self._update_buttons)
        self._update_buttons()

    def filters(self) -> dict:
        return {"search": self.search_edit.text().strip() or None,
                "status": self.status_combo.currentData(),
                "model": self.model_edit.text().strip() or None,
                "since_days": self.period_combo.currentData(),
                "evaluations": self.evaluations_check.isChecked()}

    def _emit_filters(self) -> None:
        self.filters_changed.emit(self.filters())

    def set_rows(self, rows: list[HistoryRow]) -> None:
        selected = self.selected_id()
        self.model.set_rows(rows)
        self.empty_label.setVisible(not rows)
        if selected:
            self.select(selected)

    def select(self, run_id: str) -> bool:
        row = self.model.row_of(run_id)
        if row < 0:
            return False
        self.table.selectRow(row)
        return True

    def _show_fork(self) -> None:
        run_id = self.selected_id()
        row = next((r for r in self.model.rows() if r.id == run_id), None) if run_id else None
        fork = self.model.fork_of(row) if row is not None else None
        if fork is None:
            self.fork_label.hide()
            return
        self.fork_label.setText(f"{html.escape(fork_line(fork))} <a href=\"{html.escape(fork['run_id'])}\">"
                                "Replay the parent run</a>")
        self.fork_label.show()

    def selected_id(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].data(RUN_ID_ROLE) if rows else None

    def _emit_for_selected(self, signal) -> None:
        run_id = self.selected_id()
        if run_id:
            signal.emit(run_id)

    def selected_question(self) -> str:
        """The selected run's question, cut to a line ("" when none is selected)."""
        run_id = self.selected_id()
        row = next((r for r in self.model.rows() if r.id == run_id), None) if run_id else None
        return short_question(row.question) if row is not None else ""

    def ask_rerun(self) -> bool:
        """Re-run: it replaces the sources with the stored run's, so ask first."""
        if self.selected_id() is None:
            return False
        if self.confirm_rerun is not None and not self.confirm_rerun():
            return False
        self._emit_for_selected(self.rerun_requested)
        return True

    def _emit_export(self, fmt: str) -> None:
        run_id = self.selected_id()
        if run_id:
            self.export_requested.emit(run_id, fmt)

    def _update_buttons(self, *_args) -> None:
        has = self.selected_id() is not None
        for widget in (self.open_button, self.rerun_button, self.export_button, self.delete_button):
            widget.setEnabled(has)

    # --- a place for extra parts (app/ glue adds its widgets here, never into the layout) ----
    def add_accessory(self, widget: QWidget) -> None:
        """Show `widget` under the pane's own action buttons (above the empty-list hint)."""
        layout = self.layout()
        layout.insertWidget(max(0, layout.indexOf(self.empty_label)), widget)


def parse_time(value) -> datetime | None:
    """A store timestamp (ISO text or epoch seconds) as an aware datetime."""
    if value in (None, ""):
        return None
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(float(value), tz=timezone.utc)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
