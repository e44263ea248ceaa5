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
from dataclasses import replace
from typing import Any, Callable, Sequence

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QTabWidget

from app.run_service import preload_engine
from app.trust_actions import TrustActions
from ui.approval_dialog import ApprovalDialog, ApprovalShown, ApprovalThresholds
from ui.citation_text import CitationMark, CitationText, body_of
from ui.cost_preview import CostPreview
from ui.coverage_view import CoverageShown, CoverageView, DocumentShown
from ui.results_table import ResultShown, ResultsTable
from ui.source_viewer import SourceViewer
from ui.highlight import is_dark
from ui.theme import PALETTES
from app.settings import build_run_config
from core.repl.context_file import chars_of
from ui.rows import human_count
from ui.cost_meter import level_for, money

log = logging.getLogger(__name__)

REFRESH_MS = 400            # coverage and sub-call rows follow a live run at most this often


class PaneObserver:
    """Sees every event the run panes fold (RunPanes.observers), live and in replays;
    keeps the coverage fold (core.trust.coverage.Coverage) in step with them."""

    def __init__(self, glue: "TrustGlue") -> None:
        self.glue = glue
        self.events: list[Any] = []
        self.live = True
        self.coverage: Any = None          # built once the run's documents are known
        self.folded = 0                   # events already applied to `coverage`
        self._projection: Any = None       # core.trust.preview.CostProjection
        self._projected = 0
        self.generation = 0                # +1 per reset: work begun before it is dropped

    def reset(self, live: bool) -> None:
        self.events = []
        self.live = live
        self.generation += 1
        self.coverage = None
        self.folded = 0
        self._projection = None
        self._projected = 0
        self.glue.schedule_refresh()

    def feed(self, events: Sequence[Any]) -> None:
        self.events.extend(events)
        self.glue.schedule_refresh()

    def projection(self) -> dict:
        """core.trust.preview.CostProjection over the events so far."""
        if self._projection is None:
            # lazy: +5 modules in the window (where it runs)
            from core.trust.preview import CostProjection
            self._projection = CostProjection()
            self._projected = 0
        apply = self._projection.apply
        for event in self.events[self._projected:]:
            apply(event)
        self._projected = len(self.events)
        return self._projection.projection()


HEAVY_EVENTS = 1000         # more new events than this: fold them in a thread
HEAVY_SOURCES = 50          # more sub-call prompts to trace to their source than this: same


class RefreshWork:
    """One refresh of the Coverage and Sub-calls tabs: plain data in, plain data out,
    so it can run in a thread (one at a time; the UI thread waits for its result)."""

    def __init__(self, generation: int, events: list[Any], documents: list[Any], coverage: Any, folded: int,
                 want_rows: bool, sources: dict[str, tuple], finder: Any) -> None:
        self.generation, self.events, self.documents = generation, events, documents
        self.coverage, self.folded, self.want_rows = coverage, folded, want_rows
        self.sources, self.finder = sources, finder
        self.report: Any = None
        self.rows: list[Any] | None = None

    def heavy(self) -> bool:
        calls = sum(1 for e in self.events if e.type == "SubCallStarted") if self.want_rows else 0
        return len(self.events) - self.folded > HEAVY_EVENTS or calls - len(self.sources) > HEAVY_SOURCES

    def run(self) -> "RefreshWork":
        if self.events and self.documents:
            if self.coverage is None:
                # lazy: +2 modules in the window (where it runs)
                from core.trust.coverage import Coverage
                self.coverage, self.folded = Coverage(self.documents), 0
            apply = self.coverage.apply
            for event in self.events[self.folded:]:
                apply(event)
            self.folded = len(self.events)
            self.report = self.coverage.report()
        if self.want_rows:
            self.rows = self._rows()
        return self

    def _rows(self) -> list[Any]:
        # lazy: +3 modules in the window (where it runs)
        from core.trust.results import SourceFinder, results_from_events
        rows = results_from_events(self.events) if self.events else []
        if rows and self.documents and self.finder is None:
            self.finder = SourceFinder(self.documents)
        for i, row in enumerate(rows):
            if row.status in ("running", "waiting") or self.finder is None:
                continue
            found = self.sources.get(row.call_id)
            if found is None:
                found = self.sources[row.call_id] = self.finder.find(row.prompt)
            rows[i] = replace(row, source=found[0], source_path=found[1], source_start=found[2],
                              source_end=found[3])
        return rows


class TrustGlue:
    """Narrow dependencies: the window, the run panes, the notifier, the run path (`runs`:
    the run in progress; `launch`), the history glue (its store), and callables for the
    settings, the current sources and selecting a cited source."""

    def __init__(self, window: Any, panes: Any, notifier: Any, runs: Any, history: Any, *,
                 settings: Callable[[], Any], documents: Callable[[], dict],
                 show_citation: Callable[[str], None], launch: Callable[[Any], Any]) -> None:
        self.window = window
        self.panes = panes
        self.notifier = notifier
        self.runs = runs
        self.history = history
        self._settings = settings
        self._documents = documents
        self._show_citation = show_citation
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
        self.thresholds.set_values(settings().caps)
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

        self.actions = TrustActions(window, panes, notifier, history, settings=settings, launch=launch,
                                    is_running=lambda: runs.running, with_approver=self.with_approver)

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
            return list(self._documents().values())
        if run_id not in self._docs_cache:
            # lazy: free in the window (where it runs)
            from core.store.errors import StoreError
            try:
                self._docs_cache[run_id] = list(self.history.store().documents(run_id))
            except (StoreError, OSError) as exc:
                log.warning("documents of run %s not available: %s", run_id, exc)
                return list(self._documents().values())
            if len(self._docs_cache) > 8:
                self._docs_cache.pop(next(iter(self._docs_cache)))
        return self._docs_cache[run_id]

    # ---- citations -----------------------------------------------------
    def resolve_citations(self, text: str) -> list[CitationMark]:
        # lazy: +1 modules in the window (where it runs)
        from core.ingest.citations import resolve_citations
        self.citations.error_color = PALETTES["dark" if is_dark() else "light"]["error"]
        return [_mark_of(c) for c in resolve_citations(text, self.documents_for())]

    def open_citation(self, href: str) -> SourceViewer:
        """A citation link was clicked: open the source viewer at its passage."""
        body = body_of(href)
        docs = self.documents_for()
        marks = self.resolve_citations(f"[doc:{body}]")
        if self.viewer is None:
            self.viewer = SourceViewer(self.window)
        viewer = self.viewer
        viewer.set_documents(docs)
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
            self._show_citation(f"{mark.path}:{mark.address}")    # and select it in the sources
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
        if work.heavy() and _loop_running():
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
        obs.coverage, obs.folded = work.coverage, work.folded
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
        # lazy: +5 modules in the window (where it runs)
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
        if self.runs.running or not _loop_running():
            return None
        docs = list(self._documents().values())
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


def _loop_running() -> bool:
    """Work can be scheduled (the app's qasync loop runs; not so in a bare test or at exit)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# ---- adapters over core.trust (each has a plain fallback until its module is there) ----

def _mark_of(c: Any) -> CitationMark:
    """A core.ingest.citations.Citation as the transcript's CitationMark."""
    body = c.text[4:] if c.text.startswith("doc:") else c.text
    return CitationMark(start=c.answer_start, end=c.answer_end, body=body, path=c.path, address=c.address,
                        ok=bool(c.ok), reason=c.problem or "",
                        doc_range=(c.start, c.end) if c.start is not None else None)


def coverage_shown(report: Any) -> CoverageShown:
    """core.trust.coverage.CoverageReport as the Coverage tab shows it."""
    if report is None:
        return CoverageShown()
    docs = [DocumentShown(d.path, d.chars, tuple((a, b) for a, b in d.read), getattr(d, "searched", False))
            for d in report.documents]
    return CoverageShown(docs, list(report.warnings), report.percent / 100.0)


def preview_in_thread(config: Any, total_chars: int) -> Any:
    """core.trust.preview.preview_cost with its own store connection (run it in a thread:
    the engine's modules and the price map take a moment to load the first time). Prices
    come from litellm's map file (core/price_map.py), so litellm itself is not imported."""
    preload_engine(wait_for_litellm=False)   # what a run imports, under the same lock
    # lazy: free in the window (where it runs)
    from core.store import RunStore
    # lazy: +5 modules in the window (where it runs)
    from core.trust.preview import preview_cost
    with RunStore.open() as store:
        return preview_cost(config, total_chars, store=store)


def count_span(low: int, high: int) -> str:
    """"7k-9k", or one figure when both ends read the same ("7.1k", not "7.1k-7.1k")."""
    low_text, high_text = human_count(low), human_count(high)
    return low_text if low_text == high_text else f"{low_text}-{high_text}"


def describe_preview(p: Any) -> tuple[str, str]:
    tokens = f"~{count_span(*p.input_tokens)} tokens in"
    if p.usd_low is None or p.usd_high is None:
        dollars = "price unknown"
    else:
        dollars = f"{money(p.usd_low)} to {money(p.usd_high)}"
    text = f"Estimate: {tokens} · {dollars}"
    if getattr(p, "blocker", ""):
        text = "Cannot start with these settings: the reason and its fixes are below Run."
    elif getattr(p, "reach", ""):
        text += "\n" + p.reach
    tip = (f"Documents: {p.context_chars:,} characters (~{human_count(p.context_tokens)} tokens).\n"
           f"Output: {count_span(*p.output_tokens)} tokens; about "
           f"{p.expected_turns} root turns.\n" + "\n".join(p.notes))
    return text, tip


def describe_projection(projection: dict, cap_usd: float | None) -> tuple[str, str]:
    spent, projected, high = projection["spent_usd"], projection["projected_usd"], projection["high_usd"]
    text = f"Projected to finish: ~{money(projected)} (at most {money(high)}; spent {money(spent)})"
    level = level_for(projected / cap_usd if cap_usd else None) if cap_usd else "normal"
    return text, level


def approval_of(info: Any, calls_over: int | None = None, usd_over: float | None = None) -> ApprovalShown:
    """The engine's approval info (core.engine.subcalls.approval_info) as the dialog shows it."""
    if isinstance(info, ApprovalShown):
        return info
    calls, worst = int(info.get("calls", 0) or 0), info.get("worst_case_usd")
    reasons = []
    if calls_over is not None and calls > calls_over:
        reasons.append(f"more than {calls_over} calls")
    if usd_over is not None and worst is not None and worst > usd_over:
        reasons.append(f"worst case over ${usd_over:g}")
    kind = "nested RLM " if info.get("kind") == "rlm" else ""
    return ApprovalShown(calls=calls, cost_low=None, cost_high=worst,
                         model=f"{kind}{info.get('model') or ''}".strip(), reason=", ".join(reasons),
                         spent_usd=info.get("spent_usd"))
