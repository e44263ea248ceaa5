"""OCR of scanned PDF pages and images with the system's tesseract, in the real
ingest workers; fixtures are scans rendered from known text (tests/unit/ingest/scans.py)."""

from __future__ import annotations

import asyncio
import time

import pytest

from core.ingest import IngestOptions, address_of, ingest, ingest_sync, locate
from core.ingest.model import ExtractError, FileEntry, Job
from tests.unit.ingest import archive_makers as am
from tests.unit.ingest import scans

OCR = IngestOptions(per_file_timeout_s=60.0, workers=2, ocr=True)


def test_scanned_pages_of_a_pdf_are_read_by_ocr_and_keep_their_addresses(tmp_path):
    am.write(tmp_path / "s" / "mixed.pdf", scans.mixed_pdf(
        [(scans.TEXTS[0], False), (scans.TEXTS[1], True), (scans.TEXTS[2], True)]))
    steps = []
    result = ingest_sync([tmp_path / "s"], OCR, on_progress=lambda p: p.step and steps.append(p.step))
    assert result.skipped == []
    doc = result.documents[0]
    assert doc.format == "pdf" and doc.ocr_pages == (2, 3)
    assert [s.address for s in doc.spans] == ["page 1", "page 2", "page 3"]
    assert "--- page 1 ---" in doc.text and "--- page 2 (read by OCR) ---" in doc.text
    for number, truth in enumerate(scans.TEXTS, 1):
        start, end = locate(doc, f"page {number}")
        body = doc.text[start:end].split("\n", 1)[1]
        assert scans.accuracy(truth, body) >= 0.97, (number, body)
    offset = doc.text.index("board approved")
    assert address_of(doc, offset) == "page 2, line 3"
    assert steps == ["mixed.pdf: OCR page 2 of 3 (1 of 2 without text)",
                     "mixed.pdf: OCR page 3 of 3 (2 of 2 without text)"]


@pytest.mark.parametrize("fmt,name", [("PNG", "scan.png"), ("JPEG", "scan.jpg"),
                                      ("TIFF", "scan.tiff")])
def test_images_are_read_by_ocr(tmp_path, fmt, name):
    texts = scans.TEXTS[:2] if fmt == "TIFF" else scans.TEXTS[:1]
    am.write(tmp_path / name, scans.image_bytes(texts, fmt))
    result = ingest_sync([tmp_path / name], OCR)
    assert result.skipped == []
    doc = result.documents[0]
    assert doc.format == "image" and doc.ocr_pages == tuple(range(1, len(texts) + 1))
    assert [s.address for s in doc.spans] == [f"page {n}" for n in range(1, len(texts) + 1)]
    for number, truth in enumerate(texts, 1):
        start, end = locate(doc, f"page {number}")
        assert scans.accuracy(truth, doc.text[start:end].split("\n", 1)[1]) >= 0.97


def test_with_ocr_off_scans_are_skipped_saying_how_to_read_them(tmp_path):
    am.write(tmp_path / "o" / "scan.pdf", scans.scanned_pdf(scans.TEXTS[:1]))
    am.write(tmp_path / "o" / "photo.png", scans.image_bytes(scans.TEXTS[:1], "PNG"))
    result = ingest_sync([tmp_path / "o"], IngestOptions(workers=1))
    skips = {s.path: (s.reason, s.detail) for s in result.skipped}
    assert skips["scan.pdf"][0] == "no_text" and "turn on OCR (--ocr" in skips["scan.pdf"][1]
    assert skips["photo.png"] == ("unsupported", "PNG image (OCR is off: turn it on with --ocr "
                                                 "or Settings > Documents)")


def test_scans_inside_an_archive_are_read_by_ocr(tmp_path):
    am.write(tmp_path / "scans.zip", am.zip_bytes({
        "2024/invoice.pdf": scans.scanned_pdf(scans.TEXTS[:1]),
        "2024/photo.jpg": scans.image_bytes(scans.TEXTS[2:], "JPEG")}))
    result = ingest_sync([tmp_path / "scans.zip"], OCR)
    docs = {d.path: d for d in result.documents}
    assert set(docs) == {"scans.zip/2024/invoice.pdf", "scans.zip/2024/photo.jpg"}
    assert docs["scans.zip/2024/invoice.pdf"].ocr_pages == (1,)
    assert "Hamburg depot" in docs["scans.zip/2024/photo.jpg"].text


def test_missing_tesseract_is_a_clear_skip(tmp_path, monkeypatch):
    from core.ingest.extract import extract_file
    path = am.write(tmp_path / "scan.png", scans.image_bytes(scans.TEXTS[:1], "PNG"))
    monkeypatch.setenv("RLM_TESSERACT", str(tmp_path / "no-such-tesseract"))
    with pytest.raises(ExtractError) as info:
        extract_file(FileEntry("scan.png", str(path), path.stat().st_size), 1 << 30,
                     Job(IngestOptions(ocr=True)))
    assert info.value.reason == "unsupported"
    assert "tesseract was not found" in info.value.detail and "apt install tesseract-ocr" in info.value.detail


def test_blank_pages_are_not_sent_to_ocr(tmp_path):
    from tests.unit.ingest import makers
    am.write(tmp_path / "blank.pdf", makers.pdf_bytes(["text on page one", ""]))
    steps = []
    result = ingest_sync([tmp_path / "blank.pdf"], OCR,
                         on_progress=lambda p: p.step and steps.append(p.step))
    assert result.documents[0].ocr_pages == () and steps == []


async def test_cancel_during_ocr(tmp_path):
    am.write(tmp_path / "long.pdf", scans.scanned_pdf(scans.TEXTS * 4))
    stepped = asyncio.Event()
    task = asyncio.ensure_future(ingest([tmp_path], OCR, on_progress=lambda p: p.step
                                        and stepped.set()))
    await asyncio.wait_for(stepped.wait(), 60)
    began = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - began < 5
