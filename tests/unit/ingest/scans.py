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


def render(text: str, dpi: int = 200, degrade: bool = False, seed: int = 1):
    """A grayscale PIL image of `text` set as a PDF page. `degrade` makes it look
    like a cheap office scan: tilted 0.8 degrees, blurred, 0.2% speckle, JPEG q60."""
    import pypdfium2 as pdfium
    pdf = pdfium.PdfDocument(makers.pdf_bytes([text]))
    try:
        image = pdf[0].render(scale=dpi / 72, grayscale=True).to_pil()
    finally:
        pdf.close()
    if degrade:
        from PIL import Image, ImageFilter
        image = image.rotate(0.8, resample=Image.BICUBIC, fillcolor=255)
        image = image.filter(ImageFilter.GaussianBlur(0.7))
        rng = random.Random(seed)
        pixels = image.load()
        width, height = image.size
        for _ in range(int(width * height * 0.002)):
            x, y = rng.randrange(width), rng.randrange(height)
            pixels[x, y] = 0 if pixels[x, y] > 128 else 255
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=60)
        image = Image.open(io.BytesIO(buffer.getvalue())).convert("L")
    return image


def scanned_pdf(texts: list[str], dpi: int = 200, degrade: bool = False) -> bytes:
    images = [render(t, dpi, degrade, seed=i) for i, t in enumerate(texts)]
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
