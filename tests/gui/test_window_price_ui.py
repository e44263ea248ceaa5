"""The price UI in the real window offscreen: "Set a price…" opens Settings > Models at a row
for that model, its input price open for typing, with readable columns at 1024x700; a price
typed and saved with its cell still open is kept; the pickers say "free" for a Free
endpoint's models and keep priced models' hints after a restart."""

from __future__ import annotations

from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialogButtonBox

from app.settings import Endpoint
from core.config import Price
from tests.gui.test_window_caps import _estimate
from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def test_set_a_price_opens_a_row_for_the_model_and_a_typed_price_survives_save(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", replies=[code("FINAL('ran')")])
    prepare(window, controller, server, tmp_path, qloop)
    s = controller.settings
    s.endpoints = [Endpoint("lab", server.url, ["root", "sub"], runs_here=False),
                   Endpoint("here", server.url, ["root", "sub"])]
    controller.choices.models_changed()
    qp = window.question_panel
    qp.set_caps({"max_cost_usd": 0.5})
    _estimate(window, controller, qloop)
    assert qp.blocked().startswith("No price is known for lab/root and lab/sub")
    window.resize(1024, 700)
    [price_button] = [b for b in qp.fix_buttons if b.text() == "Set a price…"]
    price_button.click()
    dialog = controller.settings_dialog
    page = dialog.models_page
    assert dialog.tabs.currentWidget() is page
    dialog.resize(min(dialog.width(), 1000), min(dialog.height(), 680))
    rows = {page.table.item(r, 0).text(): r for r in range(page.table.rowCount())}
    assert "lab/root" in rows and page.table.currentRow() == rows["lab/root"] and page.table.currentColumn() == 1
    metrics = page.table.horizontalHeader().fontMetrics()
    for col in range(page.table.columnCount()):
        label = page.table.horizontalHeaderItem(col).text()
        assert page.table.columnWidth(col) > metrics.horizontalAdvance(label), label     # headers not cut
    assert page.table.columnWidth(0) > metrics.horizontalAdvance("lab/coder-7b-instruct")
    row = rows["lab/root"]
    page.table.item(row, 2).setText("2")
    editor = page.table.focusWidget()
    assert editor is not page.table, "the input price cell is open for typing"
    QTest.keyClicks(editor, "1.5")
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()   # with the cell still open
    assert controller.settings.models["lab/root"].price == Price(1.5, 2.0)

    # the pickers: a Free endpoint's models say free, a priced model its price, after a restart too
    controller.restore_window()
    picker = qp.root_picker
    print(f"\nhints after a restart: lab/root {picker.price_of('lab/root')!r}, here/root {picker.price_of('here/root')!r}, "
          f"lab/sub {picker.price_of('lab/sub')!r}")
    assert picker.price_of("lab/root") == "$1.5 in · $2 out per M"
    assert picker.price_of("here/root") == "free" and picker.price_of("lab/sub") == "price unknown"
