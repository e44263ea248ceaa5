"""The per-run results table: every sub-call as one row, for the GUI's filterable
table and the CSV export (`rlm-studio runs export ID --format csv`).

    rows = results_of_run(store, run_id)        # list[ResultRow]
    write_csv(rows, path)

`source` names where the prompt's document text came from ("report.pdf:page 2 -
report.pdf:page 2, line 3"), when it can be found in the run's documents.
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass, fields
from typing import Any, Iterable, Sequence

from core.ingest.address import address_in
from core.trust.coverage import ContextMatcher, _field
from core.trust.joined import joined_context
from core.run_record import fold_record


@dataclass(frozen=True)
class ResultRow:
    call_id: str
    parent_id: str | None
    depth: int
    kind: str
    model: str
    status: str
    source: str                  # "PATH:ADDRESS - PATH:ADDRESS" or ""
    source_path: str
    source_start: int | None     # [start, end) in that document's text
    source_end: int | None
    prompt: str
    response: str
    error: str
    input_tokens: int
    output_tokens: int
    cost_usd: float              # own: the call itself (a nested RLM makes none of its own: 0)
    duration_ms: int
    subtree_cost_usd: float = 0.0   # with everything below it (a nested RLM's whole tally)
    error_type: str = ""


COLUMNS = tuple(f.name for f in fields(ResultRow))


class SourceFinder:
    """Where a prompt's largest stretch of document text sits."""

    def __init__(self, documents: Sequence[Any], *, min_chars: int = 20) -> None:
        self.docs = list(documents)
        context, bounds, _unread = joined_context(self.docs)
        self.bounds = [(i, lo, hi) for i, (_path, lo, hi) in enumerate(bounds)]
        self.matcher = ContextMatcher(context, min_chars=min_chars)

    def find(self, prompt: str) -> tuple[str, str, int | None, int | None]:
        spans = self.matcher.spans(prompt)
        best: tuple[int, int, int] | None = None          # doc index, start, end (doc coordinates)
        for i, lo, hi in self.bounds:
            inside = [(max(a, lo) - lo, min(b, hi) - lo) for a, b in spans if a < hi and b > lo]
            if not inside:
                continue
            start, end = min(a for a, _ in inside), max(b for _, b in inside)
            if best is None or end - start > best[2] - best[1]:
                best = (i, start, end)
        if best is None:
            return "", "", None, None
        doc = self.docs[best[0]]
        _i, lo, hi = self.bounds[best[0]]
        path, context = str(_field(doc, "path")), self.matcher.context
        spans_, fmt = _field(doc, "spans", ()) or (), _field(doc, "format", "text") or "text"
        first = address_in(context, spans_, fmt, best[1], base=lo, chars=hi - lo)
        last = address_in(context, spans_, fmt, max(best[1], best[2] - 1), base=lo, chars=hi - lo)
        label = f"{path}:{first}" if first == last else f"{path}:{first} - {path}:{last}"
        return label, path, best[1], best[2]


def results_from_events(events: Iterable[Any], documents: Sequence[Any] = ()) -> list[ResultRow]:
    record = fold_record(events)
    finder = SourceFinder(documents) if documents else None
    labels = record.meta.config.get("model_labels") or {}     # the names the user chose
    rows = []
    for s in record.sub_calls():
        source, path, start, end = finder.find(s.prompt) if finder else ("", "", None, None)
        call, model = s.call, s.routed_model
        rows.append(ResultRow(s.id, s.parent.id if s.parent is not None else None,
                              call.depth if call is not None else 0, s.kind, labels.get(model, model), s.status,
                              source, path, start,
                              end, s.prompt, s.response or "", s.error or "", s.input_tokens, s.output_tokens,
                              s.cost_usd, s.duration_ms or 0, s.subtree_cost_usd,
                              s.error_type or ""))
    return rows


def results_of_run(store: Any, run_id: str) -> list[ResultRow]:
    from core.store.errors import MissingTextsError    # not core.store: that imports this module
    try:
        documents = store.documents(run_id)
    except MissingTextsError:
        documents = []            # an imported run without texts: no sources, the rest is there
    return results_from_events(store.iter_events(run_id), documents)


def to_csv(rows: Iterable[ResultRow]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(asdict(row))
    return out.getvalue()
