"""The window says when a large context loads into the REPL beside the first turn (issue 26):
the transcript shows the load starting and its end before the first cell's result (real
window, real engine and worker, the scripted server). The threshold is lowered so two small
files count as large."""

from __future__ import annotations

from core.engine import loading
from tests.gui.test_window_analyst import run_and_wait
from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def test_the_transcript_tells_the_load_into_the_repl(studio, qloop, server, tmp_path, monkeypatch):
    monkeypatch.setattr(loading, "NOTICE_CHARS", 10)
    window, controller = studio
    prepare(window, controller, server, tmp_path, qloop)
    window.question_panel.set_mode("rlm")
    server.script("root", replies=[code("print(len(documents))"), code("FINAL('done')")])
    run_and_wait(window, controller, qloop)
    view = window.run_panes.view
    assert view.answer == "done"
    messages = [n.message for n in view.notices]
    assert any(m.startswith("Loading 2 documents (") and "into the REPL beside the first turn" in m
               for m in messages), messages
    assert any(m.startswith("The documents are loaded in the REPL (") for m in messages), messages
