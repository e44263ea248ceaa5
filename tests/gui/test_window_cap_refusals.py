"""The limited flag says exactly what happened, in the real window offscreen against the
scripted server on 127.0.0.1: a dollar cap that pays the first root turn but refuses the
second says "The cap refused the 2nd root turn: no answer", its fix sets the cap the refusal
named (rounded up to the cap field's cent), the banner goes away once fixed, and no sentence
ends twice."""

from __future__ import annotations

from app.settings import ModelSettings
from core.config import Price
from tests.gui.test_window_caps import _estimate, _run
from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def test_a_refused_second_root_turn_is_said_and_its_fix_sets_the_named_cap(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", replies=[code("print('x' * 6000)"), code("FINAL('done')")])
    prepare(window, controller, server, tmp_path, qloop)
    controller.settings.models["lab/root"] = ModelSettings(price=Price(1.0, 2.0))
    controller.settings.models["lab/sub"] = ModelSettings(price=Price(0.5, 1.5))
    qp = window.question_panel
    qp.set_caps({"max_cost_usd": 0.01, "max_iterations": 4})
    _estimate(window, controller, qloop)             # before the run: the preview warns, Run stays on
    assert qp.run_button.isEnabled() and qp.caution.startswith(
        "The dollar cap $0.01 pays for the first root turn but not a second")
    [warned] = qp.fix_buttons
    print(f"\npreview: {qp.caution!r} [{warned.text()}]; Run: {qp.run_button.toolTip()!r}")
    assert warned.text().startswith("Set the cap to $0.0") and qp.blocked_box.isVisibleTo(window)
    assert qp.run_button.toolTip().startswith("Run: the cap cannot pay a 2nd root turn")
    outcome = _run(window, controller, qloop)
    assert outcome.status == "capped" and outcome.answer is None, window.notifier.history
    assert len(server.requests_for("root")) == 1                     # the 2nd turn was never sent
    card = window.run_panes.transcript.answer_card
    text = card.limited_text.text()
    print(f"\nflag: {text!r}; button: {card.fix_button.text()!r}; cost ${outcome.totals['cost_usd']:.6f}")
    assert text.startswith("The cap refused the 2nd root turn: no answer.")
    assert "shortened" not in text.split(".")[0]
    needed = outcome.totals["limited"]["cap_needed_usd"]
    assert 0.01 < needed < 0.05 and f"a dollar cap of at least ${needed:.4f}" in outcome.error
    want = -(-round(needed * 100, 6) // 1) / 100
    assert card.fix_button.text() == f"Set the cap to ${want:.2f}"
    banner = window.notifier.last
    assert banner.topic == "cap" and banner.message.startswith("The cap refused the 2nd root turn: no answer.")
    assert ".." not in banner.message and ".." not in banner.advice
    assert banner.action == card._fix_action
    assert window.banner.note is banner and window.banner.isVisibleTo(window)
    card.fix_button.click()
    assert qp.caps()["max_cost_usd"] == want                         # what the message named, in cents
    assert not window.banner.isVisibleTo(window)                      # its cause is fixed: it went away
    server.script("root", replies=[code("print('x' * 6000)"), code("FINAL('done')")])
    again = _run(window, controller, qloop)
    print(f"with the cap the flag named (${want:.2f}): {again.status}, {again.answer!r}, "
          f"${again.totals['cost_usd']:.6f}")
    assert again.status == "finished" and again.answer == "done"
