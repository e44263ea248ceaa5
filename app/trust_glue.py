"""Trust in the window (issue 9): citation links and the source viewer, the
coverage and sub-call panes beside the call tree, the cost preview next to Run
and the projected cost during a run, and the approval gate.

History actions (verify, fork, compare, family) live in app/trust_actions.py.
Everything that computes lives in core/trust/; this module only feeds it the
run's events and documents and shows what it returns.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QTabWidget

from app.ports import LiveRunPort, ReplayPort, RunsPort, SettingsPort, SourcesPort
from app.trust_actions import TrustActions
from app.trust_shown import (PaneObserver, RefreshWork, approval_of, coverage_shown, describe_preview,
                             describe_projection, loop_running, mark_of, preview_in_thread)
from ui.approval_dialog import ApprovalDialog, ApprovalShown, ApprovalThresholds
from ui.citation_text import CitationMark, CitationText, body_of
from ui.cost_preview import CostPreview
from ui.coverage_view import CoverageShown, CoverageView
from ui.results_table import ResultShown, ResultsTable
from ui.source_viewer import SourceViewer
from ui.highlight import is_dark
from ui.theme import PALETTES
from app.settings import build_run_config
from core.repl.context_file import chars_of

log = logging.getLogger(__name__)

REFRESH_MS = 400            # coverage and sub-call rows follow a live run at most this often


class TrustGlue:
    """Narrow dependencies: the window, the run panes, the notifier, and ports (app/ports.py):
    the run in progress (`live`), History (its store and replay), the settings, Sources
    (the documents, selecting a cited one) and the window's runs (a fork is launched there)."""

    def __init__(self, window: Any, panes: Any, notifier: Any, *, live: LiveRunPort, history: ReplayPort,
                 settings: SettingsPort, sources: SourcesPort, launcher: RunsPort) -> None:
        self.window = window
        self.panes = panes
        self.notifier = notifier
        self.runs = live
        self.history = history
        self._settings = settings.current
        self.sources = sources              # the Sources pane's documents (a SourcesPort)
        self._docs_cache: dict[str, list[Any]] = {}
        self.viewer: SourceViewer | None = None
        self.approval: ApprovalDialog | None = None
        self.approvals: list[ApprovalShown] = []      # asked so far (tests, the log)
        self._warned: set[str] = set()
        self.result_rows: list[Any] = []              # core.trust.results.ResultRow, as shown
        self._sources_run: str | None = None
        self._sources: dict[str, tuple] = {}
        self._finder: Any = None
        self._job: asyncio.Task | None = None         # a refresh computed in a thread
        self._refresh_again = False
        self._estimate_seq = 0
        self.estimate_task: asyncio.Task | None = None
        self.last_preview: Any = None                 # core.trust.preview.CostPreview

        self.citations = CitationText(self.resolve_citations, PALETTES["light"]["error"])
        self.panes.set_citations(self.citations)
        self.panes.citation_clicked.connect(self.open_citation)

        self.coverage_view = CoverageView()
        self.results_table = ResultsTable()
        self.results_table.export_requested.connect(self.export_results_csv)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("trustTabs")
        self.tabs.addTab(self.coverage_view, "Coverage")
        self.tabs.addTab(self.results_table, "Sub-calls")
        self.panes.add_side_widget(self.tabs, 2)
        self.tabs.currentChanged.connect(lambda _i: self.schedule_refresh())

        self.observer = PaneObserver(self)
        self.panes.observers.append(self.observer)
        self._refresh_timer = QTimer(self.panes)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_MS)
        self._refresh_timer.timeout.connect(self.refresh)

        qp = self.window.question_panel
        self.thresholds = ApprovalThresholds(qp)
        self.thresholds.set_values(settings.current().caps)
        self.thresholds.changed.connect(lambda values: self._settings().caps.update(values))
        self.preview = CostPreview(qp)
        qp.add_accessory(self.thresholds, "options")
        qp.add_accessory(self.preview, "status")
        self._preview_timer = QTimer(qp)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(300)
        self._preview_timer.timeout.connect(self.update_estimate)
        for signal in (qp.root_picker.currentTextChanged, qp.sub_picker.currentTextChanged,
                       qp.depth_spin.valueChanged, qp.cost_spin.valueChanged, qp.iter_spin.valueChanged):
            signal.connect(self._preview_timer.start)
        sp_model = self.window.sources_pane.model
        for signal in (sp_model.rowsInserted, sp_model.rowsRemoved, sp_model.modelReset):
            signal.connect(self._preview_timer.start)

        self.actions = TrustActions(window, panes, notifier, history, settings=settings, launcher=launcher,
                                    approver=self)

    # ---- documents -----------------------------------------------------
    def run_id(self) -> str:
        return self.panes.view.meta.run_id

    def documents_for(self, run_id: str | None = None) -> list[Any]:
        """The documents of the run shown (live: those it was given; stored: from the store)."""
        run_id = self.run_id() if run_id is None else run_id
        live = self.runs.documents()
        if live is not None and self.runs.run_id == run_id:
            self._docs_cache[run_id] = live
            return live
        if not run_id:
            return list(self.sources.documents.values())
        if run_id not in self._docs_cache:
            # lazy: free in the window (where it runs)
            from core.store.errors import StoreError
            try:
                self._docs_cache[run_id] = list(self.history.store().documents(run_id))
            except (StoreError, OSError) as exc:
                log.warning("documents of run %s not available: %s", run_id, exc)
                return list(self.sources.documents.values())
            if len(self._docs_cache) > 8:
                self._docs_cache.pop(next(iter(self._docs_cache)))
        return self._docs_cache[run_id]

    # ---- citations -----------------------------------------------------
    def resolve_citations(self, text: str) -> list[CitationMark]:
        # lazy: +1 modules in the window (where it runs)
        from core.ingest.citations import resolve_citations
        self.citations.set_error_color(PALETTES["dark" if is_dark() else "light"]["error"])
        return [mark_of(c) for c in resolve_citations(text, self.documents_for())]

    def open_citation(self, href: str) -> SourceViewer:
        """A citation link was clicked: open the source viewer at its passage."""
        body = body_of(href)
        docs = self.documents_for()
        marks = self.resolve_citations(f"[doc:{body}]")
        if self.viewer is None:
            self.viewer = SourceViewer(self.window)
        viewer = self.viewer
        # lazy: a big read-back document is shown by offsets, never read whole
        from core.ingest.text_window import text_window
        viewer.set_documents(docs, text_window)
        mark = marks[0] if marks else None
        if mark is not None and mark.ok and mark.doc_range is not None:
            viewer.show_passage(mark.path, *mark.doc_range,
                                label=f"{mark.path}, {mark.address}" if mark.address else mark.path)
        else:
            viewer.show_missing(body, mark.reason if mark else "it is not a citation",
                                path=mark.path if mark else None)
        viewer.show()
        viewer.raise_()
        if mark is not None:
            self.sources.show_citation(f"{mark.path}:{mark.address}")    # and select it in the sources
        return viewer

    # ---- coverage and sub-call rows ------------------------------------------
    def schedule_refresh(self) -> None:
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def refresh(self) -> None:
        """Bring the Coverage and Sub-calls tabs and the projection up to the events.
        A big step (a replay opened or scrubbed: thousands of events to fold, many
        sources to find) is computed in a thread, so the window does not stall."""
        self._refresh_timer.stop()
        if self._job is not None and not self._job.done():
            self._refresh_again = True
            return
        obs = self.observer
        events = obs.events
        docs = self.documents_for() if events else []
        run_id = self.run_id()
        if self._sources_run != run_id:
            self._sources_run, self._sources, self._finder = run_id, {}, None
        want_rows = self.tabs.currentWidget() is self.results_table or self.panes.view.status != "running"
        work = RefreshWork(obs.generation, events[:], docs, obs.coverage, obs.folded, want_rows,
                           self._sources, self._finder)
        if work.heavy() and loop_running():
            self._job = asyncio.ensure_future(self._refresh_in_thread(work))
        else:
            self._apply(work.run())
        self.refresh_projection()

    async def _refresh_in_thread(self, work: "RefreshWork") -> None:
        try:
            result = await asyncio.to_thread(work.run)
        finally:
            self._job = None
        self._apply(result)
        if self._refresh_again:
            self._refresh_again = False
            self.schedule_refresh()

    def _apply(self, work: "RefreshWork") -> None:
        obs = self.observer
        if work.generation != obs.generation:        # the panes were reset meanwhile
            self.schedule_refresh()
            return
        obs.caught_up(work.coverage, work.folded)
        self._finder = work.finder
        self.show_coverage(work.report)
        if work.rows is not None:
            self.show_results(work.rows)

    def show_coverage(self, report: Any) -> CoverageShown:
        shown = coverage_shown(report)
        self.coverage_view.set_coverage(shown)
        for warning in shown.warnings:
            key = f"{self.run_id()}:{warning}"
            if self.observer.live and key not in self._warned:
                self._warned.add(key)
                self.notifier.warning(warning, "See the Coverage tab beside the call tree.")
        return shown

    def show_results(self, rows: list[Any]) -> list[ResultShown]:
        self.result_rows = rows
        shown = [ResultShown(r.call_id, r.status, r.model, r.source, r.prompt, r.response or r.error,
                             r.input_tokens, r.output_tokens, r.cost_usd, r.duration_ms, r.kind) for r in rows]
        self.results_table.set_rows(shown)
        return shown

    def export_results_csv(self, path: str) -> str | None:
        """The rows the table shows (after its filter), then the answer, as CSV: core.trust.results'
        columns and the `unresolved_citations` flags of the other exports (core/exports/export_csv.py)."""
        # lazy: +6 modules in the window (where it runs)
        from core.exports.export_csv import rows_csv
        visible = {r.call_id for r in self.results_table.visible_rows()}
        rows = [r for r in self.result_rows if r.call_id in visible]
        view = self.panes.view
        run = {"answer": view.answer, "status": view.status, "root_model": view.meta.root_model}
        try:
            text = rows_csv(rows, self.documents_for(), run)
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        except OSError as exc:
            self.notifier.error(f"The CSV could not be written: {exc}", "Pick another folder or file name.")
            return None
        self.notifier.info(f"Exported {len(rows)} sub-calls to {path}.")
        return path

    # ---- cost preview and projection --------------------------------------------
    def run_config(self) -> Any:
        """The RunConfig the Run button would use now (None if it cannot be built)."""
        qp = self.window.question_panel
        try:
            return build_run_config(self._settings(), root=qp.root_model(), sub=qp.sub_model() or None,
                                    overrides={**qp.caps(), **qp.run_overrides()})
        except ValueError as exc:
            log.info("no cost preview: %s", exc)
            return None

    def update_estimate(self) -> asyncio.Task | None:
        """Refresh the estimate next to Run (in the background); returns its task."""
        if self.runs.running or not loop_running():
            return None
        docs = list(self.sources.documents.values())
        config = self.run_config() if docs else None
        if config is None:
            self.preview.clear()
            self.window.question_panel.set_blocked("")
            return None
        chars = sum(map(chars_of, docs))       # a read-back Document's text is not read
        self._estimate_seq += 1
        self.estimate_task = asyncio.ensure_future(self._estimate(config, chars, self._estimate_seq))
        return self.estimate_task

    async def _estimate(self, config: Any, chars: int, seq: int) -> None:
        # lazy: free in the window (where it runs)
        from core.store.errors import StoreError
        try:
            preview = await asyncio.to_thread(preview_in_thread, config, chars)
        except (StoreError, OSError, ValueError) as exc:
            log.warning("cost preview failed: %s", exc)
            return
        if seq != self._estimate_seq or self.runs.running:      # a newer estimate is on its way, or a run began
            return
        self.last_preview = preview
        self.preview.set_estimate(*describe_preview(preview))
        self.window.question_panel.set_blocked(preview.blocker, list(preview.fixes))
        self.window.question_panel.set_caution(preview.warning, list(preview.warning_fixes), preview.consequence)

    def refresh_projection(self) -> None:
        view = self.panes.view
        if not self.observer.live or not self.observer.events:
            return
        projection = self.observer.projection()
        if view.status != "running":
            if self.preview.projection_text:
                self.preview.clear()                        # the meter has the final figures
                self._preview_timer.start()                 # the estimate for the next run
            return
        text, level = describe_projection(projection, view.budget.cap_usd)
        self.preview.set_projection(text, "What the run will likely have spent when it ends, from its pace "
                                    "so far (at most: if it uses every iteration).", level)

    # ---- the approval gate -----------------------------------------------------
    def with_approver(self, config: Any) -> Any:
        """The config with the window's approval dialog as its approver."""
        return config.replace(approver=self.approve)

    async def approve(self, info: Any) -> bool:
        """The engine's approval callback: a dialog in the window; True = go on."""
        cfg = self.runs.config
        shown = approval_of(info, getattr(cfg, "approve_batch_calls", None), getattr(cfg, "approve_batch_usd", None))
        self.approvals.append(shown)
        dialog = ApprovalDialog(self.window, shown)
        self.approval = dialog
        future: asyncio.Future = asyncio.get_event_loop().create_future()

        def decided(answer: bool) -> None:
            if not future.done():
                future.set_result(answer)
        dialog.decided.connect(decided)
        dialog.open()
        try:
            answer = await future
        finally:
            if dialog.isVisible():
                dialog.close()
            self.approval = None
        return answer


