"""The main window: sources and question on the left, the run panes in the
middle (with their replay bar while a stored run is replayed),
history on the right; a banner for errors and a status bar.

The window owns layout, shortcuts and its saved state; it has no logic of its
own: app/controller.py connects the panes' signals to the work.
"""

from __future__ import annotations

import base64
import logging
from typing import Callable

from PySide6.QtCore import QByteArray, QEvent, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QLabel, QMainWindow, QSizePolicy, QSplitter, QToolBar, QVBoxLayout, QWidget,
)

from ui import icons
from ui.history_pane import HistoryPane
from ui.notifier import Banner, Notification, Notifier
from ui.question_panel import QuestionPanel
from ui.run_panes import RunPanes
from ui.sources_pane import SourcesPane

log = logging.getLogger(__name__)


class MainWindow(QMainWindow):
    first_painted = Signal()
    settings_requested = Signal(str)     # the settings page to open ("" for the first)
    closing = Signal()
    leave_replay_requested = Signal()

    def __init__(self, notifier: Notifier | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("RLM Studio")
        self.setObjectName("mainWindow")
        self.resize(1400, 860)
        self.notifier = notifier or Notifier(self)
        self._painted = False
        self.close_guard: Callable[[], bool] | None = None   # False keeps the window open

        self.sources_pane = SourcesPane()
        self.question_panel = QuestionPanel()
        self.history_pane = HistoryPane()
        self.run_panes = RunPanes()

        self.left_splitter = QSplitter(Qt.Orientation.Vertical)
        self.left_splitter.setObjectName("leftSplitter")
        self.left_splitter.addWidget(self.sources_pane)
        self.left_splitter.addWidget(self.question_panel)
        self.left_splitter.setStretchFactor(0, 3)
        self.left_splitter.setStretchFactor(1, 2)
        self.left_splitter.setChildrenCollapsible(False)

        self.center = QWidget()
        self.center_layout = QVBoxLayout(self.center)
        self.center_layout.setContentsMargins(0, 0, 0, 0)
        self.replay_label = QLabel()
        self.replay_label.setObjectName("hint")
        self.replay_label.hide()
        self.center_layout.addWidget(self.replay_label)
        self.center_layout.addWidget(self.run_panes, 1)

        self.main_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.main_splitter.setObjectName("mainSplitter")
        self.main_splitter.addWidget(self.left_splitter)
        self.main_splitter.addWidget(self.center)
        self.main_splitter.addWidget(self.history_pane)
        self.main_splitter.setStretchFactor(0, 0)
        self.main_splitter.setStretchFactor(1, 1)
        self.main_splitter.setStretchFactor(2, 0)
        self.main_splitter.setSizes([380, 760, 360])
        self.history_pane.hide()

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 6, 6, 0)
        self.banner = Banner(self.notifier)
        layout.addWidget(self.banner)
        layout.addWidget(self.main_splitter, 1)
        self.setCentralWidget(central)

        self._build_actions()
        self.notifier.posted.connect(self._show_in_status_bar)
        self.statusBar().showMessage("Ready")
        self.installEventFilter(self)

    # --- actions and shortcuts ------------------------------------------------
    def _build_actions(self) -> None:
        qp = self.question_panel
        self.run_action = QAction("Run", self)
        self.run_action.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        self.run_action.triggered.connect(qp.run_requested)
        self.stop_action = QAction("Stop", self)
        self.stop_action.setShortcuts([QKeySequence("Esc"), QKeySequence("Ctrl+.")])
        self.stop_action.triggered.connect(qp.stop_requested)
        self.history_action = QAction("History", self)
        self.history_action.setCheckable(True)
        self.history_action.setShortcut(QKeySequence("Ctrl+H"))
        self.history_action.setToolTip("History (Ctrl+H)")
        self.history_action.toggled.connect(self.show_history)
        icons.bind(self.history_action, "history")
        self.settings_action = QAction("Settings", self)
        self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        self.settings_action.setToolTip("Settings (Ctrl+,)")
        self.settings_action.triggered.connect(lambda: self.settings_requested.emit(""))
        icons.bind(self.settings_action, "settings")
        self.live_action = QAction("Back to live", self)
        self.live_action.setToolTip("Leave the replay and show the current run")
        self.live_action.triggered.connect(self.leave_replay_requested)
        icons.bind(self.live_action, "close")
        self.live_action.setVisible(False)
        for action in (self.run_action, self.stop_action, self.history_action,
                       self.settings_action, self.live_action):
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            self.addAction(action)

        toolbar = QToolBar("Main")
        toolbar.setObjectName("mainToolBar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        title = QLabel("RLM Studio")
        title.setObjectName("paneTitle")
        toolbar.addWidget(title)
        toolbar.addWidget(spacer)
        toolbar.addAction(self.live_action)
        toolbar.addAction(self.history_action)
        toolbar.addAction(self.settings_action)
        for action, name in ((self.history_action, "Show history"),
                             (self.settings_action, "Open settings"),
                             (self.live_action, "Back to the live run")):
            button = toolbar.widgetForAction(action)
            if button is not None:
                button.setAccessibleName(name)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, toolbar)
        self.toolbar = toolbar

    def show_history(self, visible: bool = True) -> None:
        self.history_pane.setVisible(visible)
        if self.history_action.isChecked() != visible:
            self.history_action.setChecked(visible)
        if visible:
            self.history_pane.search_edit.setFocus()

    # --- replay ---------------------------------------------------------------
    def set_replay_mode(self, label: str) -> None:
        """Say above the panes which stored run is replayed ("" : back to live).
        The replay bar itself belongs to RunPanes (RunPanes.load_replay)."""
        self.replay_label.setText(label)
        self.replay_label.setVisible(bool(label))
        self.live_action.setVisible(bool(label))

    # --- status ---------------------------------------------------------------
    def _show_in_status_bar(self, note: Notification) -> None:
        text = note.message + (f" {note.advice}" if note.advice else "")
        self.statusBar().showMessage(text, 15_000 if note.level == "info" else 0)

    # --- state saved between starts -------------------------------------------
    def splitters(self) -> dict[str, QSplitter]:
        found = {"main": self.main_splitter, "left": self.left_splitter}
        for i, splitter in enumerate(self.run_panes.splitters()):
            found[f"run{i}"] = splitter
        return found

    def save_state(self) -> dict:
        state = {"geometry": _b64(self.saveGeometry()),
                 "window_state": _b64(self.saveState()),
                 "history_visible": self.history_pane.isVisibleTo(self),
                 "splitters": {k: _b64(s.saveState()) for k, s in self.splitters().items()}}
        return state

    def restore_state(self, state: dict) -> None:
        if not state:
            return
        try:
            if state.get("geometry"):
                self.restoreGeometry(_unb64(state["geometry"]))
            if state.get("window_state"):
                self.restoreState(_unb64(state["window_state"]))
            splitters = self.splitters()
            for key, value in (state.get("splitters") or {}).items():
                if key in splitters and value:
                    splitters[key].restoreState(_unb64(value))
            self.show_history(bool(state.get("history_visible")))
        except (ValueError, TypeError) as exc:   # a damaged entry: keep the defaults
            log.warning("could not restore the window layout: %s", exc)

    # --- events ---------------------------------------------------------------
    def eventFilter(self, obj, event) -> bool:
        if obj is self and event.type() == QEvent.Type.Paint and not self._painted:
            self._painted = True
            self.first_painted.emit()
        return super().eventFilter(obj, event)

    def closeEvent(self, event) -> None:
        if self.close_guard is not None and not self.close_guard():
            event.ignore()
            return
        self.closing.emit()
        super().closeEvent(event)

    # --- places for extra parts (app/ glue adds them here, never into the layout) ----------
    def add_center_view(self, widget: QWidget) -> None:
        """Another view in the centre, above the run panes (shown instead of them by the glue)."""
        self.center_layout.insertWidget(self.center_layout.indexOf(self.run_panes), widget, 1)

    def add_toolbar_actions(self, actions: list) -> None:
        """Actions in the toolbar, before "Back to live"; returns nothing."""
        for action in actions:
            self.toolbar.insertAction(self.live_action, action)


def _b64(data: QByteArray) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def _unb64(text: str) -> QByteArray:
    return QByteArray(base64.b64decode(text.encode("ascii"), validate=True))
