"""A stored key reaches the model server and appears nowhere else.

The whole CLI runs in real processes: `keys set` stores a known key in the test
keyring, `ask` answers a question through a custom endpoint on 127.0.0.1 that
records the Authorization header, the root model's code cell dumps what the
REPL can see (os.environ, argv, /proc/self/cmdline, the parent's environment),
and `runs export` writes the run out. Then every byte we can find is searched.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

from app.settings import Endpoint, ModelSettings, Settings, save_settings
from core.secrets import SERVICE
from tests.support.openai_server import ScriptedOpenAI
from tests.support.test_keyring import FileKeyring

KEY = "sk-isolation-KNOWN-key-7f3a9c1e5b"

SNOOP = """import os, sys
seen = {"environ": dict(os.environ), "argv": sys.argv}
for name, path in (("cmdline", "/proc/self/cmdline"), ("parent_environ", f"/proc/{os.getppid()}/environ"),
                   ("parent_cmdline", f"/proc/{os.getppid()}/cmdline")):
    try:
        seen[name] = open(path, "rb").read().decode("utf-8", "replace")
    except OSError as exc:
        seen[name] = f"unreadable: {exc!r}"
print("SNOOP", repr(seen))"""


def _cli(env: dict[str, str], *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    from tests.unit.keys.conftest import REPO
    return subprocess.run([sys.executable, "-m", "app.main", *argv], input=stdin, env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=180)


def _forms(key: str) -> list[bytes]:
    raw = key.encode()
    return [raw, base64.b64encode(raw), raw.hex().encode(), key[::-1].encode()]


def test_key_reaches_the_server_and_nothing_else(cli_env, keyring_file, tmp_path):
    home = Path(cli_env["RLMSTUDIO_DESKTOP_HOME"])
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text("The secret ingredient is basil.\n")
    with ScriptedOpenAI(require_key=KEY) as server:
        server.script("root", replies=[f"Let me look around.\n```repl\n{SNOOP}\n```",
                                       "FINAL(basil)"])
        save_settings(Settings(
            endpoints=[Endpoint("lab", server.url, ["root"], needs_key=True)],
            models={"lab/root": ModelSettings(free=True)}), home / "settings.json")

        stored = _cli(cli_env, "keys", "set", "lab", stdin=KEY + "\n")
        assert stored.returncode == 0, stored.stderr
        asked = _cli(cli_env, "ask", "What is the secret ingredient?", str(docs),
                     "--root", "lab/root", "--max-depth", "0", "--json", "--max-output-chars", "200000")
        assert asked.returncode == 0, asked.stderr
        result = json.loads(asked.stdout)
        assert result["status"] == "finished" and result["answer"] == "basil"
        requests = list(server.history)

    # the key reached the server, on every call, only in the Authorization header
    assert len(requests) == 2
    assert all(r.headers.get("Authorization") == f"Bearer {KEY}" for r in requests)
    bodies = json.dumps([r.body for r in requests])
    assert "SNOOP" in bodies and "PATH" in bodies          # the REPL's view was really sent back
    assert KEY not in bodies

    exports = []
    for fmt in ("json", "md", "html"):
        out = tmp_path / f"export.{fmt}"
        done = _cli(cli_env, "runs", "export", result["run_id"], "-o", str(out), "--include-texts")
        assert done.returncode == 0, done.stderr
        exports.append(out)
    shown = _cli(cli_env, "runs", "show", result["run_id"], "--json")
    listed = _cli(cli_env, "keys", "list")
    assert listed.stdout.startswith("lab") and "…1e5b" in listed.stdout

    places = {"cli output": "".join(p.stdout + p.stderr for p in (stored, asked, shown, listed))}
    for path in [*home.rglob("*"), *exports]:
        if path.is_file():
            places[str(path)] = path.read_bytes().decode("latin-1")
    assert any(p.endswith("runs.db") for p in places), sorted(places)
    leaks = [(where, form) for where, text in places.items() for form in _forms(KEY)
             if form.decode("latin-1") in text]
    assert leaks == []
    # the one copy at rest is the keyring's own entry
    assert FileKeyring(keyring_file).get_password(SERVICE, "lab") == KEY
