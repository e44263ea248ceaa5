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

from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QApplication, QLabel, QMainWindow, QMessageBox, QPushButton, QSizePolicy, QSplitter, QToolBar,
    QVBoxLayout, QWidget,
)

from ui import confirm, icons
from ui.history_pane import HistoryPane
from ui.notifier import Banner, Notification, Notifier
from ui.question_panel import QuestionPanel
from ui.run_panes import RunPanes
from ui.sandbox_banner import SandboxBadge
from ui.sources_pane import SourcesPane
from ui.tab_order import order_by_position
from ui.window_fit import (  # noqa: F401  (fitting_size re-exported)
    BannerGuard, fit_side_panes, fitting_size, keep_on_screen,
)
from ui.window_menus import build_menus

log = logging.getLogger(__name__)

open_url = QDesktopServices.openUrl   # the system's viewer (a test records the call instead)
SOURCE_ROWS = 5      # the sources list keeps room for this many rows beside the question


class MainWindow(QMainWindow):
    first_painted = Signal()
    settings_requested = Signal(str)     # the settings page to open ("" for the first)
    closing = Signal()
    leave_replay_requested = Signal()

    def __init__(self, notifier: Notifier | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("RLM Studio")
        self.setObjectName("mainWindow")
        self.resize(fitting_size())
        self.notifier = notifier or Notifier(self)
        self._painted = False
        self._close_guard: Callable[[], bool] | None = None   # False keeps the window open

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
        self.replay_label.setWordWrap(True)      # a long run name wraps: the window keeps its size
        self.replay_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
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
        for splitter in (self.main_splitter, self.left_splitter, *self.run_panes.splitters()):
            splitter.setHandleWidth(6)          # wide enough to grab under any window manager

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 6, 6, 0)
        self.banner = Banner(self.notifier)
        layout.addWidget(self.banner)
        layout.addWidget(self.main_splitter, 1)
        self.setCentralWidget(central)

        self._build_actions()
        self._build_menus()
        self._keep_messages_current()
        self.history_pane.confirm_rerun = self._confirm_rerun
        self._run_documents: Callable[[str], list[str] | None] | None = None   # guard_rerun's lookup
        self._tab_timer = QTimer(self)
        self._tab_timer.setSingleShot(True)
        self._tab_timer.setInterval(0)
        self._tab_timer.timeout.connect(self.order_tabs)
        self._tab_timer.timeout.connect(self.fit_question_panel)
        self._fit_timer = QTimer(self)            # after a resize or a show: inside the screen
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_to_screen)
        # A field, a hint or an accessory came or went: fit the column and order Tab again
        # (the question's fields lay out inside its scroll area, so its content is watched too).
        for pane in (self.sources_pane, self.question_panel, self.question_panel.content,
                     self.question_panel.footer):
            pane.installEventFilter(self)
        self.question_panel.advanced.toggled.connect(lambda _open: self._tab_timer.start())
        self.banner_guard = BannerGuard(self, self.banner)    # a banner never grows the window
        self._live_status: str | None = None     # the status line kept while a replay shows
        self._view_extras = None                 # the View menu's separator before the glue's actions
        self._offered = self._offered_text = ""          # a saved file the status bar offers to open
        self.open_file_button = QPushButton("Open")
        self.open_file_button.setObjectName("openSavedFile")
        self.open_file_button.setAccessibleName("Open the saved file")
        self.open_file_button.clicked.connect(self._open_offered)
        self.open_file_button.hide()
        self.statusBar().addPermanentWidget(self.open_file_button)
        self.sandbox_badge = SandboxBadge()      # shown when this session's REPL sandbox lacks a layer
        self.statusBar().addPermanentWidget(self.sandbox_badge)
        self._status_topic = ""                  # what the status bar's message is about
        self.notifier.posted.connect(self._show_in_status_bar)
        self.notifier.cleared.connect(self._clear_status_topic)
        self.notifier.action_requested.connect(self._on_notice_action)
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
        toolbar.addAction(self.history_action)
        toolbar.addAction(self.settings_action)
        self.run_panes.replay_bar.leave_requested.connect(self.leave_replay_requested)
        for action, name in ((self.history_action, "Show history"),
                             (self.settings_action, "Open settings")):
            button = toolbar.widgetForAction(action)
            if button is not None:
                button.setAccessibleName(name)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, toolbar)
        self.toolbar = toolbar

    def show_history(self, visible: bool = True) -> None:
        """Show or hide History inside the window as it is: the other panes give it
        room (the window never resizes itself)."""
        if visible and not self.history_pane.isVisibleTo(self):
            sizes = self.main_splitter.sizes()
            total = sum(sizes)
            want = max(self.history_pane.minimumSizeHint().width(), min(360, total // 4))
            left = min(sizes[0], max(self.left_splitter.minimumSizeHint().width(), total // 4))
            self.history_pane.setVisible(True)
            self.main_splitter.setSizes([left, max(0, total - left - want), want])
        else:
            self.history_pane.setVisible(visible)
        if self.history_action.isChecked() != visible:
            self.history_action.setChecked(visible)
        if visible:
            self.history_pane.search_edit.setFocus()

    def _build_menus(self) -> None:
        """File, Edit, View, Run, Help (ui/window_menus.py)."""
        build_menus(self)

    def add_menu_action(self, menu: str, action: QAction) -> None:
        """Glue in app/ lists its own actions (Welcome, Guide, follow-up) in a menu."""
        self.menus[menu].addAction(action)

    def find(self) -> None:
        self.show_history(True)
        self.history_pane.search_edit.setFocus()
        self.history_pane.search_edit.selectAll()

    def copy_answer(self) -> None:
        card = self.run_panes.transcript.answer_card
        if card is not None and card.answer:
            card.copy()
            self.statusBar().showMessage("The answer was copied.", 5000)
        else:
            self.statusBar().showMessage("There is no answer to copy yet.", 5000)

    def show_about(self) -> None:
        version = QApplication.applicationVersion()
        QMessageBox.about(self, "About RLM Studio",
                          f"<b>RLM Studio</b> {version}<br>Ask questions over your own documents "
                          "with a Recursive Language Model. Runs are kept on this computer.")

    def show_shortcuts(self) -> None:
        rows = []
        for action in self.actions():
            keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())
            if keys:
                rows.append(f"<tr><td>{action.text().replace('&', '')}</td><td><b>{keys}</b></td></tr>")
        QMessageBox.information(self, "Keyboard shortcuts", "<table>" + "".join(rows) + "</table>")

    def _keep_messages_current(self) -> None:
        """A message goes when what it was about changes: every old one when a run
        starts, the question's when the question is edited, the sources' when no
        skipped file is listed any more."""
        n = self.notifier
        self.question_panel.running_changed.connect(lambda running: running and n.clear(""))
        self.question_panel.question_box.textChanged.connect(lambda: n.clear("question"))

        def sources_changed(*_args) -> None:
            if not self.sources_pane.totals()["skipped"]:
                n.clear("sources")
        model = self.sources_pane.model
        for signal in (model.modelReset, model.rowsRemoved):
            signal.connect(sources_changed)

    def guard_close(self, may_close: Callable[[], bool]) -> None:
        """Ask `may_close()` before the window closes: False keeps it open."""
        self._close_guard = may_close

    def know_run_documents(self, paths_of: Callable[[str], list[str] | None]) -> None:
        """How to read a stored run's document paths (None: not known): a re-run of a run whose
        documents are the ones listed replaces nothing, so it is not confirmed."""
        self._run_documents = paths_of

    def _confirm_rerun(self) -> bool:
        """Ask before a re-run replaces the listed sources, unless they are that run's own."""
        rows = [r for r in self.sources_pane.rows() if r.status == "read"]
        if not rows:
            return True
        run_id = self.history_pane.selected_id()
        theirs = self._run_documents(run_id) if self._run_documents is not None and run_id else None
        if theirs is not None and set(theirs) == {r.path for r in rows}:
            return True                      # the same documents: nothing would be replaced
        name = self.history_pane.selected_question()
        of = f" of “{name}”" if name else ""
        return confirm.ask(self, "Replace the sources?",
                           f"Re-run loads the documents{of}; the {len(rows)} "
                           f"source{'s' if len(rows) != 1 else ''} listed now leave the list.",
                           [("replace", "Replace and load"), ("cancel", "Cancel")]) == "replace"

    def _on_notice_action(self, action: str) -> None:
        if action == "pick_model":
            picker = self.question_panel.root_picker
            picker.setFocus()
            QTimer.singleShot(0, picker.showPopup)

    # --- replay ---------------------------------------------------------------
    def set_replay_mode(self, label: str) -> None:
        """Say above the panes which stored run is replayed ("" : back to live).
        The replay bar itself belongs to RunPanes (RunPanes.load_replay)."""
        self.replay_label.setText(label)
        self.replay_label.setVisible(bool(label))
        self.live_action.setVisible(bool(label))
        qp = self.question_panel
        if label and self._live_status is None:       # "Stopped · 5.7 s" is about the live run
            self._live_status = qp.status_label.text()
            qp.set_status("")
        elif not label and self._live_status is not None:
            if not qp.status_label.text():             # nothing newer was said meanwhile
                qp.set_status(self._live_status)
            self._live_status = None

    # --- status ---------------------------------------------------------------
    def _show_in_status_bar(self, note: Notification) -> None:
        text = note.message + (f" {note.advice}" if note.advice else "")
        self.statusBar().showMessage(text, 15_000 if note.level == "info" else 0)
        self._status_topic = note.topic
        if self._offered and text != self._offered_text:
            self.open_file_button.hide()           # a newer message: the offer is stale
            self._offered = ""

    def _clear_status_topic(self, topic: str) -> None:
        """A message about `topic` no longer holds (the notifier's `cleared`): not left in
        the status bar either (a Compare hint after the comparison was shown)."""
        if topic and self._status_topic == topic:
            self.statusBar().clearMessage()
            self._status_topic = ""

    def offer_open(self, path: str, message: str) -> None:
        """Say a file was saved, with an Open button beside it in the status bar (the
        system's viewer for it, QDesktopServices)."""
        self._offered, self._offered_text = path, message
        self.statusBar().showMessage(message, 0)
        self.open_file_button.setToolTip(f"Open {path}")
        self.open_file_button.show()

    def _open_offered(self) -> None:
        if self._offered:
            open_url(QUrl.fromLocalFile(self._offered))

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
                 "limits_open": self.question_panel.advanced.is_open(),
                 "splitters": {k: _b64(s.saveState()) for k, s in self.splitters().items()}}
        return state

    def restore_state(self, state: dict) -> None:
        if not state:
            return
        try:
            if state.get("geometry"):
                self.restoreGeometry(_unb64(state["geometry"]))
                self.keep_on_screen()
            if state.get("window_state"):
                self.restoreState(_unb64(state["window_state"]))
            splitters = self.splitters()
            for key, value in (state.get("splitters") or {}).items():
                if key in splitters and value:
                    splitters[key].restoreState(_unb64(value))
                    if key.startswith("run"):
                        self.run_panes.layout_restored = True
            self.show_history(bool(state.get("history_visible")))
            self.question_panel.advanced.set_open(bool(state.get("limits_open")))
        except (ValueError, TypeError) as exc:   # a damaged entry: keep the defaults
            log.warning("could not restore the window layout: %s", exc)

    # --- events ---------------------------------------------------------------
    def fit_question_panel(self) -> None:
        """The question panel gets the height that shows its fields without scrolling,
        while the sources list keeps room for SOURCE_ROWS rows; past that the panel scrolls
        (its fields keep their height either way)."""
        qp, sp = self.question_panel, self.sources_pane
        sizes = self.left_splitter.sizes()
        if len(sizes) != 2 or not qp.isVisible():
            return
        total = sum(sizes)
        floor = max(sp.minimumSizeHint().height(), sp.height_for_rows(SOURCE_ROWS))
        need = min(qp.wanted_height(), max(qp.minimumSizeHint().height(), total - floor))
        if qp.blocked() or qp.caution:   # the reason beside Run is never cut: the sources list gives way
            need = max(need, min(qp.required_height(), total - sp.minimumSizeHint().height()))
        if sizes[1] < need:
            self.left_splitter.setSizes([total - need, need])

    def keep_on_screen(self) -> None:
        """The window inside the free area of the screen it is on (ui/window_fit.py)."""
        keep_on_screen(self)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._tab_timer.start()
        fit_side_panes(self.main_splitter)

    def fit_to_screen(self) -> None:
        """When shown: never wider or taller than the screen's free area, and the side panes
        within their shares of the width (ui/window_fit.py)."""
        if not self.isVisible() or self.isFullScreen():
            return
        free = self.screen().availableGeometry() if self.screen() else None
        frame = self.frameGeometry()
        if free is not None and not free.contains(frame):
            keep_on_screen(self)
        fit_side_panes(self.main_splitter)

    def order_tabs(self) -> None:
        """Tab runs down the left column as it reads: sources, then the question panel."""
        chain = order_by_position(self.sources_pane) + self.question_panel.focus_chain()
        for a, b in zip(chain, chain[1:]):
            QWidget.setTabOrder(a, b)

    def eventFilter(self, obj, event) -> bool:
        if obj is self and event.type() == QEvent.Type.Show:
            self._fit_timer.start()
        if obj is self and event.type() == QEvent.Type.Paint and not self._painted:
            self._painted = True
            self.first_painted.emit()
        elif obj is not self and event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Show):
            self._tab_timer.start()          # a widget came or went: put the chain in order
        return super().eventFilter(obj, event)

    def closeEvent(self, event) -> None:
        if self._close_guard is not None and not self._close_guard():
            event.ignore()
            return
        self.closing.emit()
        super().closeEvent(event)

    # --- places for extra parts (app/ glue adds them here, never into the layout) ----------
    def add_center_view(self, widget: QWidget) -> None:
        """Another view in the centre, above the run panes (shown instead of them by the glue)."""
        self.center_layout.insertWidget(self.center_layout.indexOf(self.run_panes), widget, 1)

    def add_toolbar_actions(self, actions: list) -> None:
        """Actions in the toolbar, before History, and in the View menu (every toolbar
        button is also in a menu); returns nothing."""
        if actions and not self._view_extras:
            self._view_extras = self.view_menu.addSeparator()
        for action in actions:
            self.toolbar.insertAction(self.history_action, action)
            self.view_menu.addAction(action)


def _b64(data: QByteArray) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def _unb64(text: str) -> QByteArray:
    return QByteArray(base64.b64decode(text.encode("ascii"), validate=True))
