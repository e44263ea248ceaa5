"""The engine leaves the worker's .pyc even when it runs with PYTHONDONTWRITEBYTECODE
(otherwise every worker compiles the sandbox modules at start)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_worker_modules_are_compiled_under_dont_write_bytecode(tmp_path):
    shutil.copytree(ROOT / "core", tmp_path / "core", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    subprocess.run([sys.executable, "-c", "import sys; assert sys.dont_write_bytecode\n"
                    "from core.repl import client; client._compile_worker_modules()"],
                   env=env, cwd=str(tmp_path), check=True, timeout=60)
    for name in ("confine", "landlock", "seccomp", "cgroup", "sandbox", "worker", "protocol"):
        source = tmp_path / "core" / "repl" / f"{name}.py"
        assert Path(importlib.util.cache_from_source(str(source))).is_file(), name
    assert Path(importlib.util.cache_from_source(str(tmp_path / "core" / "__init__.py"))).is_file()
