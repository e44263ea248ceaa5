"""RunPanes: one run, live or replayed: transcript, call tree with detail, cost meter.

    panes = RunPanes()
    panes.reset()                  # a new live run
    panes.apply(event)             # for every event the engine emits
    panes.load_replay(events)      # a stored run, with the replay bar shown

Every event goes through the one fold (`core.runview.RunView`); the widgets
are updated from it at most ~30 times a second (`FLUSH_MS`), or at once after
`apply_many`. `flush()` forces that update (tests, before a screenshot).
`splitters()` lists the splitters whose state the window saves and restores.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from core.run_names import fork_line
from core.events import Event
from core.runview import Change, RunView
from ui.call_tree_model import CallTreeModel
from ui.call_tree_view import CallTreeView
from ui.cost_meter import CostMeter
from ui.highlight import is_dark, warm_up
from ui.node_detail import NodeDetail
from ui.replay_bar import ReplayBar
from ui.theme import PALETTES
from ui.transcript_view import Transcript

FLUSH_MS = 33          # ~30 Hz: token deltas and tree updates are coalesced to this
TICK_MS = 500          # the elapsed clock while a live run runs
ROWS_PER_BATCH = 16    # new call-tree rows one budgeted batch may add (apply_many with a deadline)


class RunPanes(QWidget):
    citation_clicked = Signal(str)
    export_requested = Signal()
    limit_fix_requested = Signal(str)     # the answer's limited flag: its fix button (core/limits.py fix)
    answer_copied = Signal()
    node_selected = Signal(str)
    node_menu_requested = Signal(str, QPoint)    # call-tree node id ("" off a node), global position

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runPanes")
        self._view = RunView()
        self._live = True
        self._live_events: list[Event] = []      # the live run's events, for "Back to live"
        self._reselect: str | None = None
        self._updated: set[str] = set()
        self._detail_dirty = False
        self._dirty = False
        # The questions and answers of the session so far (run id, question, answer): a
        # follow-up shows them above its own turns.
        self._session: list[tuple[str, str, str]] = []
        self._live_session: list[tuple[str, str, str]] = []    # the live session while a replay shows
        self._earlier_pending = False
        self.layout_restored = False       # set by the window when it restored saved sizes
        self._balanced = False
        # Objects with reset(live) and feed(events) that see every event the panes
        # fold (coverage, results: app/trust_glue.py), live and in replays.
        self.observers: list = []
        self.meter = CostMeter(self)
        self.transcript = Transcript(self)
        self.tree_model = CallTreeModel(self._view, self)
        self.tree = CallTreeView(self.tree_model, self)
        self.detail = NodeDetail(self)
        self.replay_bar = ReplayBar(self, self)
        self.replay_bar.hide()
        self._set_colors()
        self.transcript.reset(self._view)

        self.side_splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.side_splitter.setObjectName("runSideSplitter")
        self.side_splitter.addWidget(self.tree)
        self.side_splitter.addWidget(self.detail)
        self.side_splitter.setStretchFactor(0, 3)
        self.side_splitter.setStretchFactor(1, 2)
        self.main_splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.main_splitter.setObjectName("runMainSplitter")
        self.main_splitter.addWidget(self.transcript)
        self.main_splitter.addWidget(self.side_splitter)
        self.main_splitter.setStretchFactor(0, 3)
        self.main_splitter.setStretchFactor(1, 2)
        for splitter in (self.side_splitter, self.main_splitter):
            splitter.setChildrenCollapsible(False)
        self.transcript.setMinimumWidth(190)
        # Six rows of the call tree at least (on a 700 px screen it was a two-row sliver).
        self.tree.setMinimumHeight(self.tree.header().sizeHint().height() + 6 * (self.tree.fontMetrics().height() + 4)
                                   + self.tree.horizontalScrollBar().sizeHint().height() + 2 * self.tree.frameWidth())
        self.main_splitter.setSizes([600, 500])         # until the window restores saved sizes
        self.side_splitter.setSizes([500, 300])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.meter)
        layout.addWidget(self.main_splitter, 1)
        layout.addWidget(self.replay_bar)

        self.transcript.citation_clicked.connect(self.citation_clicked)
        self.transcript.export_requested.connect(self.export_requested)
        self.transcript.limit_fix_requested.connect(self.limit_fix_requested)
        self.transcript.answer_copied.connect(self.answer_copied)
        self.tree.node_selected.connect(self._on_node_selected)

        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self.flush)
        self._clock = QTimer(self)
        self._clock.setInterval(TICK_MS)
        self._clock.timeout.connect(self._tick)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self.layout_restored and not self._balanced and self.side_splitter.count() == 3:
            # tree, detail, the trust tabs: the detail gets room for its texts
            self._balanced = True
            total = sum(self.side_splitter.sizes())
            # the tabs keep the rows they need (five of the Sub-calls table), the detail at
            # least as much, the tree the rest (never below its minimum: six rows)
            tabs = max(total * 30 // 100, self.side_splitter.widget(2).minimumSizeHint().height())
            detail = max(total * 34 // 100, tabs + 4)     # + 4: the tree's minimum may shave a pixel off it
            self.side_splitter.setSizes([max(total - tabs - detail, 0), detail, tabs])

    # ---- the shell's API -----------------------------------------------
    @property
    def view(self) -> RunView:
        return self._view

    @property
    def live(self) -> bool:
        return self._live

    def splitters(self) -> list[QSplitter]:
        return [self.main_splitter, self.side_splitter]

    def reset(self, live: bool = True) -> None:
        """Start over with an empty run. `live=False` is a replay (the elapsed
        clock then follows the events, not the wall clock); a live reset also
        hides the replay bar."""
        self._flush_timer.stop()
        self._clock.stop()
        was_live, self._live = self._live, live
        if live:
            self.replay_bar.pause()
            self.replay_bar.hide()
        self._reselect = None if live else self.detail.node_id   # keep the selection while scrubbing
        previous = self._view
        if live and was_live and previous.meta.run_id and previous.finished:
            if not self._session or self._session[-1][0] != previous.meta.run_id:
                self._session.append((previous.meta.run_id, previous.meta.question, previous.answer or ""))
        elif not live:
            if was_live:
                self._live_session = self._session    # Back to live shows the follow-up's header again
            self._session = []
        if live:
            self._live_events = []          # a new live run: what "Back to live" shows again
        self._earlier_pending = live and bool(self._session)
        self._view = RunView()
        self._updated.clear()
        self._dirty = False
        self.tree_model.set_view(self._view)
        self.transcript.reset(self._view)
        self.detail.clear()
        self.meter.refresh(self._view)
        for observer in self.observers:
            observer.reset(live)

    def apply(self, event: Event) -> Change:
        """Fold one event; the panes follow within FLUSH_MS."""
        change = self._view.apply(event)
        if self._live:
            self._live_events.append(event)
        self._note(change)
        for observer in self.observers:
            observer.feed((event,))
        if not self._flush_timer.isActive():
            self._flush_timer.start()
        return change

    def apply_many(self, events: Iterable[Event], deadline: float | None = None) -> int:
        """Fold many events (a replay, a batch) in order and update the panes once; returns
        how many were folded. With `deadline` (a time.thread_time() value) it stops folding
        once that has passed, or once ROWS_PER_BATCH new call-tree rows are folded (building
        them, not folding, is what costs), after at least one event: the caller hands the
        rest again later (app/engine_thread.py's per-frame budget), and the panes end as
        they would have applying them all at once."""
        events = events if isinstance(events, list) else list(events)
        apply, note = self._view.apply, self._note
        if deadline is None:
            for event in events:
                note(apply(event))
            done = len(events)
        else:
            clock, done, rows = time.thread_time, 0, ROWS_PER_BATCH
            for event in events:
                change = apply(event)
                note(change)
                done += 1
                rows -= len(change.added)
                if rows <= 0 or clock() >= deadline:
                    break
        if self._live and done:
            self._live_events.extend(events if done == len(events) else events[:done])
        if self.observers and done:
            part = events if done == len(events) else events[:done]
            for observer in self.observers:
                observer.feed(part)
        self.flush()
        return done

    def load_replay(self, events: Sequence[Event], position: int | None = None) -> None:
        """Show a stored run with the replay bar (at the end unless `position`)."""
        self.reset(live=False)
        self._reselect = None                 # another run: the old selection means nothing
        self.replay_bar.show()
        self.replay_bar.load(events, position)

    def show_live(self) -> None:
        """Leave a replay: the live run (or the last one of this window) as it was left,
        not an empty view."""
        events = list(self._live_events)
        self._session = list(self._live_session)
        self.reset(live=True)
        if events:
            self.apply_many(events)

    def flush(self) -> None:
        """Bring every pane up to date with the fold now."""
        self._flush_timer.stop()
        if not self._dirty:
            return
        self._dirty = False
        updated, self._updated = self._updated, set()
        if self._earlier_pending and self._view.meta.run_id:
            self._earlier_pending = False
            self._show_earlier()
        self.tree_model.sync(updated)
        self.transcript.set_fork(fork_line(self._view.meta.forked_from))
        self.transcript.flush()
        view = self._view
        self.meter.refresh(view, time.time() if self._live else None, replay=not self._live)
        if self._reselect is not None and self._reselect in view.nodes:
            node_id, self._reselect = self._reselect, None
            self.tree.select_node(node_id)
        elif self.detail.node_id is not None and (self._detail_dirty or self.detail.node_id in updated):
            self.detail.show_node(view, self.detail.node_id)
        self._detail_dirty = False
        if self._live and view.status == "running" and not self._clock.isActive():
            self._clock.start()
            QTimer.singleShot(0, warm_up)      # while the root model thinks, not mid-stream
        elif view.finished:
            self._clock.stop()

    def restyle(self) -> None:
        """Redraw with the current theme's colours (call after a theme change)."""
        self._set_colors()
        self.meter.restyle()
        self.transcript.reset(self._view)
        self._dirty = True
        self.flush()
        self.tree.viewport().update()

    # ---- internals -----------------------------------------------------
    def _note(self, change: Change) -> None:
        self._dirty = True
        if change.updated:
            self._updated.update(change.updated)
        if change.kind == "tokens" and change.turn_id == self.detail.node_id:
            self._detail_dirty = True               # a selected streaming turn follows in the detail
        self.transcript.note(change)

    def _show_earlier(self) -> None:
        """A follow-up (its parent is the last run, its question a new one) shows the
        session's earlier exchanges; any other run starts a new session."""
        meta = self._view.meta
        last = self._session[-1]
        if meta.parent_run_id == last[0] and meta.question.strip() != last[1].strip():
            self.transcript.set_earlier([(q, a) for _id, q, a in self._session])
        else:
            self._session = []

    def _tick(self) -> None:
        if self._view.finished or not self._live:
            self._clock.stop()
        self.meter.refresh(self._view, time.time())

    def _on_node_selected(self, node_id: str) -> None:
        self._reselect = None
        self.detail.show_node(self._view, node_id)
        self.node_selected.emit(node_id)

    def _set_colors(self) -> None:
        palette = PALETTES["dark" if is_dark() else "light"]
        self.tree_model.set_colors({"error": palette["error"], "warning": palette["warning"],
                                    "running": palette["accent"]})

    # --- places for extra parts (app/ glue adds them here, never into the layout) ----------
    def add_side_widget(self, widget: QWidget, stretch: int = 2) -> None:
        """Another part under the call tree and the detail (e.g. the Coverage tabs)."""
        self.side_splitter.addWidget(widget)
        self.side_splitter.setStretchFactor(self.side_splitter.indexOf(widget), stretch)

    def set_citations(self, citations) -> None:
        """ui.citation_text.CitationText: citation links in the replies and the answer."""
        self.transcript.citations = citations

    def enable_node_menu(self) -> None:
        """Right-clicks on the call tree come out as node_menu_requested."""
        from ui.call_tree_model import NODE_ID_ROLE
        tree = self.tree
        tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

        def requested(pos: QPoint) -> None:
            index = tree.indexAt(pos)
            node = index.siblingAtColumn(0).data(NODE_ID_ROLE) if index.isValid() else None
            self.node_menu_requested.emit(node or "", tree.viewport().mapToGlobal(pos))
        tree.customContextMenuRequested.connect(requested)
