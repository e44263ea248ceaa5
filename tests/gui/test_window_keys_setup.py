"""Set-up for someone who is not an expert: the keychain message in plain words,
a key for this session only (no keychain needed), Test with the key just pasted."""

from __future__ import annotations

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def test_no_keychain_still_allows_a_key_for_this_session(studio, qloop, server):
    from keyring.backends import fail
    from core.secrets import KeyStore
    window, controller = studio
    controller.settings_glue.use_keys(KeyStore(backend=fail.Keyring()))
    dialog = controller.open_settings("keys")
    page = dialog.keys_page
    text = page.keychain_label.text()
    assert "cannot store keys.</b> No keychain backend" in text          # a sentence, capitalised
    assert "PlaintextKeyring" not in text and "Use for this session" in text
    page.select_provider("openai")
    page.key_edit.setText("sk-session-only-0123456789")
    page.session_button.click()
    assert controller.keys().resolve("openai") == ("sk-session-only-0123456789", "session")
    assert page.key_edit.text() == "" and "written nowhere" in page.result_label.text()
    rows = {page.table.item(r, 0).data(256): page.table.item(r, 2).text() for r in range(page.table.rowCount())}
    assert rows["openai"] == "this session only"
    dialog.reject()


def test_test_uses_the_key_just_pasted(studio, qloop, server, monkeypatch):
    """Test with a pasted key that is not saved: the request carries that key."""
    from core import providers
    window, controller = studio
    server.script("probe", replies=["OK"] * 2)
    known = providers.get("openai")
    dialog = controller.open_settings("keys")
    page = dialog.keys_page
    page.select_provider("openai")
    page.key_edit.setText("sk-pasted-not-saved-987654")
    import dataclasses
    probe = dataclasses.replace(providers.PROVIDERS["openai"], test_model="openai/probe")
    monkeypatch.setitem(providers.PROVIDERS, "openai", probe)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):   # litellm's openai route: the scripted server
        monkeypatch.setenv(name, server.url)
    ok, text = run_async(qloop, controller.settings_glue.test_key("openai"), timeout=60)
    assert ok, text
    assert server.requests_for("probe")[0].headers.get("Authorization") == "Bearer sk-pasted-not-saved-987654"
    assert known is not None
    dialog.reject()


def test_a_rejected_key_is_reported_with_the_transports_llm_error(studio, qloop, server, monkeypatch):
    """Test key goes through the transport contract: a 401 is the LLMError a run would show
    (naming the provider and how to set its key), not a string parsed again."""
    import dataclasses

    from core import providers
    from core.llm.client import transport_for
    from core.llm.errors import LLMError
    from core.llm.transport import Request
    from tests.support.openai_server import Status
    window, controller = studio
    server.script("probe", replies=[Status(401, message="Incorrect API key provided")] * 2)
    monkeypatch.setitem(providers.PROVIDERS, "openai",
                        dataclasses.replace(providers.PROVIDERS["openai"], test_model="openai/probe"))
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.setenv(name, server.url)
    dialog = controller.open_settings("keys")
    page = dialog.keys_page
    page.select_provider("openai")
    page.key_edit.setText("sk-wrong-000000000000")
    ok, text = run_async(qloop, controller.settings_glue.test_key("openai"), timeout=60)
    assert not ok and page.result_label.text().endswith(text)

    async def direct() -> LLMError:          # the same call as a run's attempt makes it
        try:
            await transport_for("openai/probe", None).send(Request(
                "openai/probe", [{"role": "user", "content": "Say OK"}], 1, False, None,
                "sk-wrong-000000000000", 30.0), lambda piece: None)
        except LLMError as exc:
            return exc
        raise AssertionError("the 401 was not an LLMError")
    error = run_async(qloop, direct(), timeout=60)
    assert error.kind == "auth" and text == str(error)
    assert "openai" in text.lower() and "keys set openai" in text
    dialog.reject()
