"""One file -> one Document, or ExtractError(reason, detail). Runs inside a
worker process (see workers.py); never in the GUI/engine process."""

from __future__ import annotations

import hashlib
import io
import zipfile

from core.ingest.model import (CORRUPT, EMPTY, NO_TEXT, TOO_LARGE, UNREADABLE, UNSUPPORTED,
                               Document, ExtractError, Extracted, FileEntry)
from core.ingest.sniff import HEAD_BYTES, classify

MAX_UNZIPPED_BYTES = 1024 ** 3   # an Office/EPUB zip may not inflate past 1 GiB

_TEXT_FORMATS = {"text", "markdown", "code", "csv", "tsv"}


def extract_file(entry: FileEntry, max_bytes: int) -> Document:
    data = _read(entry.source_path, max_bytes)
    if not data:
        raise ExtractError(EMPTY, "0 bytes")
    fmt = classify(entry.path, data[:HEAD_BYTES])
    extracted = _extract(fmt, entry, data)
    if not extracted.text.strip():
        if extracted.format in _TEXT_FORMATS | {"json", "jsonl", "html", "xml"}:
            raise ExtractError(EMPTY, "only whitespace" if extracted.format in _TEXT_FORMATS
                               else f"{extracted.format} without visible text")
        raise ExtractError(NO_TEXT, f"{extracted.format} without text")
    return Document(path=entry.path, source_path=entry.source_path, format=extracted.format,
                    text=extracted.text, chars=len(extracted.text), size=len(data),
                    sha256=hashlib.sha256(data).hexdigest(), spans=extracted.spans)


def _read(path: str, max_bytes: int) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise ExtractError(UNREADABLE, exc.strerror or str(exc)) from None
    if len(data) > max_bytes:
        raise ExtractError(TOO_LARGE, f"over the {max_bytes:,} byte limit")
    return data


def _extract(fmt: str, entry: FileEntry, data: bytes) -> Extracted:
    if fmt in _TEXT_FORMATS:
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
        return pdfdoc.extract(entry.source_path)
    if fmt == "eml":
        from core.ingest.formats import mail
        return mail.extract_eml(data)
    if fmt == "mbox":
        from core.ingest.formats import mail
        return mail.extract_mbox(data)
    if fmt.startswith("zip:"):
        return _extract_zip(fmt[4:], data)
    raise ExtractError(UNSUPPORTED, f"no extractor for {fmt}")


def _extract_zip(expected: str, data: bytes) -> Extracted:
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
        raise ExtractError(UNSUPPORTED, "zip archive (archives are not unpacked; "
                                        "extract it and drop the folder)")
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
        return sheets.extract(data)
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
