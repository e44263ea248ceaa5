"""The answer's citations as every export states them: checked against the run's stored
documents (core/ingest/citations.py, as the window does), unresolved ones flagged.

    check = citation_check(store, run_id, answer)
    {"checked": True, "total": 3, "unresolved": [{"citation": "doc:report.txt:page 99",
                                                  "problem": "report.txt has no 'page 99'"}]}

`checked` is False when the run's texts are not in the store (imported without them):
nothing can be resolved then, and the exports say so rather than pass the citations as good.
"""

from __future__ import annotations

from typing import Any

from core.store.errors import MissingTextsError
from core.ingest.citations import resolve_citations

FLAG = "⚠"
NOT_CHECKED = "citations not checked: this run's document texts are not in the store"


def documents_of(store: Any, run_id: str) -> list[Any] | None:
    """The run's documents with texts, or None when they are not stored."""
    try:
        return list(store.documents(run_id))
    except MissingTextsError:
        return None


def check(answer: str | None, documents: list[Any] | None) -> dict[str, Any]:
    if documents is None:
        return {"checked": False, "total": None, "unresolved": [], "note": NOT_CHECKED}
    cites = resolve_citations(answer or "", documents)
    return {"checked": True, "total": len(cites),
            "unresolved": [{"citation": c.text, "problem": c.problem} for c in cites if not c.ok]}


def citation_check(store: Any, run_id: str, answer: str | None) -> dict[str, Any]:
    return check(answer, documents_of(store, run_id))


def summary_lines(result: dict[str, Any]) -> list[str]:
    """One line per unresolved citation (and one when nothing could be checked)."""
    if not result["checked"]:
        return [f"{FLAG} {NOT_CHECKED}"] if result.get("note") else []
    return [f"{FLAG} [{u['citation']}] points to nothing: {u['problem']}" for u in result["unresolved"]]
