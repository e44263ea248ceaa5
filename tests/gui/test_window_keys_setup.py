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
