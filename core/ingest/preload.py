"""Imported by the multiprocessing fork server (never by the app itself): loads
the extractors and their parser libraries once, so forked workers start warm."""

from __future__ import annotations

import importlib
import logging

log = logging.getLogger(__name__)

for _name in ("core.ingest.extract", "core.ingest.workers", "core.ingest.archives",
              "core.ingest.formats.mail", "core.ingest.formats.htmldoc",
              "core.ingest.formats.tables", "charset_normalizer", "pypdfium2", "docx", "pptx",
              "openpyxl"):
    try:
        importlib.import_module(_name)
    except ImportError as exc:    # a missing optional parser fails later, per file, with a reason
        log.warning("fork server could not preload %s: %s", _name, exc)
