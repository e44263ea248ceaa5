"""The exports: a stored run written out as JSON, Markdown, HTML or CSV (see docs/storage.md).

They read the store (core/store) and the trust checks (core/trust: citations, results,
support, manifest), so they sit above both; the store imports neither.

    from core.exports import export
    export(store, run_id, "html", Path("run.html"))
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

EXPORT_FORMATS = ("json", "md", "html", "csv")


def export(store: Any, run_id: str, fmt: str, path: Path, *, include_texts: bool = False) -> None:
    """Write the run as "json" (re-importable), "md" (report), "html" (one self-contained page)
    or "csv" (the results table: one row per sub-call)."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}")
    from core.exports import export_csv, export_html, export_json, export_md   # each loads its own renderer
    module = {"json": export_json, "md": export_md, "html": export_html, "csv": export_csv}[fmt]
    module.write(store, run_id, Path(path), include_texts=include_texts)
