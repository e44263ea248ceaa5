"""One file (or one archive member) -> one Document, or ExtractError(reason, detail).
Runs inside a worker process (see workers.py); small plain-text files only are read in
the app's own process (inline.py).

    extract_data(path, source_path, data, name, job) -> Document   # the worker's extractor
    extract_file(entry, max_bytes, job=None) -> Document           # one file, in-process
"""

from __future__ import annotations

import hashlib
import io
import zipfile

from core.ingest.model import (CORRUPT, EMPTY, NO_TEXT, TOO_LARGE, UNREADABLE, UNSUPPORTED,
                               Document, ExtractError, Extracted, FileEntry, Job)
from core.ingest.sniff import HEAD_BYTES, classify

MAX_UNZIPPED_BYTES = 1024 ** 3   # an Office/EPUB zip may not inflate past 1 GiB

TEXT_FORMATS = {"text", "markdown", "code", "csv", "tsv"}


def extract_file(entry: FileEntry, max_bytes: int, job: Job | None = None) -> Document:
    data = read_bytes(entry.source_path, max_bytes)
    return extract_data(entry.path, entry.source_path, data, entry.path, job or Job())


def extract_data(path: str, source_path: str, data: bytes, name: str, job: Job) -> Document:
    """`name` decides the format with the bytes (an archive member's own name;
    "ls.1" for "ls.1.gz"); `path` is what the document is called."""
    if not data:
        raise ExtractError(EMPTY, "0 bytes")
    fmt = classify(name, data[:HEAD_BYTES])
    extracted = _extract(fmt, path, data, job.at(path))
    if not extracted.text.strip():
        if extracted.format in TEXT_FORMATS | {"json", "jsonl", "html", "xml"}:
            raise ExtractError(EMPTY, "only whitespace" if extracted.format in TEXT_FORMATS
                               else f"{extracted.format} without visible text")
        raise ExtractError(NO_TEXT, f"{extracted.format} without text")
    tables = extracted.tables
    if not tables and job.options.tables and extracted.format in ("csv", "tsv"):
        from core.ingest.formats.tables import from_delimited
        tables = from_delimited(path, extracted.text, extracted.format,
                                job.options.max_table_cells)
    sha = hashlib.sha256(data).hexdigest()
    # ASCII bytes, one character each: decoded as UTF-8 with nothing changed (no BOM, no "\r"),
    # so the text's UTF-8 is the file and shares its hash (core/ingest/text_back.py uses it).
    same = extracted.format in TEXT_FORMATS and len(extracted.text) == len(data) and data.isascii()
    return Document(path=path, source_path=source_path, format=extracted.format,
                    text=extracted.text, chars=len(extracted.text), size=len(data),
                    sha256=sha, spans=extracted.spans,
                    ocr_pages=extracted.ocr_pages, tables=tables, text_sha256=sha if same else "")


def read_bytes(path: str, max_bytes: int) -> bytes:
    """The file's bytes; more than `max_bytes` (when over 0) is too large."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1) if max_bytes > 0 else handle.read()
    except OSError as exc:
        raise ExtractError(UNREADABLE, exc.strerror or str(exc)) from None
    if 0 < max_bytes < len(data):
        raise ExtractError(TOO_LARGE, f"over the {max_bytes:,} byte limit")
    return data


def _extract(fmt: str, path: str, data: bytes, job: Job) -> Extracted:
    if fmt in TEXT_FORMATS:
        from core.ingest.formats import plain
        return plain.extract(data, fmt)
    if fmt in ("json", "jsonl"):
        from core.ingest.formats import jsondoc
        return jsondoc.extract(data, fmt)
    if fmt == "html":
        from core.ingest.formats import htmldoc
        return htmldoc.extract(data)
    if fmt == "xml":
        from core.ingest.formats import xmldoc
        return xmldoc.extract(data)
    if fmt == "pdf":
        from core.ingest.formats import pdfdoc
        return pdfdoc.extract(data, job)
    if fmt == "image":
        from core.ingest.formats import images
        return images.extract(data, job)
    if fmt == "eml":
        from core.ingest.formats import mail
        return mail.extract_eml(data)
    if fmt == "mbox":
        from core.ingest.formats import mail
        return mail.extract_mbox(data)
    if fmt.startswith("zip:"):
        return _extract_zip(fmt[4:], data, path, job)
    raise ExtractError(UNSUPPORTED, f"no extractor for {fmt}")


def _extract_zip(expected: str, data: bytes, path: str, job: Job) -> Extracted:
    """OOXML and EPUB: the archive's members decide, the extension only names
    what we expected (a .docx holding no Word document is corrupt)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = set(archive.namelist())
        inflated = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ExtractError(CORRUPT, f"bad zip archive: {exc}") from None
    if inflated > MAX_UNZIPPED_BYTES:
        raise ExtractError(TOO_LARGE, f"archive inflates to {inflated:,} bytes")
    kind = _zip_kind(names, archive)
    if kind is None:
        if expected:
            raise ExtractError(CORRUPT, f"not a .{expected} document: a zip archive without "
                                        f"{_MARKER[expected]}")
        raise ExtractError(UNSUPPORTED, "zip archive (reading archives is off)")
    try:
        if kind == "epub":
            from core.ingest.formats import epubdoc
            return epubdoc.extract(archive)
        if kind == "docx":
            from core.ingest.formats import worddoc
            return worddoc.extract(data)
        if kind == "pptx":
            from core.ingest.formats import slides
            return slides.extract(data)
        from core.ingest.formats import sheets
        return sheets.extract(data, path, job.options.tables, job.options.max_table_cells)
    except ExtractError:
        raise
    except (KeyError, ValueError, TypeError, AttributeError, IndexError, zipfile.BadZipFile,
            EOFError, OSError, SyntaxError) as exc:
        # python-docx/pptx/openpyxl raise these (and lxml's XMLSyntaxError, a
        # SyntaxError) on malformed packages.
        raise ExtractError(CORRUPT, f"{type(exc).__name__}: {exc}") from None


_MARKER = {"docx": "word/document.xml", "pptx": "ppt/presentation.xml",
           "xlsx": "xl/workbook.xml", "epub": "META-INF/container.xml"}


def _zip_kind(names: set[str], archive: zipfile.ZipFile) -> str | None:
    if "mimetype" in names and archive.read("mimetype").strip() == b"application/epub+zip":
        return "epub"
    if "[Content_Types].xml" in names:
        for kind in ("docx", "pptx", "xlsx"):
            if _MARKER[kind] in names:
                return kind
    if "META-INF/container.xml" in names and any(n.endswith(".opf") for n in names):
        return "epub"
    return None
