"""Fixtures for keys, settings and the model list: a file-backed keyring in a
temp directory, a private data directory, and a CLI harness in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.providers import PROVIDERS
from tests.support.test_keyring import ENV_VAR, FileKeyring

REPO = Path(__file__).resolve().parents[3]

# Runs only `rlm-studio keys ...` (app/cli.py also needs the other commands).
CLI_HARNESS = """
import argparse, sys
from app.cli_keys import register
parser = argparse.ArgumentParser(prog="rlm-studio")
register(parser.add_subparsers(dest="command"))
args = parser.parse_args(sys.argv[1:])
sys.exit(int(args.handler(args) or 0))
"""


def provider_env_names() -> set[str]:
    return {name for p in PROVIDERS.values() for name in p.env_vars}


@pytest.fixture
def no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own API keys must not leak into a test."""
    for name in provider_env_names():
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_provider_env: None) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(path))
    return path


@pytest.fixture
def keyring_file(tmp_path: Path) -> Path:
    return tmp_path / "keyring" / "keys.cfg"


@pytest.fixture
def file_keyring(keyring_file: Path) -> FileKeyring:
    keyring_file.parent.mkdir(parents=True, exist_ok=True)
    return FileKeyring(keyring_file)


@pytest.fixture
def store(file_keyring: FileKeyring, no_provider_env: None):
    from core.secrets import KeyStore
    return KeyStore(file_keyring)


@pytest.fixture
def cli_env(tmp_path: Path, keyring_file: Path) -> dict[str, str]:
    """Environment of a CLI subprocess: the test keyring, a private data dir,
    no provider keys from the machine."""
    keyring_file.parent.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in provider_env_names()}
    env.update({
        "PYTHON_KEYRING_BACKEND": "tests.support.test_keyring.FileKeyring",
        ENV_VAR: str(keyring_file),
        "RLMSTUDIO_DESKTOP_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(REPO),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "NO_PROXY": "127.0.0.1,localhost",
    })
    return env


@pytest.fixture
def cli_here(cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    """The same CLI inside the test process (litellm is imported once, not per
    call): cli_here("keys", "test", "lab") -> (exit code, stdout, stderr)."""
    import argparse

    import keyring.core

    from app.cli_keys import register
    for name in provider_env_names():
        monkeypatch.delenv(name, raising=False)
    for name, value in cli_env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)     # detect again, from the env

    def run(*argv: str) -> tuple[int, str, str]:
        parser = argparse.ArgumentParser(prog="rlm-studio")
        register(parser.add_subparsers(dest="command"))
        args = parser.parse_args(list(argv))
        code = int(args.handler(args) or 0)
        out = capsys.readouterr()
        return code, out.out, out.err
    yield run
    keyring.core._keyring_backend = None


@pytest.fixture
def run_cli(cli_env: dict[str, str]):
    """run_cli("keys", "list", stdin="...", env={...}) -> CompletedProcess (text)."""
    def run(*argv: str, stdin: str | None = "", env: dict[str, str | None] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
        merged = {**cli_env, **(env or {})}          # a None value removes the variable
        return subprocess.run([sys.executable, "-c", CLI_HARNESS, *argv], input=stdin,
                              capture_output=True, text=True, cwd=REPO, timeout=timeout,
                              env={k: v for k, v in merged.items() if v is not None})
    return run
