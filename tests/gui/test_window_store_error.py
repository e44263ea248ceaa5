"""A run whose record could not be saved is said so in the window: the store refuses the
events (a trigger raising, as a full disk does) and the notifier shows a warning."""

from __future__ import annotations

import sqlite3

from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def test_a_store_error_is_a_warning_in_the_window(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", replies=[code("print('hi')\nFINAL('done')")])
    prepare(window, controller, server, tmp_path, qloop)
    from core import paths
    from core.store import RunStore
    RunStore.open().close()                              # the app's database, migrated
    db = sqlite3.connect(paths.database_path())
    db.execute("CREATE TRIGGER refuse_cells BEFORE INSERT ON events WHEN NEW.type = 'CellExecuted' "
               "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    db.commit()
    db.close()

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=90, what="the run to end")

    run_async(qloop, body(), timeout=120)
    outcome = controller.last_outcome
    assert outcome.status == "finished" and "database or disk is full" in (outcome.store_error or "")
    warnings = [n for n in window.notifier.history if n.level == "warning" and "record is incomplete" in n.message]
    assert len(warnings) == 1 and "database or disk is full" in warnings[0].detail
    assert window.banner.note is not None and "record is incomplete" in window.banner.note.message
