"""PNG, JPEG and TIFF images -> text by OCR (tesseract, see ocr.py), one "page N"
block per frame (a multi-page TIFF is a scanned document). Only with
IngestOptions.ocr; otherwise an image is skipped as unsupported, saying how to
turn OCR on. Pillow decodes (it comes with python-pptx); its decompression-bomb
guard refuses absurd pixel counts."""

from __future__ import annotations

import io

from core.ingest.formats.blocks import BlockText
from core.ingest.model import CORRUPT, NO_TEXT, TOO_LARGE, UNSUPPORTED, ExtractError, Extracted

KINDS = ((b"\x89PNG\r\n\x1a\n", "PNG"), (b"\xff\xd8\xff", "JPEG"), (b"II*\x00", "TIFF"),
         (b"MM\x00*", "TIFF"))
OCR_OFF = "OCR is off: turn it on with --ocr or Settings > Documents"


def kind(head: bytes) -> str | None:
    for magic, name in KINDS:
        if head.startswith(magic):
            return name
    return None


def extract(data: bytes, job) -> Extracted:
    what = kind(data[:8]) or "image"
    if not job.options.ocr:
        raise ExtractError(UNSUPPORTED, f"{what} image ({OCR_OFF})")
    from PIL import Image, ImageSequence

    from core.ingest.formats import ocr
    ocr.require_tesseract()
    try:
        picture = Image.open(io.BytesIO(data))
        frames = getattr(picture, "n_frames", 1)
    except Image.DecompressionBombError as exc:
        raise ExtractError(TOO_LARGE, str(exc)) from None
    except (OSError, ValueError, SyntaxError) as exc:
        raise ExtractError(CORRUPT, f"{what} image: {exc}") from None
    blocks = BlockText()
    pages: list[int] = []
    try:
        for number, frame in enumerate(ImageSequence.Iterator(picture), 1):
            job.step(f"OCR page {number} of {frames}")
            body = ocr.recognize(ocr.gray_pgm(frame), job.options.ocr_language)
            blocks.add(f"page {number}", body, marker=f"page {number} (read by OCR)")
            pages.append(number)
    except (OSError, ValueError, SyntaxError) as exc:
        raise ExtractError(CORRUPT, f"{what} image: {exc}") from None
    if not blocks.blocks_with_text:
        raise ExtractError(NO_TEXT, f"OCR found no text in the {what} image")
    return Extracted("image", blocks.text(), tuple(blocks.spans), ocr_pages=tuple(pages))
