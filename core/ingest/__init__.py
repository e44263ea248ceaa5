"""Files and folders -> documents (one extractor per format), hostile input handled.

Public API (the engine, the store, the CLI and the GUI rely on it):
    ingest(paths, options, on_progress) -> IngestResult     (async, cancellable)
    ingest_sync(paths, options, on_progress) -> IngestResult
    walk(paths, options) -> (list[FileEntry], list[Skip])
    address_of(document, offset) -> str ; locate(document, address) -> (start, end) | None
    address_in / locate_in: the same on plain (text, spans, format) data
Archives are read as folders, scanned pages by OCR when IngestOptions.ocr is on,
identical files once, and CSV/TSV/XLSX also as Document.tables.
See docs/documents.md.
"""

from core.ingest.address import address_in, address_of, locate, locate_in
from core.ingest.model import (FORMATS, REASONS, Document, FileEntry, IngestOptions,
                               IngestResult, Progress, Skip, Span, Table)
from core.ingest.run import ingest, ingest_sync
from core.ingest.walk import walk

__all__ = ["FORMATS", "REASONS", "Document", "FileEntry", "IngestOptions", "IngestResult",
           "Progress", "Skip", "Span", "Table", "address_in", "address_of", "locate", "locate_in", "ingest",
           "ingest_sync", "walk"]
