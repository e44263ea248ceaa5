"""The window and one big file: no limit on its size by default; set in Settings > Documents
the limit skips a larger file with words that say how to raise it; Stop while a big file is
read leaves no reading worker and no half-written text."""

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


def test_a_stop_while_a_big_file_is_read_leaves_no_worker_and_no_half_text(studio, qloop, tmp_path):
    import os
    import time

    from tests.support.big_files import write_mbox
    window, controller = studio
    pane = window.sources_pane
    path = tmp_path / "export.mbox"
    write_mbox(path, 48 << 20)
    size = path.stat().st_size
    from core.ingest.bigfile import spool_dir
    spool = spool_dir()                            # texts/ in the test's data folder

    def partial_size() -> int:
        names = os.listdir(spool) if os.path.isdir(spool) else []
        return max((os.path.getsize(os.path.join(spool, n)) for n in names if n.startswith(".partial-")),
                   default=0)

    async def body():
        drop_paths(pane.drop_zone, [path])
        await wait_until(lambda: partial_size() > size // 4, timeout=120, what="the read to get going")
        pane.cancel_button.click()
        await wait_until(lambda: controller.ingest_task.done(), timeout=10, what="reading to stop")

    run_async(qloop, body(), timeout=180)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (partial_size() or _readers()):
        time.sleep(0.1)
    assert partial_size() == 0 and not [n for n in os.listdir(spool) if n.startswith(".partial-")]
    assert _readers() == [], "a reading worker is still running"
    assert "export.mbox" not in {r.name for r in pane.rows()}


def _readers() -> list[int]:
    """Reading workers of this process: the fork server's children."""
    import os

    from tests.support.proc_tree import tree_pids
    found = []
    for pid in tree_pids(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"multiprocessing.forkserver" in f.read():
                    found.extend(p for p in tree_pids(pid) if p != pid)
        except OSError:
            pass
    return found
