"""Settings dialog round trip, keys in a (file-backed, test-only) keychain, theme."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from tests.support.gui_app import qloop, run_async, studio, studio_home  # noqa: F401


def test_settings_round_trip(studio, qloop):
    from app.settings import load_settings
    window, controller = studio
    window.settings_action.trigger()                       # Ctrl+,
    dialog = controller.settings_dialog
    assert dialog is not None and dialog.isVisible()

    dialog.models_page.root_edit.setText("openai/gpt-4o")
    dialog.models_page.sub_edit.setText("lab/qwen2.5-coder")
    row = dialog.models_page.add_row("openai/gpt-4o", {})
    dialog.models_page.table.item(row, 1).setText("2.5")
    dialog.models_page.table.item(row, 2).setText("10")
    dialog.models_page.table.cellWidget(row, 4).setValue(16384)
    dialog.models_page.table.cellWidget(row, 5).setCurrentIndex(
        dialog.models_page.table.cellWidget(row, 5).findData("high"))
    dialog.models_page.table.item(row, 6).setText("Write short cells.")
    local = dialog.models_page.add_row("lab/qwen2.5-coder", {})
    dialog.models_page.table.cellWidget(local, 3).setChecked(True)
    ep = dialog.endpoints_page
    ep.add_row({})
    ep.name_edit.setText("lab")
    ep.url_edit.setText("http://127.0.0.1:8080/v1")
    ep.add_models(["qwen2.5-coder", "llama3"])
    dialog.caps_page.depth.setValue(2)
    dialog.caps_page.cost.setValue(3.0)
    dialog.appearance_page.buttons["dark"].setChecked(True)
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert controller.settings_dialog is None

    saved = load_settings()
    assert saved.root_model == "openai/gpt-4o" and saved.sub_model == "lab/qwen2.5-coder"
    gpt = saved.models["openai/gpt-4o"]
    assert (gpt.price.input_per_m, gpt.price.output_per_m) == (2.5, 10.0)
    assert gpt.max_tokens == 16384 and gpt.reasoning_effort == "high"
    assert gpt.prompt_note == "Write short cells."
    assert saved.models["lab/qwen2.5-coder"].free
    assert saved.endpoints[0].name == "lab" and saved.endpoints[0].models == ["qwen2.5-coder", "llama3"]
    assert saved.caps["max_depth"] == 2 and saved.caps["max_cost_usd"] == 3.0
    assert saved.caps["max_iterations"] == 20                      # untouched caps are kept
    assert saved.theme == "dark" and controller.theme.current == "dark"
    assert window.question_panel.caps()["max_depth"] == 2

    # Opened again, the dialog shows what was saved.
    again = controller.open_settings("models")
    assert again.tabs.currentWidget() is again.models_page
    assert again.models_page.models()["openai/gpt-4o"]["price"] == [2.5, 10.0]
    assert again.endpoints_page.endpoints()[0]["base_url"] == "http://127.0.0.1:8080/v1"
    assert again.appearance_page.theme() == "dark"
    again.reject()


def test_bad_price_is_refused_in_the_dialog(studio, qloop):
    window, controller = studio
    dialog = controller.open_settings()
    row = dialog.models_page.add_row("openai/gpt-4o-mini", {})
    dialog.models_page.table.item(row, 1).setText("cheap")
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert dialog.isVisible()
    assert "not a number" in dialog.error_label.text()
    dialog.reject()


def test_keys_set_list_delete(studio, qloop, studio_home):
    window, controller = studio
    dialog = controller.open_settings("keys")
    page = dialog.keys_page
    assert page.set_button.isEnabled(), page.keychain_label.text()
    page.select_provider("openai")
    page.key_edit.setText("sk-test-0123456789abcd")
    page.set_button.click()
    assert page.result_label.text().startswith("✔")
    assert page.key_edit.text() == ""                              # the field is cleared
    rows = {page.table.item(r, 0).data(256): page.table.item(r, 1).text()
            for r in range(page.table.rowCount())}
    assert rows["openai"] == "…abcd"                                # masked, never the key
    assert controller.keys().get("openai") == "sk-test-0123456789abcd"
    controller.save_state()
    assert "sk-test" not in (studio_home / "settings.json").read_text(encoding="utf-8")

    ok, text = run_async(qloop, controller.settings_glue.test_key("anthropic"))
    assert not ok and "No anthropic key" in text

    page.select_provider("openai")
    page.delete_button.click()
    assert controller.keys().get("openai") is None
    rows = {page.table.item(r, 0).data(256): page.table.item(r, 1).text()
            for r in range(page.table.rowCount())}
    assert rows["openai"] == "not set"
    dialog.reject()


def test_unusable_keychain_is_explained(studio, qloop):
    from keyring.backends import fail
    from core.secrets import KeyStore
    window, controller = studio
    controller.settings_glue.use_keys(KeyStore(backend=fail.Keyring()))
    dialog = controller.open_settings("keys")
    page = dialog.keys_page
    assert not page.set_button.isEnabled()
    text = page.keychain_label.text()
    assert "cannot store keys" in text and "gnome-keyring" in text and "OPENAI_API_KEY" in text
    assert controller.settings_glue.set_key("openai", "sk-whatever-123456") is False
    dialog.reject()


def test_banner_action_opens_the_keys_page(studio, qloop):
    from ui.notifier import explain_error
    window, controller = studio
    note = window.notifier.post(explain_error("AuthenticationError: Incorrect API key provided",
                                              model="openai/gpt-4o-mini"))
    assert note.advice == "Set your OpenAI key in Settings > Keys."
    assert window.banner.action_button.isVisibleTo(window)
    window.banner.action_button.click()
    dialog = controller.settings_dialog
    assert dialog is not None and dialog.tabs.currentWidget() is dialog.keys_page
    dialog.reject()


def test_model_pickers_list_the_catalog_with_prices(studio, qloop):
    from app.settings import ModelSettings
    from core.config import Price
    from tests.support.gui_app import wait_until
    window, controller = studio
    controller.settings.models["gpt-4o"] = ModelSettings(price=Price(1.0, 2.0))
    picker = window.question_panel.root_picker
    picker.opening.emit()                      # what opening the popup does: load the catalog lazily
    run_async(qloop, wait_until(lambda: len(picker.choices()) > 50, timeout=60, what="the catalog"),
              timeout=90)
    assert picker.price_of("gpt-4o-mini").startswith("$0.15 in")
    assert picker.price_of("gpt-4o") == "$1 in · $2 out per M"      # the settings' price wins
    picker.set_model_id("gpt-4o-mini")
    assert window.question_panel.root_price.text().startswith("$0.15")
    assert picker.model_id() == "gpt-4o-mini"   # the line edit holds the id, not the price
