"""The Settings dialog edits which extra models sub-calls may use, and per-model context
windows (issue 13, item 5): saved to settings.json and shown again."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from tests.support.gui_app import qloop, studio, studio_home  # noqa: F401


def test_sub_call_models_and_context_window_round_trip(studio, qloop):
    from app.settings import build_run_config, load_settings
    window, controller = studio
    dialog = controller.open_settings("models")
    page = dialog.models_page
    page.root_edit.setText("lab/qwen3")
    page.sub_call_edit.setText("groq/llama-3.3-70b-versatile,  lab/phi4 , groq/llama-3.3-70b-versatile")
    row = page.add_row("lab/qwen3", {})
    page.table.cellWidget(row, 3).setChecked(True)
    page.table.cellWidget(row, 7).setValue(32_768)
    ep = dialog.endpoints_page
    ep.add_row({})
    ep.name_edit.setText("lab")
    ep.url_edit.setText("http://127.0.0.1:8080/v1")
    ep.add_models(["qwen3", "phi4"])
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert controller.settings_dialog is None

    saved = load_settings()
    assert saved.sub_call_models == ["groq/llama-3.3-70b-versatile", "lab/phi4"]
    assert saved.models["lab/qwen3"].context_window == 32_768
    cfg = build_run_config(saved)
    assert cfg.sub_call_models["lab/phi4"] == ("openai/phi4", "http://127.0.0.1:8080/v1")
    assert cfg.sub_call_models["groq/llama-3.3-70b-versatile"] == ("groq/llama-3.3-70b-versatile", None)
    assert cfg.context_windows == {"openai/qwen3": 32_768}

    again = controller.open_settings("models")
    assert again.models_page.sub_call_models() == ["groq/llama-3.3-70b-versatile", "lab/phi4"]
    assert again.models_page.models()["lab/qwen3"]["context_window"] == 32_768
    again.reject()


def test_one_block_per_turn_is_set_per_model_in_the_dialog_and_kept(studio, qloop):
    from app.settings import build_run_config, load_settings
    window, controller = studio
    dialog = controller.open_settings("models")
    page = dialog.models_page
    row = page.add_row("lab/qwen2.5-coder:1.5b", {})
    big = page.add_row("openai/gpt-4o", {})
    # Not set: shown as the default for the model's size (on up to 4B, core/local_defaults.py)
    assert page.table.cellWidget(row, 8).isChecked() and not page.table.cellWidget(big, 8).isChecked()
    page.table.cellWidget(row, 8).setChecked(True)
    ep = dialog.endpoints_page
    ep.add_row({})
    ep.name_edit.setText("lab")
    ep.url_edit.setText("http://127.0.0.1:8080/v1")
    ep.add_models(["qwen2.5-coder:1.5b"])
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    saved = load_settings()
    assert saved.models["lab/qwen2.5-coder:1.5b"].one_block_per_turn is True
    assert saved.models["openai/gpt-4o"].one_block_per_turn is False
    assert build_run_config(saved, root="lab/qwen2.5-coder:1.5b").one_block_per_turn == \
        {"openai/qwen2.5-coder:1.5b": True}                  # the run's own models' rules
    assert build_run_config(saved, root="openai/gpt-4o").one_block_per_turn == {"openai/gpt-4o": False}
    again = controller.open_settings("models")               # shown again, and kept by a second Save
    again.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert load_settings().models["lab/qwen2.5-coder:1.5b"].one_block_per_turn is True
