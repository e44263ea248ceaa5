"""Smoke checks of a BUILT one-folder bundle (packaging/build.sh), from Python.

Skipped unless RLM_BUNDLE points at the bundle folder, e.g.
    RLM_BUNDLE=dist/rlm-studio .venv/bin/pytest tests/packaging -q
packaging/smoke.sh runs the same checks from the shell (that is what CI calls).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.packaging.serve_scripted import EXPECTED_ANSWER, MAX_DEPTH, make_docs, start

BUNDLE = os.environ.get("RLM_BUNDLE")
pytestmark = pytest.mark.skipif(not BUNDLE, reason="RLM_BUNDLE is not set (no built bundle)")
REPO = Path(__file__).resolve().parents[2]
SIZE_LIMIT_MIB = 250          # as `du -sh` counts


@pytest.fixture(scope="module")
def bundle() -> Path:
    path = Path(BUNDLE or "").resolve()
    assert (path / "rlm-studio").is_file(), f"no executable in {path}"
    return path


def run(bundle: Path, tmp_path: Path, *args: str, env: dict | None = None,
        timeout: float = 120, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The bundle's executable, from an empty folder, with its own data dir."""
    full = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    full.update(RLMSTUDIO_DESKTOP_HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="offscreen",
                PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    full.update(env or {})
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    return subprocess.run([str(bundle / "rlm-studio"), *args], cwd=cwd, env=full, input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def bundle_bytes(bundle: Path) -> int:
    """Bytes of the regular files (symlinks to bundled libraries count once)."""
    total = 0
    for folder, _dirs, names in os.walk(bundle):
        for name in names:
            st = os.lstat(os.path.join(folder, name))
            if not os.path.islink(os.path.join(folder, name)):
                total += st.st_size
    return total


def internal(bundle: Path) -> Path:
    return bundle / "_internal" if (bundle / "_internal").is_dir() else bundle


def test_version_comes_from_app_version(bundle, tmp_path):
    text = (REPO / "app" / "version.py").read_text(encoding="utf-8")
    version = re.search(r'__version__ = "([^"]+)"', text).group(1)
    proc = run(bundle, tmp_path, "--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"rlm-studio {version}"


def test_bundle_holds_resources_and_litellm_data_but_no_dead_weight(bundle):
    root = internal(bundle)
    assert (root / "resources" / "prompts" / "system.md").is_file()
    assert list((root / "resources" / "prompts" / "models").glob("*.md"))
    assert (root / "resources" / "icons" / "rlm-studio.svg").is_file()
    assert list((root / "resources" / "styles").glob("*.qss"))
    assert (root / "litellm" / "model_prices_and_context_window_backup.json").is_file()
    assert list((root / "litellm" / "litellm_core_utils" / "tokenizers").iterdir())
    assert not (root / "litellm" / "proxy").exists()
    assert not list(root.glob("**/libtk*")) and not (root / "tkinter").exists()
    assert not list(root.glob("PySide6/**/libQt6Qml*")), "QtQml should not be bundled"
    assert (root / "keyring-25.7.0.dist-info").is_dir(), "keyring's entry points are needed"
    size_mib = bundle_bytes(bundle) / 2**20
    print(f"bundle size {size_mib:.0f} MiB")
    assert size_mib < SIZE_LIMIT_MIB


def test_keys_list_loads_keyring(bundle, tmp_path):
    proc = run(bundle, tmp_path, "keys", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    assert isinstance(json.loads(proc.stdout), list)
    assert "Traceback" not in proc.stderr


def test_ask_runs_model_code_in_the_frozen_worker(bundle, tmp_path):
    server = start()
    try:
        docs = make_docs(tmp_path / "docs")
        proc = run(bundle, tmp_path, "ask", "What is counted here?", str(docs),
                   "--root", "openai/root", "--sub", "openai/sub", "--api-base", server.url,
                   "--max-depth", MAX_DEPTH, "--json", "--quiet", env={"OPENAI_API_KEY": "sk-bundle-test"}, timeout=180)
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        assert data["status"] == "finished", data
        assert data["answer"] == EXPECTED_ANSWER
        assert len(server.requests_for("sub")) == 2      # the batched llm_query
        assert len(server.requests_for("root")) == 2     # the root and the nested RLM
    finally:
        server.stop()


def test_gui_starts_offscreen_and_quits_on_its_own(bundle, tmp_path):
    proc = run(bundle, tmp_path, "--smoke-quit-after", "1500", timeout=90)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    match = re.search(r"first paint after (\d+) ms", proc.stdout)
    assert match, proc.stdout
    print(f"first paint after {match.group(1)} ms")
