"""The review grid's presets and its Ray address in the real window against the scripted
server: a questions file's columns saved as a preset and a grid run from the preset alone;
the Ray address set in Settings > Grid, checked and kept, and a cluster that does not
answer (or a model whose key would have to leave this computer) said in the view, nothing run."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from tests.gui.test_window_grid import grid_view_with_columns, root_fn
from tests.gui.test_window_run import prepare
from tests.support.grid_html import GridPage
from tests.support.gui_app import qloop, run_async, studio, studio_home  # noqa: F401


def test_a_preset_is_saved_from_a_questions_file_and_a_grid_runs_from_it(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", fn=root_fn)
    prepare(window, controller, server, tmp_path, qloop)
    glue, view, cols = grid_view_with_columns(controller, tmp_path)
    assert view.preset_box.count() == 1 and view.chosen_preset() == ""
    view.save_preset_button.click()                                     # no name: said, nothing saved
    assert view.status_label.text() == "The preset was not saved: a column preset needs a name"
    view.preset_name_edit.setText("fruit review")
    view.save_preset_button.click()
    assert view.status_label.text().startswith("Saved 2 questions as the preset “fruit review”")
    assert view.chosen_preset() == "fruit review" and not view.columns_edit.isEnabled()

    cols.unlink()                                                       # the preset alone is enough
    glue.refresh_presets("")                                            # read back from the presets file
    assert [view.preset_box.itemText(i) for i in range(view.preset_box.count())][1:] == ["fruit review"]
    view.preset_box.setCurrentIndex(1)

    async def body():
        view.run_button.click()
        return await glue.task
    data = run_async(qloop, body(), timeout=180)
    assert data.counts()["done"] == 4 and [c.name for c in data.columns] == ["count", "fruit"]
    assert view.model.data(view.model.index(1, 1)) == "pears"
    report = GridPage(glue.export(str(tmp_path / "grid.html")).read_text(encoding="utf-8"))   # Export… as HTML
    assert [c.split("done")[0] for c in report.cells] == ["3", "apples", "4", "pears"]
    assert "pears: 4" in report.quotes and view.status_label.text().startswith("Exported to")

    view.preset_box.setCurrentIndex(0)                                  # back to the file: it is gone
    assert view.columns_edit.isEnabled()
    view.run_button.click()
    assert view.status_label.text().startswith("The questions file cannot be read")


def test_the_ray_address_in_settings_is_checked_kept_and_used_by_the_grid(studio, qloop, server, tmp_path):
    from app.settings import load_settings
    window, controller = studio
    server.script("root", fn=root_fn)
    prepare(window, controller, server, tmp_path, qloop)
    dialog = controller.open_settings("grid")
    assert dialog.tabs.currentWidget() is dialog.grid_page
    dialog.grid_page.ray_edit.setText("my cluster")
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert "the Ray cluster address must be HOST:PORT" in dialog.error_label.text()
    dialog.grid_page.ray_edit.setText(" 127.0.0.1:9 ")                  # nothing listens on port 9
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert controller.settings.ray_address == "127.0.0.1:9"
    assert load_settings().ray_address == "127.0.0.1:9"                 # kept in the settings file

    glue, view, _ = grid_view_with_columns(controller, tmp_path)

    async def body():
        view.run_button.click()
        return await glue.task
    assert run_async(qloop, body(), timeout=120) is None
    text = view.status_label.text()
    assert text.startswith("The grid cannot run on the Ray cluster at 127.0.0.1:9: lab/root needs the key of lab, "
                           "which stays on this computer")           # the endpoint needs a key: none is sent
    assert "Nothing ran; clear the address in Settings > Grid" in text and view.run_button.isEnabled()

    controller.settings.endpoints[0].needs_key = False                  # a gateway without a key
    run_async(qloop, body(), timeout=120)
    assert "the Ray cluster at 127.0.0.1:9 does not answer" in view.status_label.text()
    assert server.history == []
    assert view.model.counts().get("queued") == 4                      # the cells wait to run
