"""`rlm-studio keys ...` in a subprocess, with the file-backed test keyring
named through PYTHON_KEYRING_BACKEND, and a real server on 127.0.0.1 for `test`."""

from __future__ import annotations

import json
import os
import pty
import select
import socket
import sys
import time
from pathlib import Path

import pytest

from app.settings import Endpoint, Settings, save_settings
from core.secrets import SERVICE
from tests.support.openai_server import ScriptedOpenAI
from tests.support.test_keyring import ENV_VAR, FileKeyring
from tests.unit.keys.conftest import CLI_HARNESS, REPO

KEY = "sk-cli-test-key-0123456789-TAIL"


def test_set_from_stdin_then_list_and_delete(run_cli, keyring_file):
    done = run_cli("keys", "set", "openai", stdin=KEY + "\n")
    assert done.returncode == 0, done.stderr
    assert "openai: key stored" in done.stdout and "…TAIL" in done.stdout
    assert FileKeyring(keyring_file).get_password(SERVICE, "openai") == KEY
    listed = run_cli("keys", "list")
    assert listed.returncode == 0 and "openai" in listed.stdout and "keychain" in listed.stdout
    as_json = json.loads(run_cli("keys", "list", "--json").stdout)
    assert as_json == [{"provider": "openai", "source": "keychain", "masked": "…TAIL"}]
    for out in (done, listed):
        assert KEY not in out.stdout + out.stderr
    deleted = run_cli("keys", "delete", "openai")
    assert deleted.returncode == 0 and "deleted" in deleted.stdout
    assert json.loads(run_cli("keys", "list", "--json").stdout) == []
    again = run_cli("keys", "delete", "openai")
    assert again.returncode == 1 and "no key for openai" in again.stderr


def test_list_shows_env_keys_and_custom_endpoints(run_cli, cli_env):
    s = Settings(endpoints=[Endpoint("lab", "http://127.0.0.1:1/v1", ["m"], needs_key=True)])
    save_settings(s, Path(cli_env["RLMSTUDIO_DESKTOP_HOME"]) / "settings.json")
    assert run_cli("keys", "set", "lab", stdin="lab-key-abcdef-9876").returncode == 0
    out = run_cli("keys", "list", "--json", env={"ANTHROPIC_API_KEY": "sk-ant-env-key-5555"})
    rows = {r["provider"]: r for r in json.loads(out.stdout)}
    assert rows["lab"] == {"provider": "lab", "source": "keychain", "masked": "…9876"}
    assert rows["anthropic"]["source"] == "env:ANTHROPIC_API_KEY"
    assert "sk-ant-env-key-5555" not in out.stdout
    gone = run_cli("keys", "delete", "anthropic", env={"ANTHROPIC_API_KEY": "sk-ant-env-key-5555"})
    assert gone.returncode == 1 and "ANTHROPIC_API_KEY still provides" in gone.stderr


def test_set_refuses_empty_and_unknown(run_cli, keyring_file):
    empty = run_cli("keys", "set", "openai", stdin="  \n")
    assert empty.returncode == 2 and "empty" in empty.stderr
    unknown = run_cli("keys", "set", "opneai", stdin=KEY)
    assert unknown.returncode == 2 and "unknown provider" in unknown.stderr
    two = run_cli("keys", "set", "openai", stdin="line one\nline two\n")
    assert two.returncode == 2 and "one line" in two.stderr
    assert not keyring_file.exists() or "openai" not in keyring_file.read_text()


def test_set_without_a_keychain_exits_2_and_writes_nothing(run_cli, tmp_path):
    env = {"PYTHON_KEYRING_BACKEND": None, "DBUS_SESSION_BUS_ADDRESS": "disabled:",
           "HOME": str(tmp_path)}
    done = run_cli("keys", "set", "openai", stdin=KEY, env=env)
    assert done.returncode == 2
    assert "No usable keychain" in done.stderr and "OPENAI_API_KEY" in done.stderr
    assert "plain text" in done.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(KEY not in p.read_text(errors="replace") for p in files)
    listed = run_cli("keys", "list", env={**env, "OPENAI_API_KEY": KEY})
    assert listed.returncode == 0 and "env:OPENAI_API_KEY" in listed.stdout
    assert "no usable keychain" in listed.stderr and KEY not in listed.stdout + listed.stderr


def test_set_on_a_terminal_prompts_without_echo(cli_env, keyring_file):
    """A real pseudo-terminal: getpass turns echo off, so the key never shows."""
    pid, fd = pty.fork()
    if pid == 0:                                  # the child: the CLI on a terminal
        os.chdir(REPO)
        os.execve(sys.executable, [sys.executable, "-c", CLI_HARNESS, "keys", "set", "openai"], cli_env)
    output = b""
    try:
        output += _read_until(fd, b"input hidden")
        os.write(fd, KEY.encode() + b"\n")
        output += _read_until(fd, b"stored")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, output
    text = output.decode(errors="replace")
    assert "OpenAI API key (input hidden):" in text and "key stored" in text
    assert KEY not in text
    assert "TAIL" in text                         # only in the masked tail "…TAIL"


def _read_until(fd: int, marker: bytes, timeout: float = 30.0) -> bytes:
    data = b""
    deadline = time.monotonic() + timeout
    while marker not in data and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
    return data


# --- keys test -----------------------------------------------------------------------
@pytest.fixture
def server():
    with ScriptedOpenAI(require_key=KEY) as s:
        s.script("tiny", fn=lambda req: "ok")
        yield s


def _endpoint_settings(cli_env: dict[str, str], url: str) -> None:
    s = Settings(endpoints=[Endpoint("lab", url, ["tiny"], needs_key=True)])
    save_settings(s, Path(cli_env["RLMSTUDIO_DESKTOP_HOME"]) / "settings.json")


def test_keys_test_works_against_a_server_that_checks_the_key(run_cli, cli_env, server):
    _endpoint_settings(cli_env, server.url)
    assert run_cli("keys", "set", "lab", stdin=KEY).returncode == 0
    done = run_cli("keys", "test", "lab")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("lab: works (openai/tiny at " + server.url)
    assert "key from keychain" in done.stdout and KEY not in done.stdout + done.stderr
    [request] = server.history
    assert request.api_key == KEY and request.model == "tiny"
    assert 1 <= request.max_tokens <= 5


def test_keys_test_with_model_and_api_base_flags(cli_here, server):
    FileKeyring(os.environ[ENV_VAR]).set_password(SERVICE, "openai", KEY)
    code, out, err = cli_here("keys", "test", "openai", "--model", "openai/tiny", "--api-base", server.url)
    assert code == 0, err
    assert out.startswith("openai: works (openai/tiny at ") and server.history[-1].api_key == KEY


def test_keys_test_rejected_key(cli_here, cli_env, server):
    _endpoint_settings(cli_env, server.url)
    FileKeyring(cli_env[ENV_VAR]).set_password(SERVICE, "lab", "wrong-key-000000000")
    code, out, err = cli_here("keys", "test", "lab")
    assert code == 1
    assert out.startswith("lab: rejected (401"), out + err
    assert len(server.history) == 1                      # no retries for a test
    assert "wrong-key-000000000" not in out + err


def test_keys_test_unreachable(cli_here, cli_env):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _endpoint_settings(cli_env, f"http://127.0.0.1:{port}/v1")
    FileKeyring(cli_env[ENV_VAR]).set_password(SERVICE, "lab", KEY)
    code, out, err = cli_here("keys", "test", "lab")
    assert code == 1
    assert out.startswith("lab: unreachable ("), out + err


def test_keys_test_without_a_key(cli_here):
    code, out, err = cli_here("keys", "test", "anthropic")
    assert code == 1
    assert "no key for anthropic" in err and "ANTHROPIC_API_KEY" in err
