"""The window's limit on the largest file: none by default; set in Settings > Documents it
skips a larger file with words that say how to raise it."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from tests.gui.test_window_sources import drop_paths
from tests.support.big_files import write_log
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def _read(controller, pane, qloop, path):
    async def body():
        before = controller.ingest_task
        drop_paths(pane.drop_zone, [path])
        await wait_until(lambda: controller.ingest_task is not before, what="reading to start")
        await wait_until(lambda: controller.ingest_task.done(), timeout=120, what="reading to end")
    run_async(qloop, body(), timeout=180)
    return {r.name: r for r in pane.rows()}


def test_the_largest_file_is_a_setting_and_its_skip_says_how_to_raise_it(studio, qloop, tmp_path):
    from app.settings import load_settings
    window, controller = studio
    pane = window.sources_pane
    big = tmp_path / "server.log"
    write_log(big, 3 << 20)

    dialog = controller.open_settings("documents")
    assert dialog.tabs.currentWidget() is dialog.documents_page
    assert dialog.documents_page.largest.value() == 0
    assert dialog.documents_page.largest.text() == "any size"
    dialog.documents_page.largest.setValue(1)
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert load_settings().extra["ingest"]["max_file_mb"] == 1

    rows = _read(controller, pane, qloop, big)
    assert rows["server.log"].status == "skipped"
    reason = rows["server.log"].reason
    assert "over the 1,048,576 byte limit" in reason and "Settings > Documents > Largest file" in reason

    dialog = controller.open_settings("documents")
    assert dialog.documents_page.largest.value() == 1                  # what was saved
    dialog.documents_page.largest.setValue(0)
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    rows = _read(controller, pane, qloop, big)
    assert rows["server.log"].status == "read"
