"""History actions of issue 9: Verify, Fork from here…, Compare, Family.

A row of buttons under the History pane's own, and "Fork from here…" in the
call tree's context menu on a top-level turn. Verify and fork re-execute code
in a REPL worker: they run as asyncio tasks on the qasync loop, so the window
never waits for them.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMenu

from app.ports import ReplayPort, RunsPort, SettingsPort
from app.run_service import RunRequest
from core.call_ids import CallId
from core.run_names import short_question, title_of
from app.compare_shown import compare_shown
from ui.compare_view import CompareView
from ui.fork_dialog import ForkChoice, ForkDialog
from ui.history_pane import HistoryRow
from ui.trust_actions_bar import TrustActionsBar
from ui.verify_view import VerifyShown, VerifyView
from core.engine.parse import parse_reply
from app.settings import build_run_config, priced_now

log = logging.getLogger(__name__)

class TrustActions:
    """Narrow dependencies: the window's panes (history pane, run panes), the notifier,
    the history glue (its store, refresh and model names), the settings, and the
    run path (`launch` a RunRequest, `is_running`)."""

    def __init__(self, window: Any, panes: Any, notifier: Any, history: ReplayPort, *,
                 settings: SettingsPort, launcher: RunsPort, approver: Any) -> None:
        self.window = window
        self.panes = panes
        self.notifier = notifier
        self.history = history
        self._settings = settings.current
        self._launcher = launcher
        self._approver = approver            # app/trust_glue.py: with_approver(config)
        self.verify_view: VerifyView | None = None
        self.compare_view: CompareView | None = None
        self.fork_dialog: ForkDialog | None = None
        self.verify_task: asyncio.Task | None = None
        self.last_report: Any = None
        self.family_of: str | None = None

        self.compare_first: str | None = None      # the run marked by a first press of Compare
        hp = self.window.history_pane
        self.bar = TrustActionsBar(hp)            # Verify, Fork…, Compare…, Family (ui/)
        hp.add_accessory(self.bar)
        self.bar.verify_button.clicked.connect(lambda: self.verify(hp.selected_id()))
        self.bar.fork_button.clicked.connect(lambda: self.fork_dialog_for(hp.selected_id()))
        self.bar.compare_button.clicked.connect(self.compare_selected)
        self.bar.family_button.toggled.connect(self._toggle_family)
        hp.table.selectionModel().selectionChanged.connect(self._update_buttons)
        hp.model.modelReset.connect(self._update_buttons)
        self._update_buttons()

        self.panes.enable_node_menu()
        self.panes.node_menu_requested.connect(self._node_menu)
        self.panes.transcript.turn_menu_requested.connect(self._node_menu)

    def _update_buttons(self, *_args) -> None:
        selected = self.window.history_pane.selected_id()
        if self.compare_first is not None and selected not in (None, self.compare_first):
            run = self.history.store().get_run(self.compare_first) or {"id": self.compare_first}
            label = f"Compare with “{short_question(run.get('question'), 24)}”"
        elif self.compare_first is not None:
            label = "Select the other run…"
        else:
            label = "Compare…"
        self.bar.show_state(selected=selected is not None, compare_label=label)

    # ---- verify ----------------------------------------------------------
    def verify(self, run_id: str | None) -> asyncio.Task | None:
        if not run_id:
            return None
        if self.verify_task is not None and not self.verify_task.done():
            self.notifier.info("A verification is already running.")
            return None
        if self.verify_view is None:
            self.verify_view = VerifyView(self.window)
        self.verify_view.set_running(title_of(self.history.store(), run_id))
        self.verify_view.show()
        self.verify_view.raise_()
        self.verify_task = asyncio.ensure_future(self._verify(run_id))
        return self.verify_task

    async def _verify(self, run_id: str) -> None:
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        # lazy: +8 modules in the window (where it runs)
        from core.engine.rebuild import RebuildError
        # lazy: +10 modules in the window (where it runs)
        from core.trust.verify import verify_run
        try:
            report = await verify_run(self.history.store(), run_id)
        except (StoreError, RebuildError, OSError) as exc:
            self.verify_view.set_failed(str(exc))
            self.notifier.error(f"{title_of(self.history.store(), run_id)} could not be verified: {exc}")
            return
        self.last_report = report
        self.verify_view.set_result(verify_shown(report))
        if report.matches:
            self.notifier.info(f"{title_of(self.history.store(), run_id)} verified: the re-execution matches "
                               "the record.")
        else:
            self.notifier.warning(f"{title_of(self.history.store(), run_id)} diverges when re-executed.",
                                    "The Verify window shows the first divergence.")

    # ---- fork ----------------------------------------------------------------
    def _node_menu(self, node_id: str, global_pos: QPoint) -> None:
        menu = self.turn_menu(node_id or None)
        if menu is not None:
            menu.popup(global_pos)

    def turn_menu(self, node_id: str | None) -> QMenu | None:
        """The context menu of a call-tree node: "Fork from here…" on a top-level turn."""
        call = CallId.parse(node_id)
        view = self.panes.view
        if call is None or call.kind != "turn" or not call.top or node_id not in view.turns:
            return None
        menu = QMenu(self.panes.tree)
        action = menu.addAction("Fork from here…")
        action.setEnabled(not self._launcher.running and view.finished and bool(view.meta.run_id))
        action.setToolTip("Continue this run live from this turn, as a new run linked to it")
        action.triggered.connect(lambda: self.fork_dialog_for(view.meta.run_id, call.turn))
        return menu

    def fork_dialog_for(self, run_id: str | None, turn: int | None = None, *, show: bool = True) -> ForkDialog | None:
        """The fork dialog for a stored run (at `turn`, else its last turn); `show=False`
        builds it without running it (tests drive it, then call `start_fork`)."""
        if not run_id:
            return None
        # lazy: +8 modules in the window (where it runs)
        from core.engine.rebuild import load_record
        store = self.history.store()
        record = load_record(store, run_id)
        if not record.top_turns():
            self.notifier.warning("That run has no turns to fork from.")
            return None
        turns = [(t.iteration, "\n\n".join(c.code for c in t.cells) or _code_of(parse_reply, t.reply))
                 for t in record.top_turns()]
        meta, h = record.meta, self.history
        config = meta.config
        root = h.unroute(meta.root_model, config.get("api_base"))
        sub = h.unroute(meta.sub_model, config.get("sub_api_base") or config.get("api_base"))
        dialog = ForkDialog(self.window, run_title=title_of(self.history.store(), run_id), turns=turns,
                            turn=turn or turns[-1][0], root_model=root, sub_model=sub, caps=config,
                            choices=self.window.question_panel.root_picker.all_choices(), run_id=run_id)
        self.fork_dialog = dialog
        if show:
            dialog.accepted.connect(lambda: self.start_fork(run_id, dialog.values(), (root, sub)))
            dialog.open()
        return dialog

    def start_fork(self, run_id: str, choice: ForkChoice, original_models: tuple[str, str]) -> asyncio.Task | None:
        """Start the fork as a new live run in the panes (linked to its parent): a "fork"
        RunRequest on the one run path (an edited turn's new sub-calls go live, budgeted)."""
        if self._launcher.running:
            self.notifier.warning("A run is in progress.", "Stop it before starting a fork.")
            return None
        # lazy: +13 modules in the window (where it runs)
        from core.engine.prepare import fork_config
        # lazy: free here, core.engine.prepare (above) imports it
        from core.engine.rebuild import ForkError, load_record
        try:
            record = load_record(self.history.store(), run_id)
            config = fork_config(record)
            if (choice.root_model, choice.sub_model) != tuple(original_models):
                chosen = build_run_config(self._settings(), root=choice.root_model,
                                          sub=choice.sub_model or None, overrides={})
                config = replace(config, root_model=chosen.root_model, sub_model=chosen.sub_model,
                                 api_base=chosen.api_base, sub_api_base=chosen.sub_api_base,
                                 model_labels=chosen.model_labels, sub_call_models=chosen.sub_call_models)
            config = priced_now(config, self._settings())      # today's prices, never the parent's
            config = self._approver.with_approver(replace(config, **choice.caps))
        except (ForkError, ValueError) as exc:
            self.notifier.error(f"The fork cannot start: {exc}")
            return None
        return self._launcher.launch(RunRequest.fork(run_id, choice.turn, config=config, edited_code=choice.code,
                                             keep_session=True))

    # ---- compare -------------------------------------------------------------
    def compare_selected(self) -> CompareView | None:
        """First press: remember the selected run; second press (another run selected): compare."""
        selected = self.window.history_pane.selected_id()
        if selected is None:
            return None
        if self.compare_first is None or self.compare_first == selected:
            self.compare_first = selected
            self._update_buttons()
            self.notifier.info(f"{title_of(self.history.store(), selected)} is marked: select the run to compare "
                               "it with and press Compare again.", topic="compare")
            return None
        first, self.compare_first = self.compare_first, None
        self._update_buttons()
        self.notifier.clear("compare")             # the hint no longer holds
        return self.compare(first, selected)

    def compare(self, left: str, right: str) -> CompareView | None:
        store = self.history.store()
        try:
            shown = compare_shown(store, left, right)
        except (LookupError, ValueError) as exc:
            self.notifier.error(f"The runs could not be compared: {exc}")
            return None
        if self.compare_view is None:
            self.compare_view = CompareView(self.window)
        self.compare_view.set_comparison(shown)
        self.compare_view.show()
        self.compare_view.raise_()
        return self.compare_view

    # ---- family ----------------------------------------------------------------
    def _toggle_family(self, on: bool) -> None:
        if on:
            run_id = self.window.history_pane.selected_id()
            if run_id:
                self.show_family(run_id)
                return
        self.family_of = None
        self.history.refresh()

    def show_family(self, run_id: str) -> list[HistoryRow]:
        """The history list shows only this run's family, children indented under parents."""
        store = self.history.store()
        top, seen = run_id, {run_id}
        while True:
            run = store.get_run(top) or {}
            parent = run.get("parent_run_id")
            if not parent or parent in seen or store.get_run(parent) is None:
                break
            seen.add(parent)
            top = parent
        rows: list[HistoryRow] = []

        def walk(rid: str, depth: int) -> None:
            run = store.get_run(rid)
            if run is None or len(rows) > 500:
                return
            row = HistoryRow.of_run(run)
            indent = "    " * depth + ("\u21b3 " if depth else "")
            rows.append(replace(row, question=indent + row.question))
            children = store.list_runs(parent_run_id=rid, limit=200)
            for child in sorted(children, key=lambda r: str(r.get("created_utc") or "")):
                walk(str(child["id"]), depth + 1)
        walk(top, 0)
        self.family_of = run_id
        hp = self.window.history_pane
        hp.set_rows(rows)
        hp.select(run_id)
        if not self.bar.family_button.isChecked():
            self.bar.check_family()
        return rows


def _code_of(parse_reply: Any, reply: str | None) -> str:
    """The code a reply's blocks hold (a turn whose cells were not recorded)."""
    return "\n\n".join(parse_reply(reply).cells) if reply else ""


def verify_shown(report: Any) -> VerifyShown:
    cells = [(f"turn {c.turn} · cell {c.index}", c.same,
              "" if c.same else (c.diff.splitlines()[0] if c.diff else "differs") +
              (f" · not in the record: {len(c.unmatched)} prompt(s)" if c.unmatched else ""))
             for c in report.cells]
    first = ""
    if report.first_divergence is not None:
        f = report.first_divergence
        first = f"turn {f.turn}, cell {f.index} ({f.cell_id})\n{f.diff}"
    elif not report.answer_same:
        first = f"the final answer\nrecorded: {report.answer_recorded!r}\nre-executed: {report.answer_replayed!r}"
    same = sum(1 for c in report.cells if c.same)
    summary = (f"{len(report.cells)} cells re-executed, {same} the same; {report.sub_calls_served} sub-calls "
               f"answered from the record; the answer is {'the same' if report.answer_same else 'different'}.")
    if report.notes:
        summary += " " + " ".join(report.notes)
    return VerifyShown(report.matches, cells, report.answer_same, first, summary)
