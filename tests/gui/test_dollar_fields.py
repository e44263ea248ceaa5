"""Every dollar field of the window takes a cap below a cent, and the run gets that cap: a cheap
sub model's few calls cost a fraction of a cent, and a field of two decimals could not say $0.004
(it became "no cap" or $0.00). Real window offscreen, the scripted server on 127.0.0.1."""

from __future__ import annotations

from app.settings import Endpoint, ModelSettings
from core.config import Price
from tests.gui.test_window_analyst import run_and_wait
from tests.gui.test_window_prices_per_endpoint import _documents, _script
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from ui.dollar_spin import DollarSpin


def type_into(qtbot, spin, text: str) -> None:
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), text)
    spin.interpretText()               # what leaving the field does (Return would press a dialog's default)


def test_each_dollar_field_takes_a_fraction_of_a_cent_and_reads_as_money(studio, qtbot):
    window, controller = studio
    qp = window.question_panel
    dialog = controller.open_settings("caps")
    fields = {"the question panel's cap": qp.cost_spin, "the settings' cap": dialog.caps_page.cost,
              "the approval threshold": controller.trust.thresholds.usd_spin,
              "the grid's budget": controller.grids.open_view().cap_box}
    for where, spin in fields.items():
        assert isinstance(spin, DollarSpin), where
        type_into(qtbot, spin, "0.004")
        assert spin.value() == 0.004 and spin.text() == "$0.004", (where, spin.text())
        type_into(qtbot, spin, "0.0125")
        assert spin.text() == "$0.0125", where
        type_into(qtbot, spin, "2")
        assert spin.text() == "$2.00", where
        spin.setValue(0)
        assert spin.amount() is None and spin.text() != "$0.00", where   # "no cap" / "never"
    type_into(qtbot, qp.cost_spin, "0.004")
    assert qp.caps()["max_cost_usd"] == 0.004
    assert "$0.004 cap" in qp.advanced.summary()
    type_into(qtbot, dialog.caps_page.cost, "0.004")
    assert dialog.values()["caps"]["max_cost_usd"] == 0.004
    dialog.reject()
    from ui.guide import guide_text                   # the Guide names the default cap as typed
    assert "$0.004" in guide_text({"max_cost_usd": 0.004}) and "$1.00" in guide_text({"max_cost_usd": 1.0})


def test_a_run_gets_the_typed_cap_below_a_cent_and_stays_within_it(studio, qloop, qtbot, server, tmp_path):
    window, controller = studio
    _script(server)
    server.price("root", 0.1, 0.2)                             # cheap models: a run costs a fraction of a cent
    server.price("sub", 0.05, 0.15)
    s = controller.settings
    s.endpoints = [Endpoint("lab", server.url, ["root", "sub"], runs_here=False)]
    s.models.update({"lab/root": ModelSettings(price=Price(0.1, 0.2)),
                     "lab/sub": ModelSettings(price=Price(0.05, 0.15))})
    s.models["lab/root"].max_tokens, s.models["lab/sub"].max_tokens = 500, 500
    s.caps["cell_timeout_s"] = 30
    controller.settings_glue.save()
    _documents(window, controller, qloop, tmp_path)
    qp = window.question_panel
    qp.set_models("lab/root", "lab/sub")
    qp.set_caps({"max_depth": 1, "max_iterations": 3})
    type_into(qtbot, qp.cost_spin, "0.004")
    qp.set_question("How many apples?")
    run_and_wait(window, controller, qloop)
    outcome = controller.last_outcome
    stored = controller.history.store().get_run(outcome.run_id)
    billed = server.billed_usd()
    print(f"\nunder a $0.004 cap typed in the field: spent ${outcome.totals['cost_usd']:.6f}, "
          f"server billed ${billed:.6f}, {outcome.status}")
    cap = stored["config"]["max_cost_usd"]
    spent = outcome.totals["cost_usd"]
    assert cap == 0.004
    assert outcome.status == "finished"
    assert 0 < spent <= 0.004
    assert abs(spent - billed) < 1e-9
