"""The window reads an unchanged folder once (issue 26, item 3): after a run stored its
sources, the same folder dropped again is taken from what was stored, and Sources says so."""

from __future__ import annotations

from tests.gui.test_window_analyst import run_and_wait
from tests.gui.test_window_run import code, prepare
from tests.gui.test_window_sources import drop_paths
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def test_the_same_folder_dropped_after_a_run_is_not_read_again(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", replies=[code("FINAL('ok')")])
    prepare(window, controller, server, tmp_path, qloop)
    sp = window.sources_pane
    assert "unchanged" not in sp.totals_label.text()
    run_and_wait(window, controller, qloop)
    assert controller.last_outcome.status == "finished"
    controller.clear_sources()

    async def again():
        drop_paths(sp.drop_zone, [tmp_path / "docs"])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(),
                         timeout=60, what="reading")
    run_async(qloop, again(), timeout=90)
    assert sp.totals_label.text().startswith("2 read (2 unchanged since an earlier read)"), sp.totals_label.text()
    assert sp.totals()["unchanged"] == 2
    assert any("2 unchanged since an earlier read" in n.message for n in window.notifier.history)
