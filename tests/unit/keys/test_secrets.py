"""KeyStore over real keyring backends: a file-backed one in a temp directory,
keyring's own fail backend, and the auto-detection of plain-text backends."""

from __future__ import annotations

import subprocess
import sys

import pytest
from keyring.backends import fail, null

from app.settings import Endpoint, Settings
from core.secrets import INDEX_ENTRY, SERVICE, KeychainUnavailable, KeyStore, mask

KEY = "sk-test-0123456789abcdWXYZ"


def test_set_get_delete_round_trip(store, keyring_file):
    assert store.usable and "FileKeyring" in store.backend_name
    assert store.get("openai") is None
    store.set("openai", KEY)
    assert store.get("openai") == KEY
    assert store.backend.get_password(SERVICE, "openai") == KEY      # one entry per provider
    assert store.resolve("openai") == (KEY, "keychain")
    assert store.delete("openai") is True
    assert store.get("openai") is None
    assert store.delete("openai") is False
    assert store.resolve("openai") == (None, "none")


def test_set_strips_and_refuses_bad_input(store):
    store.set("Anthropic", f"  {KEY}\n")
    assert store.get("anthropic") == KEY                            # names are lower case
    with pytest.raises(ValueError, match="empty"):
        store.set("openai", "   ")
    with pytest.raises(ValueError, match="line break"):
        store.set("openai", "abc\ndef")
    with pytest.raises(ValueError, match="not a provider name"):
        store.set("open ai", KEY)
    with pytest.raises(ValueError, match="not a provider name"):
        store.set(INDEX_ENTRY, KEY)


def test_list_shows_masked_tail_and_source_never_the_key(store, monkeypatch):
    store.set("openai", KEY)
    store.set("lab", "local-key-0000abcd")
    monkeypatch.setenv("GROQ_API_KEY", "gsk_environment_key_9999")
    infos = {k.provider: k for k in store.list(extra=["lab"])}
    assert set(infos) == {"openai", "lab", "groq"}
    assert infos["openai"].source == "keychain" and infos["openai"].masked == "…WXYZ"
    assert infos["lab"].masked == "…abcd"
    assert infos["groq"].source == "env:GROQ_API_KEY" and infos["groq"].masked == "…9999"
    assert all(KEY not in repr(k) for k in infos.values())
    # the index entry remembers custom names even when not passed as extra
    assert "lab" in {k.provider for k in store.list()}
    store.delete("lab")
    assert "lab" not in {k.provider for k in store.list()}


def test_reads_are_cached_for_a_while_and_writes_refresh_them(file_keyring, no_provider_env):
    store = KeyStore(file_keyring)
    store.set("openai", KEY)
    assert store.get("openai") == KEY
    file_keyring.set_password(SERVICE, "openai", "sk-changed-elsewhere-0000")
    assert store.get("openai") == KEY                               # within cache_s
    assert KeyStore(file_keyring).get("openai") == "sk-changed-elsewhere-0000"
    assert KeyStore(file_keyring, cache_s=0).get("openai") == "sk-changed-elsewhere-0000"
    store.set("openai", "sk-set-through-the-store-1111")
    assert store.get("openai") == "sk-set-through-the-store-1111"
    store.delete("openai")
    assert store.get("openai") is None


def test_mask_hides_short_keys_entirely():
    assert mask("abc") == "…"
    assert mask("12345678901") == "…"
    assert mask("123456789012") == "…9012"


def test_resolve_prefers_keychain_then_env_vars_in_order(store, monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "google-env-key-1111")
    assert store.resolve("gemini") == ("google-env-key-1111", "env:GOOGLE_API_KEY")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-env-key-2222")
    assert store.resolve("gemini") == ("gemini-env-key-2222", "env:GEMINI_API_KEY")
    store.set("gemini", KEY)
    assert store.resolve("gemini") == (KEY, "keychain")
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_LAB_API_KEY", "lab-env-key-3333")
    assert store.resolve("lab") == ("lab-env-key-3333", "env:RLMSTUDIO_DESKTOP_LAB_API_KEY")


@pytest.mark.parametrize("backend", [fail.Keyring(), null.Keyring()], ids=["fail", "null"])
def test_unusable_backend_refuses_to_store_and_falls_back_to_env(backend, no_provider_env, monkeypatch):
    store = KeyStore(backend)
    assert not store.usable
    with pytest.raises(KeychainUnavailable) as caught:
        store.set("openai", KEY)
    message = str(caught.value)
    assert "Secret Service" in message and "OPENAI_API_KEY" in message and "plain text" in message
    assert store.get("openai") is None
    assert store.delete("openai") is False
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment-42")
    assert store.resolve("openai") == ("sk-from-the-environment-42", "env:OPENAI_API_KEY")
    assert [(k.provider, k.source) for k in store.list()] == [("openai", "env:OPENAI_API_KEY")]


def test_auto_detected_plaintext_backend_is_not_used(tmp_path):
    """Headless Linux with keyrings.alt installed: keyring would pick a plain
    file. KeyStore refuses it, and nothing is written anywhere."""
    code = (
        "from core.secrets import KeyStore, KeychainUnavailable\n"
        "s = KeyStore()\n"
        "print(s.usable, s.backend_name)\n"
        "try:\n"
        "    s.set('openai', 'sk-should-never-be-written-0000')\n"
        "except KeychainUnavailable as e:\n"
        "    print('refused:', e)\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "DBUS_SESSION_BUS_ADDRESS": "disabled:"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=str(__import__("tests.unit.keys.conftest", fromlist=["REPO"]).REPO),
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("False ")
    assert "refused:" in out.stdout and "plain" in out.stdout
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all("sk-should-never" not in p.read_text(errors="replace") for p in written)


def test_misnamed_backend_is_reported_not_raised(monkeypatch, no_provider_env):
    import keyring.core
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)    # force detection again
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "no.such.module.Keyring")
    try:
        store = KeyStore()
        assert not store.usable and "failed to load" in store.problem
        with pytest.raises(KeychainUnavailable, match="failed to load"):
            store.set("openai", KEY)
    finally:
        monkeypatch.undo()
        keyring.core._keyring_backend = None


def test_backend_named_explicitly_is_honoured(run_cli, keyring_file):
    done = run_cli("keys", "set", "openai", stdin=KEY + "\n")
    assert done.returncode == 0, done.stderr
    assert "FileKeyring" in done.stdout and keyring_file.exists()


def test_key_for_model_maps_models_to_providers(store, monkeypatch):
    store.set("openai", "sk-openai-key-000000")
    store.set("anthropic", "sk-ant-key-0000000000")
    store.set("lab", "lab-key-00000000")
    settings = Settings(endpoints=[
        Endpoint("lab", "http://127.0.0.1:9000/v1", ["qwen3"], needs_key=True),
        Endpoint("ollama-local", "http://127.0.0.1:11434/v1", ["llama3.1:8b"])])
    assert store.key_for_model("gpt-4o-mini", settings) == "sk-openai-key-000000"
    assert store.key_for_model("openai/gpt-4o", settings) == "sk-openai-key-000000"
    assert store.key_for_model("anthropic/claude-haiku-4-5", settings) == "sk-ant-key-0000000000"
    assert store.key_for_model("claude-haiku-4-5") == "sk-ant-key-0000000000"
    assert store.key_for_model("lab/qwen3", settings) == "lab-key-00000000"
    # after build_run_config routed them to "openai/<model>" at the endpoint's URL: the URL decides
    assert store.key_for_model("openai/qwen3", settings, api_base="http://127.0.0.1:9000/v1") == \
        "lab-key-00000000"
    assert store.key_for_model("openai/qwen3", settings) == "sk-openai-key-000000"   # to OpenAI itself
    assert store.key_for_model("openai/llama3.1:8b", settings,
                               api_base="http://127.0.0.1:11434/v1") is None      # local: no key at all
    assert store.key_for_model("ollama-local/llama3.1:8b", settings) is None
    assert store.key_for_model("ollama/llama3", settings) is None           # litellm's Ollama
    # a model the endpoint does not list, sent to its URL: still the endpoint's policy
    assert store.key_for_model("openai/unlisted", settings,
                               api_base="http://127.0.0.1:11434/v1") is None
    assert store.key_for_model("openai/unlisted", settings,
                               api_base="http://127.0.0.1:9000/v1/") == "lab-key-00000000"
    # an ad-hoc --api-base that nobody owns: no key, unless the user names whose (--api-key-from)
    assert store.key_for_model("openai/whatever", settings, api_base="http://127.0.0.1:1/v1") is None
    assert store.key_for_model("openai/whatever", settings, api_base="http://127.0.0.1:1/v1",
                               key_from="openai") == "sk-openai-key-000000"
    assert store.key_for_model("mistral/mistral-small-latest", settings) is None  # no key stored
    monkeypatch.setenv("MISTRAL_API_KEY", "mistral-env-key-1234")
    assert store.key_for_model("mistral/mistral-small-latest", settings) == "mistral-env-key-1234"


def test_the_first_use_hook_runs_once_before_the_first_keychain_access(file_keyring, keyring_file, monkeypatch):
    # The CLI moves the old service's keys here (app/cli.py): before any read, once per process.
    import core.secrets as secrets
    from tests.support.test_keyring import FileKeyring
    monkeypatch.setattr(secrets, "_first_use", [])
    seen = []

    def hook(store):
        seen.append(store.backend.get_password(SERVICE, "openai"))   # its own access: no wait
        store.backend.set_password(SERVICE, "openai", KEY)           # e.g. a key moved in
    secrets.before_first_use(hook)
    first = KeyStore(file_keyring)
    assert seen == []                                 # constructing it touches nothing
    assert first.get("openai") == KEY                 # the hook ran first: the read sees its key
    second = KeyStore(FileKeyring(keyring_file))
    assert second.get("openai") == KEY and seen == [None]             # once, not per store
