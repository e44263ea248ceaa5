"""Our own identifiers (issue 27): the variables, the data directory and the keychain service,
and the one-time move from the old shared names, with a real data directory, a real SQLite
file and a real file-backed keyring (tests/support/test_keyring.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core import identity, identity_migration as moving
from core.identity import APP_ID, OLD_APP_NAME
from core.secrets import INDEX_ENTRY, OLD_SERVICE, SERVICE, KeyStore
from tests.support.test_keyring import ENV_VAR, FileKeyring

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def platform_dirs(tmp_path, monkeypatch):
    """No variable names a data directory: the platform's own (XDG_DATA_HOME here)."""
    for name in ("RLMSTUDIO_DESKTOP_HOME", "RLM_STUDIO_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(moving, "_TRIED", False)
    moving.take_notes()
    return tmp_path / "xdg" / OLD_APP_NAME, tmp_path / "xdg" / APP_ID


def _old_data(old: Path) -> sqlite3.Connection:
    """An old data directory: settings, a blob, and a runs.db whose last rows are still in
    its WAL (the connection stays open, nothing checkpointed)."""
    (old / "blobs" / "ab").mkdir(parents=True)
    (old / "blobs" / "ab" / "abcdef").write_bytes(b"blob bytes")
    (old / "settings.json").write_text(json.dumps({"version": 1, "root_model": "lab/coder-7b"}))
    db = sqlite3.connect(old / "runs.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE runs (run_id TEXT, question TEXT)")
    db.executemany("INSERT INTO runs VALUES (?, ?)", [(f"r{i}", f"question {i}") for i in range(50)])
    db.commit()
    return db


def test_the_new_names_are_our_own():
    assert SERVICE == APP_ID == "io.github.rlm-studio-desktop" and OLD_SERVICE == "rlm-studio"
    assert identity.env_name("HOME") == "RLMSTUDIO_DESKTOP_HOME"
    from core.providers import env_vars
    assert env_vars("lab") == ("RLMSTUDIO_DESKTOP_LAB_API_KEY", "RLM_STUDIO_LAB_API_KEY")


def test_old_variable_names_still_work_with_one_deprecation_line(monkeypatch, capsys, tmp_path):
    identity._WARNED.discard("RLM_STUDIO_HOME")
    monkeypatch.delenv("RLMSTUDIO_DESKTOP_HOME", raising=False)
    monkeypatch.setenv("RLM_STUDIO_HOME", str(tmp_path / "old-var"))
    from core.paths import data_dir
    assert data_dir() == tmp_path / "old-var"
    assert data_dir() == tmp_path / "old-var"
    err = capsys.readouterr().err
    assert err.count("RLM_STUDIO_HOME is deprecated, use RLMSTUDIO_DESKTOP_HOME") == 1
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(tmp_path / "new-var"))
    assert data_dir() == tmp_path / "new-var"                      # the new name wins


def test_an_old_endpoint_key_variable_is_still_read(monkeypatch, capsys):
    from core import key_env
    identity._WARNED.discard("RLM_STUDIO_LAB_API_KEY")
    monkeypatch.setenv("RLM_STUDIO_LAB_API_KEY", "sk-old-name-0123456789")
    assert "RLM_STUDIO_LAB_API_KEY" in key_env.key_env_names()     # moved out of the environment too
    store = KeyStore(FileKeyring(Path(os.environ.get("TMPDIR", "/tmp")) / "unused-keys.cfg"))
    assert store.resolve("lab") == ("sk-old-name-0123456789", "env:RLM_STUDIO_LAB_API_KEY")
    assert "RLM_STUDIO_LAB_API_KEY is deprecated, use RLMSTUDIO_DESKTOP_LAB_API_KEY" in capsys.readouterr().err
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_LAB_API_KEY", "sk-new-name-0123456789")
    assert store.resolve("lab") == ("sk-new-name-0123456789", "env:RLMSTUDIO_DESKTOP_LAB_API_KEY")


def test_the_data_directory_is_copied_once_and_the_old_one_left(platform_dirs):
    old, new = platform_dirs
    db = _old_data(old)
    try:
        note = moving.migrate_data()
    finally:
        db.close()
    assert note.startswith(f"RLM Studio now keeps its data in {new}") and str(old) in note
    copied = sqlite3.connect(new / "runs.db")
    assert copied.execute("SELECT count(*) FROM runs").fetchone()[0] == 50      # the WAL's rows too
    copied.close()
    assert json.loads((new / "settings.json").read_text())["root_model"] == "lab/coder-7b"
    assert (new / "blobs" / "ab" / "abcdef").read_bytes() == b"blob bytes"
    assert json.loads((new / moving.MARKER).read_text())["data"]["from"] == str(old)
    assert str(new) in (old / "MOVED-TO.txt").read_text()
    assert (old / "runs.db").exists() and (old / "settings.json").exists()   # left as it was
    assert not [p for p in new.parent.iterdir() if ".migrating-" in p.name]
    assert moving.take_notes() == [note] and moving.take_notes() == []       # said once
    (new / "settings.json").write_text("{}")
    assert moving.migrate_data() == ""                                        # once: never again
    moving._TRIED = False
    assert moving.migrate_data() == ""                                        # nor in the next process
    assert (new / "settings.json").read_text() == "{}"
    from core.paths import data_dir
    assert data_dir() == new


def test_no_copy_over_data_already_there_or_into_a_directory_the_user_named(platform_dirs, monkeypatch,
                                                                            tmp_path):
    old, new = platform_dirs
    _old_data(old).close()
    new.mkdir(parents=True)
    (new / "settings.json").write_text('{"root_model": "mine"}')
    assert moving.migrate_data() == "" and not (new / "runs.db").exists()
    monkeypatch.setattr(moving, "_TRIED", False)
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(tmp_path / "chosen"))
    (new / "settings.json").unlink()
    assert moving.migrate_data() == "" and not (tmp_path / "chosen").exists()


def test_a_copy_that_fails_leaves_nothing_half_done(platform_dirs):
    old, new = platform_dirs
    _old_data(old).close()
    (old / "runs.db").write_bytes(b"not a database at all" * 100)
    note = moving.migrate_data()
    assert "could not be copied" in note and "tried again at the next start" in note
    assert moving.migrate_data() == "" and moving.take_notes() == [note]     # said once a process
    assert not new.exists() and not [p for p in new.parent.iterdir() if ".migrating-" in p.name]


def _old_keys(ring: FileKeyring) -> None:
    ring.set_password(OLD_SERVICE, "openai", "sk-ours-openai-0123456789")
    ring.set_password(OLD_SERVICE, "lab", "sk-ours-lab-0123456789")
    ring.set_password(OLD_SERVICE, INDEX_ENTRY, "lab,openai")
    # Not in our index: the other app's, whatever they look like. Never read, never moved.
    ring.set_password(OLD_SERVICE, "anthropic", "sk-theirs-anthropic-0123")
    ring.set_password(OLD_SERVICE, "session", "their-session-token")


def test_only_the_keys_we_wrote_move_to_the_new_service(tmp_path):
    ring = FileKeyring(tmp_path / "keys.cfg")
    _old_keys(ring)
    store = KeyStore(ring)
    folder = tmp_path / "data"
    note = moving.migrate_keys(store, folder)
    assert note.startswith("Your API keys (lab, openai) moved to RLM Studio's own keychain entry "
                           "\"io.github.rlm-studio-desktop\"")
    assert store.resolve("openai") == ("sk-ours-openai-0123456789", "keychain")
    assert ring.get_password(SERVICE, "lab") == "sk-ours-lab-0123456789"
    assert sorted(store._indexed()) == ["lab", "openai"]
    for name in ("openai", "lab", INDEX_ENTRY):
        assert ring.get_password(OLD_SERVICE, name) is None          # moved, not copied
    assert ring.get_password(OLD_SERVICE, "anthropic") == "sk-theirs-anthropic-0123"
    assert ring.get_password(OLD_SERVICE, "session") == "their-session-token"
    assert ring.get_password(SERVICE, "anthropic") is None
    assert json.loads((folder / moving.MARKER).read_text())["keys"]["moved"] == ["lab", "openai"]
    assert moving.keys_done(folder) and moving.migrate_keys(store, folder) == ""
    moving.take_notes()


def test_a_key_already_under_the_new_name_is_kept_and_the_old_one_left(tmp_path):
    ring = FileKeyring(tmp_path / "keys.cfg")
    _old_keys(ring)
    ring.set_password(SERVICE, "openai", "sk-newer-openai-99999999")
    note = moving.migrate_keys(KeyStore(ring), tmp_path / "data")
    assert "(lab) moved" in note and "old keys of openai were left" in note
    assert ring.get_password(SERVICE, "openai") == "sk-newer-openai-99999999"
    assert ring.get_password(OLD_SERVICE, "openai") == "sk-ours-openai-0123456789"
    assert ring.get_password(OLD_SERVICE, INDEX_ENTRY) == "lab,openai"      # still names openai
    moving.take_notes()


def test_without_our_index_nothing_is_touched(tmp_path):
    ring = FileKeyring(tmp_path / "keys.cfg")
    ring.set_password(OLD_SERVICE, "openai", "sk-theirs-openai-0123456")   # the other app's only
    assert moving.migrate_keys(KeyStore(ring), tmp_path / "data") == ""
    assert ring.get_password(OLD_SERVICE, "openai") == "sk-theirs-openai-0123456"
    assert ring.get_password(SERVICE, "openai") is None


def test_the_cli_says_so_on_stderr_once(tmp_path):
    old = tmp_path / "xdg" / OLD_APP_NAME
    _old_data(old).close()
    keys = tmp_path / "keys.cfg"
    _old_keys(FileKeyring(keys))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RLM_STUDIO_", "RLMSTUDIO_DESKTOP_"))}
    env.update(XDG_DATA_HOME=str(tmp_path / "xdg"), PYTHONPATH=str(REPO),
               PYTHON_KEYRING_BACKEND="tests.support.test_keyring.FileKeyring")
    env[ENV_VAR] = str(keys)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "app.main", *args], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120)
    first = cli("keys", "list", "--json")
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("note: RLM Studio now keeps its data in") == 1
    assert first.stderr.count("note: Your API keys (lab, openai) moved") == 1
    assert {k["provider"] for k in json.loads(first.stdout)} >= {"lab", "openai"}
    second = cli("keys", "list", "--json")
    assert second.returncode == 0 and "note:" not in second.stderr
    assert (tmp_path / "xdg" / APP_ID / "runs.db").exists()
