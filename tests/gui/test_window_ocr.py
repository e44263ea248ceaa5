"""OCR in the window: Settings > Documents has the checkbox (with its cost in words and the
languages this computer's tesseract has), saving it reaches ingestion (a scanned PNG is
read by the real tesseract), and "OCR scans" beside Sources overrides it for what is
read next, reading a skipped scan again when ticked."""

from __future__ import annotations

import shutil

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.unit.ingest import scans
from ui.documents_page import DocumentsPage, OcrInfo

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None,
                                     reason="tesseract is a system package (scripts/system-packages.sh)")
TEXT = scans.TEXTS[0]


def read(controller, qloop, paths) -> None:
    async def body():
        controller.add_paths([str(p) for p in paths])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(),
                         timeout=120, what="reading")
    run_async(qloop, body(), timeout=150)


def row(window, name):
    return next(r for r in window.sources_pane.rows() if r.name == name)


def skipped_scan(window, controller, qloop, tmp_path):
    """A scanned page as a PNG, read with OCR off: listed as skipped, saying why."""
    scan = tmp_path / "scan.png"
    scan.write_bytes(scans.image_bytes([TEXT], "PNG"))
    read(controller, qloop, [scan])
    assert row(window, "scan.png").status == "skipped" and "OCR is off" in row(window, "scan.png").reason
    return scan


@needs_tesseract
def test_the_settings_checkbox_reaches_ingestion(studio, qloop, tmp_path):
    window, controller = studio
    scan = skipped_scan(window, controller, qloop, tmp_path)
    assert not window.sources_pane.ocr_check.isChecked()

    dialog = controller.open_settings("documents")
    page = dialog.documents_page
    assert dialog.tabs.currentWidget() is page
    assert "seconds per page" in page.cost_label.text()
    assert "eng" in [page.language_combo.itemText(i) for i in range(page.language_combo.count())]
    assert "languages installed: eng" in page.tesseract_label.text()
    page.ocr_check.setChecked(True)
    dialog.button_box.button(dialog.button_box.StandardButton.Save).click()
    assert controller.settings.extra["ingest"]["ocr"] is True
    assert window.sources_pane.ocr_check.isChecked()                 # the default beside Sources

    controller.clear_sources()
    read(controller, qloop, [scan])
    got = row(window, "scan.png")
    assert got.status == "read", got
    doc = next(d for d in controller.documents.values() if d.path.endswith("scan.png"))
    assert doc.ocr_pages == (1,) and scans.accuracy(TEXT, doc.text.split("\n", 1)[-1]) > 0.8, doc.text[:300]


@needs_tesseract
def test_ocr_beside_the_sources_reads_a_skipped_scan_again(studio, qloop, tmp_path):
    window, controller = studio
    skipped_scan(window, controller, qloop, tmp_path)

    async def tick():
        window.sources_pane.ocr_check.setChecked(True)                # reads the skipped scan again
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done()
                         and row(window, "scan.png").status == "read", timeout=120, what="OCR")
    run_async(qloop, tick(), timeout=150)
    assert controller.settings.extra.get("ingest") is None           # the default is unchanged


def test_the_page_says_when_tesseract_is_missing(qapp):
    page = DocumentsPage({}, OcrInfo("", (), "install tesseract (Debian/Ubuntu: apt install tesseract-ocr)"))
    try:
        assert "tesseract was not found" in page.tesseract_label.text()
        assert "apt install tesseract-ocr" in page.tesseract_label.text()
        assert not page.ocr_check.isEnabled()
        assert page.ingest()["ocr"] is False
        page.language_combo.setCurrentText("eng; rm")
        with pytest.raises(ValueError, match="eng or eng\\+deu"):
            page.ingest()
    finally:
        page.deleteLater()
