"""The mode choice beside Run: the window runs a plain call or the RLM as chosen, and the
transcript says which and why (real window, real engine, the scripted server)."""

from __future__ import annotations

from tests.gui.test_window_analyst import run_and_wait
from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def test_the_mode_beside_run_sends_a_plain_call_or_the_rlm(studio, qloop, server, tmp_path):
    window, controller = studio
    prepare(window, controller, server, tmp_path, qloop)
    qp = window.question_panel
    assert qp.mode() == "auto" and qp.mode_button.text() == "Auto"      # the default
    server.script("root", replies=["one.txt and sub/two.md."])
    next(a for a in qp.mode_button.menu().actions() if a.text() == "Plain").trigger()
    assert qp.mode() == "direct" and qp.mode_button.text() == "Plain"
    run_and_wait(window, controller, qloop)
    view = window.run_panes.view
    assert view.answer == "one.txt and sub/two.md." and view.totals["mode"] == "direct"
    assert "pears: 4" in server.requests_for("root")[0].messages[-1]["content"]
    assert any(m.startswith("One plain call (mode direct): the documents are ") for m in (n.message for n in view.notices))
    server.script("root", replies=[code("FINAL(str(len(documents)))")])
    qp.set_mode("rlm")
    run_and_wait(window, controller, qloop)
    assert window.run_panes.view.answer == "2" and window.run_panes.view.totals["mode"] == "rlm"
