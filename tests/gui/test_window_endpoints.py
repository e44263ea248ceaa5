"""Settings > Endpoints in the real dialog: a form per endpoint, Test connection and Fetch
models against the scripted server and a closed port, a key saved to the (file) keychain."""

from __future__ import annotations

import socket

from PySide6.QtWidgets import QDialogButtonBox

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.openai_server import ScriptedOpenAI


def _result(page) -> str:
    return page.result_label.text()


def test_a_new_endpoint_has_placeholders_and_a_list_of_models(studio, qloop):
    window, controller = studio
    page = controller.open_settings("endpoints").endpoints_page
    assert page.list.count() == 0 and not page.form_box.isEnabled()
    page.add_button.click()
    assert page.list.count() == 1 and page.list.currentItem().text() == "new endpoint"
    assert page.form_box.isEnabled()
    assert page.url_edit.placeholderText() == "http://127.0.0.1:1234/v1"
    assert page.name_edit.placeholderText() and page.model_edit.placeholderText()
    page.name_edit.setText("lab")
    page.url_edit.setText("http://127.0.0.1:1234/v1")
    page.model_edit.setText("coder-7b")
    page.add_model_button.click()
    page.model_edit.setText("qwen3-14b")
    page.model_edit.returnPressed.emit()
    assert page.models() == ["coder-7b", "qwen3-14b"] and page.model_edit.text() == ""
    page.models_list.item(0).setSelected(True)
    page.remove_model_button.click()
    assert page.models() == ["qwen3-14b"]
    assert page.list.currentItem().text() == "lab · http://127.0.0.1:1234/v1"
    page.add_button.click()                       # a second endpoint; the first keeps its values
    page.select(0)
    assert page.name_edit.text() == "lab" and page.models() == ["qwen3-14b"]
    assert page.endpoints() == [{"name": "lab", "base_url": "http://127.0.0.1:1234/v1", "needs_key": False,
                                 "models": ["qwen3-14b"], "runs_here": True}]   # the empty one is left out
    page.select(1)
    page.url_edit.setText("http://10.0.0.5:8000/v1")          # a URL without a name
    controller.settings_dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert "needs a name" in controller.settings_dialog.error_label.text()
    controller.settings_dialog.reject()


def test_test_connection_and_fetch_models_against_the_scripted_server(studio, qloop, server):
    window, controller = studio
    for name in ("root", "sub", "coder-7b"):
        server.script(name, replies=["x"])
    dialog = controller.open_settings("endpoints")
    page = dialog.endpoints_page
    page.add_row({})
    page.name_edit.setText("lab")
    page.url_edit.setText(server.url)

    async def body() -> None:
        page.test_button.click()
        assert not page.test_button.isEnabled()               # asking: the buttons wait
        await wait_until(lambda: page.test_button.isEnabled(), what="test connection")
        assert _result(page).startswith("✔ Reached: 3 models")
        assert page.models() == []                             # Test does not change the list
        page.add_models(["coder-7b"])
        page.fetch_button.click()
        await wait_until(lambda: page.fetch_button.isEnabled(), what="fetch models")
        assert _result(page) == "✔ Reached: 3 models; 2 added to the list"
        assert sorted(page.models()) == ["coder-7b", "root", "sub"]
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            closed = sock.getsockname()[1]
        page.url_edit.setText(f"http://127.0.0.1:{closed}/v1")
        page.test_button.click()
        await wait_until(lambda: page.test_button.isEnabled(), what="closed port")
        assert _result(page).startswith("✖ Not reached: the connection was refused")
    run_async(qloop, body(), timeout=30)
    requests = [r for r in server.history]
    assert requests == []                                      # only GET /models: no chat request
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    saved = controller.settings.endpoint("lab")
    assert sorted(saved.models) == ["coder-7b", "root", "sub"]


def test_a_key_typed_in_the_form_is_tested_and_saved_in_the_keychain(studio, qloop):
    window, controller = studio
    with ScriptedOpenAI(require_key="sk-lab-0123456789") as locked:
        locked.script("coder-7b", replies=["x"])
        dialog = controller.open_settings("endpoints")
        page = dialog.endpoints_page
        page.add_row({})
        page.name_edit.setText("lab")
        page.url_edit.setText(locked.url)

        async def body() -> None:
            page.test_button.click()
            await wait_until(lambda: page.test_button.isEnabled(), what="no key")
            assert "refused a key (HTTP 401)" in _result(page)
            page.key_edit.setText("sk-lab-0123456789")
            page.fetch_button.click()
            await wait_until(lambda: page.fetch_button.isEnabled(), what="with key")
            assert _result(page).startswith("✔ Reached: 1 model;")
        run_async(qloop, body(), timeout=30)
        dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert controller.settings.endpoint("lab").needs_key is True
    assert controller.keys().resolve("lab") == ("sk-lab-0123456789", "keychain")
    import json
    from core.paths import settings_path
    assert "sk-lab" not in settings_path().read_text() and json.loads(settings_path().read_text())


def test_closing_the_dialog_cancels_a_pending_check(studio, qloop):
    window, controller = studio
    with socket.socket() as sock:                  # never answers: the check would wait 5 s
        sock.bind(("127.0.0.1", 0))
        sock.listen(4)
        dialog = controller.open_settings("endpoints")
        page = dialog.endpoints_page
        page.add_row({})
        page.url_edit.setText(f"http://127.0.0.1:{sock.getsockname()[1]}/v1")
        page.test_button.click()
        task = controller.settings_glue._check_task

        async def body() -> None:
            await wait_until(lambda: not task.done() and task._fut_waiter is not None, what="asking")
            dialog.reject()
            await wait_until(lambda: task.done(), timeout=2, what="cancelled")
        run_async(qloop, body(), timeout=10)
    assert task.cancelled()


def test_the_welcome_page_says_how_to_use_a_server_on_another_port(studio, qloop):
    window, controller = studio
    view = controller.first_run.view
    run_async(qloop, wait_until(lambda: controller.first_run.discovery_task is None
                                or controller.first_run.discovery_task.done(), what="discovery"))
    assert "another port" in view.other_server_label.text()
    assert "Settings > Endpoints" in view.other_server_label.text()
    view.endpoints_button.click()
    dialog = controller.settings_dialog
    assert dialog is not None and dialog.tabs.currentWidget() is dialog.endpoints_page
    dialog.reject()


def test_a_key_the_keychain_cannot_store_is_said_not_lost_silently(studio, qloop):
    from keyring.backends import null
    from core.secrets import KeyStore
    window, controller = studio
    controller.settings_glue.use_keys(KeyStore(null.Keyring()))
    dialog = controller.open_settings("endpoints")
    page = dialog.endpoints_page
    page.add_row({})
    page.name_edit.setText("gateway")
    page.url_edit.setText("https://gateway.example.com/v1")
    page.key_edit.setText("sk-gateway-0123456789")
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert controller.settings.endpoint("gateway").needs_key is True           # the endpoint is kept
    note = window.notifier.last
    assert note.message.startswith("The key of the endpoint gateway was not saved: No usable keychain")
    assert note.action == "keys"
