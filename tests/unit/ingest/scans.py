"""Scans rendered from known text, for the OCR tests and benchmark: a text PDF
(makers.pdf_bytes) is rendered by PDFium to a grayscale image, which becomes an
image-only PDF page, a PNG, a JPEG or a (multi-page) TIFF. Plus the character
accuracy measure: 1 - CER, CER = Levenshtein distance / length of the truth."""

from __future__ import annotations

import io
import random

from tests.unit.ingest import makers

TEXTS = [
    "The quarterly revenue grew by 12 percent in the north region.\n"
    "Invoices from March 2024 were paid on time; the total was 48,210 EUR.\n"
    "Scanned pages have no text layer, so OCR must read them.",
    "Minutes of the board meeting held on 4 April 2024.\n"
    "Present: A. Moreau, J. Smith, K. Tanaka. Apologies: none.\n"
    "The board approved the budget of 1.2 million for the new warehouse.",
    "Delivery note 7731: 40 pallets of copper wire, 12 drums of resin.\n"
    "Received in good order at the Hamburg depot by the night shift.\n"
    "Any damage must be reported within 48 hours of receipt.",
]


def render(text: str, dpi: int = 200, noise: float = 0.0, seed: int = 1):
    """A grayscale PIL image of `text` set as a PDF page; `noise` flips that share
    of pixels (speckle, as a cheap scanner makes)."""
    import pypdfium2 as pdfium
    pdf = pdfium.PdfDocument(makers.pdf_bytes([text]))
    try:
        image = pdf[0].render(scale=dpi / 72, grayscale=True).to_pil()
    finally:
        pdf.close()
    if noise:
        rng = random.Random(seed)
        pixels = image.load()
        width, height = image.size
        for _ in range(int(width * height * noise)):
            x, y = rng.randrange(width), rng.randrange(height)
            pixels[x, y] = 255 - pixels[x, y]
    return image


def scanned_pdf(texts: list[str], dpi: int = 200, noise: float = 0.0) -> bytes:
    images = [render(t, dpi, noise, seed=i) for i, t in enumerate(texts)]
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", resolution=dpi, save_all=True, append_images=images[1:])
    return buffer.getvalue()


def mixed_pdf(pages: list[tuple[str, bool]], dpi: int = 200) -> bytes:
    """Pages of (text, scanned?): text pages keep a text layer, scanned ones are images."""
    import pypdfium2 as pdfium
    out = pdfium.PdfDocument.new()
    for text, scanned in pages:
        source = pdfium.PdfDocument(scanned_pdf([text], dpi) if scanned
                                    else makers.pdf_bytes([text]))
        out.import_pages(source)
        source.close()
    buffer = io.BytesIO()
    out.save(buffer)
    out.close()
    return buffer.getvalue()


def image_bytes(texts: list[str], fmt: str, dpi: int = 200) -> bytes:
    images = [render(t, dpi, seed=i) for i, t in enumerate(texts)]
    buffer = io.BytesIO()
    if fmt == "TIFF":
        images[0].save(buffer, "TIFF", save_all=True, append_images=images[1:],
                       compression="tiff_deflate")
    else:
        images[0].save(buffer, fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return buffer.getvalue()


def accuracy(truth: str, read: str) -> float:
    """1 - CER over whitespace-normalised text."""
    a, b = " ".join(truth.split()), " ".join(read.split())
    return 1.0 - levenshtein(a, b) / max(len(a), 1)


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
