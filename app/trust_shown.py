"""What the window's trust panes are fed, apart from the glue that wires them
(app/trust_glue.py): the observer that hears the run panes' events, the refresh work
done in a thread, and plain adapters from core.trust's results to ui/'s shown rows.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Sequence

from app.run_service import preload_engine

from ui.approval_dialog import ApprovalShown
from ui.citation_text import CitationMark
from ui.coverage_view import CoverageShown, DocumentShown
from ui.cost_meter import level_for, money
from ui.rows import human_count

class PaneObserver:
    """Sees every event the run panes fold (RunPanes.observers), live and in replays;
    keeps the coverage fold (core.trust.coverage.Coverage) in step with them."""

    def __init__(self, glue: Any) -> None:        # app/trust_glue.py TrustGlue
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

    def caught_up(self, coverage: Any, folded: int) -> None:
        """The coverage fold a refresh built, over the first `folded` events."""
        self.coverage, self.folded = coverage, folded

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
HEAVY_TEXT_CHARS = 32 << 20  # a read-back text this big: its offsets index may be built first (~1.4 s a GB)


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
        return len(self.events) - self.folded > HEAVY_EVENTS or calls - len(self.sources) > HEAVY_SOURCES \
            or (self.coverage is None and bool(self.events) and any(
                getattr(d, "held", True) is False and (getattr(d, "chars", 0) or 0) > HEAVY_TEXT_CHARS
                for d in self.documents))

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


def loop_running() -> bool:
    """Work can be scheduled (the app's qasync loop runs; not so in a bare test or at exit)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# ---- adapters over core.trust (each has a plain fallback until its module is there) ----

def mark_of(c: Any) -> CitationMark:
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
