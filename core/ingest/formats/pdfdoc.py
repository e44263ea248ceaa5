"""PDF -> text per page with pypdfium2 (Apache-2.0/BSD; PyMuPDF is AGPL and not
used). Password-protected -> encrypted; unparseable -> corrupt with PDFium's
message; no text on any page (scanned) -> no_text. Only ever run in a worker."""

from __future__ import annotations

from core.ingest.decode import normalize_newlines
from core.ingest.formats.blocks import BlockText
from core.ingest.model import CORRUPT, ENCRYPTED, NO_TEXT, ExtractError, Extracted


def extract(path: str) -> Extracted:
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    try:
        pdf = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == raw.FPDF_ERR_PASSWORD:
            raise ExtractError(ENCRYPTED, "password-protected PDF") from None
        raise ExtractError(CORRUPT, str(exc)) from None
    try:
        blocks = BlockText()
        pages = len(pdf)
        for index in range(pages):
            page = pdf[index]
            try:
                textpage = page.get_textpage()
                try:
                    body = textpage.get_text_range()
                finally:
                    textpage.close()
            finally:
                page.close()
            blocks.add(f"page {index + 1}", _clean(body))
    finally:
        pdf.close()
    if not blocks.blocks_with_text:
        raise ExtractError(NO_TEXT, f"no extractable text on {pages} page(s) "
                                    "(scanned or image-only PDF; OCR is not supported)")
    return Extracted("pdf", blocks.text(), tuple(blocks.spans))


def _clean(text: str) -> str:
    text = normalize_newlines(text).replace("\x00", "").replace("\ufffe", "")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")
