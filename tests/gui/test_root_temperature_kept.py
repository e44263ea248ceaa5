"""A model's root temperature set in settings.json (issue 25) survives a Save of the Settings
dialog, which has no column for it."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from tests.support.gui_app import qloop, studio, studio_home  # noqa: F401


def test_a_models_temperature_is_kept_by_a_save_of_the_dialog(studio, qloop):
    from app.settings import ModelSettings, load_settings, save_settings
    window, controller = studio
    settings = controller.settings
    settings.models["openai/qwen2.5-coder-1.5b"] = ModelSettings(free=True, temperature=0.5)
    save_settings(settings)
    dialog = controller.open_settings("models")
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    saved = load_settings().models["openai/qwen2.5-coder-1.5b"]
    assert saved.temperature == 0.5 and saved.free is True
