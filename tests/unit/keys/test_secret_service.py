"""One test against a real Secret Service: gnome-keyring in a private D-Bus
session, unlocked through stdin. Skipped only when those programs are missing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.unit.keys.conftest import REPO

pytestmark = pytest.mark.secretservice

PROBE = """
import json
from core.secrets import KeyStore
store = KeyStore()                      # auto-detected, nothing chosen by hand
before = store.get("openai")
store.set("openai", "sk-secret-service-key-4321")
again = KeyStore()                      # a second store reads what the first wrote
result = {"usable": store.usable, "backend": store.backend_name, "before": before,
          "got": again.get("openai"), "listed": [[k.provider, k.source, k.masked] for k in again.list()],
          "deleted": again.delete("openai"), "after": again.get("openai")}
print(json.dumps(result))
"""


def test_key_round_trip_through_gnome_keyring(tmp_path):
    missing = [p for p in ("dbus-run-session", "gnome-keyring-daemon") if shutil.which(p) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    script = (f"printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && "
              f"exec {sys.executable} -c '{PROBE}'")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(REPO),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_RUNTIME_DIR": str(tmp_path)}
    done = subprocess.run(["dbus-run-session", "--", "sh", "-c", script], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["usable"] and result["backend"] == "keyring.backends.SecretService.Keyring"
    assert result["before"] is None
    assert result["got"] == "sk-secret-service-key-4321"
    assert result["listed"] == [["openai", "keychain", "…4321"]]
    assert result["deleted"] is True and result["after"] is None
    # the key went to gnome-keyring's store, not to keyrings.alt's plain file
    assert not list((tmp_path / "data").rglob("keyring_pass.cfg"))
    assert (tmp_path / "data" / "keyrings").is_dir()
