"""The Sources list says which pages were read by OCR and which files were read
once as a duplicate of another (a real drop, real ingestion, real window)."""

from __future__ import annotations

from tests.gui.test_window_sources import drop_paths
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.unit.ingest import archive_makers as am
from tests.unit.ingest import scans


def test_ocr_pages_and_duplicates_are_shown(studio, qloop, tmp_path):
    window, controller = studio
    controller.settings.extra["ingest"] = {"ocr": True}
    pane = window.sources_pane
    pane.set_ocr(True)          # the settings' OCR reaches the pane's "OCR scans" when they are saved
    folder = tmp_path / "inbox"
    scan = scans.mixed_pdf([(scans.TEXTS[0], False), (scans.TEXTS[1], True)])
    am.write(folder / "scan.pdf", scan)
    am.write(folder / "mail.zip", am.zip_bytes({"attachments/scan.pdf": scan}))

    async def body():
        drop_paths(pane.drop_zone, [folder])
        await wait_until(lambda: controller.ingest_task is not None, what="reading to start")
        await wait_until(lambda: controller.ingest_task.done(), timeout=90, what="reading to end")

    run_async(qloop, body(), timeout=120)
    m = pane.model
    status = {r.path: (m.index(i, m.COL_STATUS).data(), m.index(i, m.COL_REASON).data())
              for i, r in enumerate(pane.rows())}
    # The file at the top is read, its copy inside the archive is the duplicate (nearest the top first).
    assert status == {"scan.pdf": ("read (OCR: page 2)", ""),
                      "mail.zip/attachments/scan.pdf": ("duplicate", "duplicate of scan.pdf")}
    assert list(controller.documents) == ["scan.pdf"]
    assert "skipped" not in window.banner.text.text()      # a duplicate is no problem to warn of


def test_a_copy_dropped_later_is_a_duplicate_of_what_is_already_there(studio, qloop, tmp_path):
    window, controller = studio
    pane = window.sources_pane
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "report.txt").write_text("Revenue rose 12%.\n")
    (tmp_path / "b" / "report-copy.txt").write_text("Revenue rose 12%.\n")
    (tmp_path / "b" / "new.txt").write_text("something new\n")

    async def drop(folder, expect):
        drop_paths(pane.drop_zone, [folder])
        await wait_until(lambda: expect in {r.path for r in pane.rows()}
                         and controller.ingest_task.done(), timeout=60, what="reading to end")

    async def body():
        await drop(tmp_path / "a", "report.txt")
        await drop(tmp_path / "b", "new.txt")

    run_async(qloop, body(), timeout=120)
    assert list(controller.documents) == ["report.txt", "new.txt"]
    assert controller.documents["report.txt"].duplicates == ("report-copy.txt",)
    m = pane.model
    status = {r.path: (m.index(i, m.COL_STATUS).data(), m.index(i, m.COL_REASON).data())
              for i, r in enumerate(pane.rows())}
    assert status["report-copy.txt"] == ("duplicate", "duplicate of report.txt")
