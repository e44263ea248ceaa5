"""The engine's process and its helpers hold no key where model code could read one
(issue 13, item 6): real processes, real multiprocessing helpers, real /proc."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KEYS = {"OPENAI_API_KEY": "sk-openai-ENVPROBE-1111111111", "GROQ_API_KEY": "gsk-groq-ENVPROBE-2222222222",
        "MISTRAL_API_KEY": "mistral-ENVPROBE-3333333333", "RLMSTUDIO_DESKTOP_LAB_API_KEY": "lab-ENVPROBE-4444444444"}

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc are Linux")


def env_with_keys(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(KEYS)
    env.update({"PYTHONPATH": str(REPO), "RLMSTUDIO_DESKTOP_HOME": str(tmp_path / "home")})
    return env


def proc_text(pid: int, name: str) -> str | None:
    """/proc/<pid>/<name>, or None when the kernel refuses (a non-dumpable process of ours)."""
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes().decode("utf-8", "replace")
    except PermissionError:
        return None


def keys_in(text: str | None) -> list[str]:
    return [] if text is None else [k for k, v in KEYS.items() if v in text]


def run_probe(tmp_path: Path, *args: str):
    child = subprocess.Popen([sys.executable, "-m", "tests.support.engine_process_probe", *args],
                             cwd=REPO, env=env_with_keys(tmp_path), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = child.stdout.readline()
    if not line:
        child.kill()
        raise AssertionError(child.stderr.read())
    return child, json.loads(line)


def finish(child) -> None:
    child.stdin.write("\n")
    child.stdin.flush()
    child.wait(timeout=30)


def test_no_key_in_the_engine_or_any_helper_and_none_is_dumpable(tmp_path):
    child, seen = run_probe(tmp_path)
    try:
        helpers = {"engine": child.pid, "worker": seen["worker"]["pid"],
                   "resource tracker": seen["resource_tracker"], "forkserver": seen["forkserver"]}
        environs = {name: proc_text(pid, "environ") for name, pid in helpers.items()}
        cmdlines = {name: proc_text(pid, "cmdline") for name, pid in helpers.items()}
    finally:
        finish(child)
    # the keys were moved out of the environment, before any helper started
    assert sorted(seen["prepared"]["keys_moved"]) == sorted(KEYS)
    assert not set(KEYS) & set(seen["engine"]["os_environ"])
    assert not set(KEYS) & set(seen["worker"]["os_environ"])
    assert seen["resolved_groq"] == [KEYS["GROQ_API_KEY"], "env:GROQ_API_KEY"]   # the key store still has it
    # no key in any /proc/<pid>/environ: not the engine's (its initial block was wiped), not a helper's
    assert {name: keys_in(text) for name, text in environs.items()} == {name: [] for name in helpers}
    assert keys_in(seen["engine"]["environ"]) == [] and keys_in(seen["worker"]["environ"]) == []
    # not dumpable: the engine, the ingest worker (forked by the forkserver, so the forkserver
    # too), and any process multiprocessing execs (the resource tracker and forkserver are
    # started exactly so: their command lines carry the prctl)
    assert seen["prepared"]["dumpable"] is False and seen["engine"]["dumpable"] == 0
    assert seen["worker"]["dumpable"] == 0
    assert seen["spawned_exit"] == 10
    for name in ("resource tracker", "forkserver"):
        assert cmdlines[name] is None or "prctl(4, 0, 0, 0, 0)" in cmdlines[name], cmdlines[name]


def test_the_control_without_preparation_shows_what_the_test_would_catch(tmp_path):
    child, seen = run_probe(tmp_path, "--no-prepare")
    try:
        tracker = proc_text(seen["resource_tracker"], "environ")
    finally:
        finish(child)
    assert sorted(keys_in(tracker)) == sorted(KEYS)          # the helpers carried every key
    assert sorted(keys_in(seen["engine"]["environ"])) == sorted(KEYS)
    assert seen["engine"]["dumpable"] == 1 and seen["worker"]["dumpable"] == 1
    assert seen["spawned_exit"] == 11


def test_the_window_process_wipes_the_keys_from_its_environment(tmp_path):
    env = env_with_keys(tmp_path)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
    child = subprocess.Popen([sys.executable, "-m", "app.main", "--smoke-quit-after", "20000"], cwd=REPO,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()               # "first paint after N ms": the window is up
        assert line.startswith("first paint"), child.stderr.read() if child.poll() is not None else line
        environ = proc_text(child.pid, "environ")
    finally:
        child.kill()
        child.wait(timeout=30)
    assert environ is None or keys_in(environ) == []
    assert environ is None or "OPENAI_API_KEY=\0" in environ or "OPENAI_API_KEY=" not in environ


def test_helper_code_keeps_its_first_statement_first_for_the_frozen_app():
    """PyInstaller's multiprocessing hook recognises the helpers by how their -c code starts;
    the prctl call goes right after that import (a frozen ask failed with the prefix in front)."""
    from core.engine_process import NO_DUMP_PREFIX, with_no_dump
    tracker = with_no_dump(["py", "-c", "from multiprocessing.resource_tracker import main;main(6)"])
    assert tracker[2] == f"from multiprocessing.resource_tracker import main; {NO_DUMP_PREFIX}main(6)"
    server = with_no_dump(["py", "-c", "from multiprocessing.forkserver import main; main(6, 13)"])
    assert server[2].startswith("from multiprocessing.forkserver import main; " + NO_DUMP_PREFIX)
    other = with_no_dump(["py", "-c", "print(1)"])
    assert other[2] == NO_DUMP_PREFIX + "print(1)"
    assert with_no_dump(list(tracker)) == tracker        # once only
