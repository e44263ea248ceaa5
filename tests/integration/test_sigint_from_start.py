"""Every Ctrl+C of `rlm-studio ask` counts, from the process's first instruction on.

A real `rlm-studio ask` (the installed console script) against the scripted server on
127.0.0.1, whose root writes a cell that sleeps 30 s; SIGINT at 40 points spread over the
first 1.5 s after the process starts (every 37 ms, from 10 ms): wherever it lands (start-up,
an import, a callback, reading the documents, the worker's start, the cell), the process
ends with 130 within seconds, and leaves no process and no rlm-repl-* directory behind.
A second SIGINT quits at once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.engine_helpers import code

REPO = Path(__file__).resolve().parents[2]
POINTS = 40
SPAN_S = 1.5


def _script() -> str:
    return str(Path(sys.executable).with_name("rlm-studio"))


def _env(tmp_path: Path) -> dict[str, str]:
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = dict(os.environ, RLMSTUDIO_DESKTOP_HOME=str(tmp_path / "home"), OPENAI_API_KEY="sk-cli",
               PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring", TMPDIR=str(tmp),
               NO_PROXY="127.0.0.1,localhost")
    env.pop("RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE", None)
    return env


def _left_behind(tmp_path: Path) -> tuple[list[str], list[str]]:
    """Processes whose command line names this test's directory (the REPL worker names its
    context dir, under TMPDIR), and rlm-repl directories left in TMPDIR."""
    mark = str(tmp_path).encode()
    procs = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if mark in cmdline:
                procs.append(f"{pid}: {cmdline[:200]!r}")
    dirs = [p.name for p in (tmp_path / "tmp").iterdir() if "rlm-repl" in p.name]
    return procs, dirs


def _ask(tmp_path: Path, server_url: str, docs: Path) -> subprocess.Popen:
    return subprocess.Popen([_script(), "ask", "How many?", str(docs), "--root", "openai/root",
                             "--sub", "openai/root", "--api-base", server_url, "--mode", "rlm",
                             "--cell-timeout", "60", "--quiet"],
                            env=_env(tmp_path), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.timeout(900)       # 40 real starts of the CLI
def test_sigint_anywhere_in_the_first_1_5_s_ends_ask_with_130_and_leaves_nothing(server, tmp_path):
    assert Path(_script()).exists(), "the console script is installed with the package (pip install -e .)"
    server.script("root", fn=lambda r: code("import time\ntime.sleep(30)\nprint('slept')"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("apples: 3\n")
    outcomes = []
    for i in range(POINTS):
        at = 0.010 + i * (SPAN_S - 0.010) / (POINTS - 1)
        proc = _ask(tmp_path, server.url, docs)
        time.sleep(at)
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"SIGINT at {at * 1000:.0f} ms: still running 30 s later; stderr: {err[-1500:]!r}")
        # Before the interpreter has run a line of ours (its own start and the console script's
        # `import re`: 50-130 ms here), Python ends it itself: killed by SIGINT (the shell's $? is
        # 130 all the same), or "Fatal Python error: init_import_site" (exit 1). No frame of the
        # app is in its traceback but the package's first lines, before SIGINT is held (after
        # that it stays pending until the handler takes it). Counted apart.
        app_frames = [ln for ln in err.splitlines() if b"/app/" in ln or b"/core/" in ln]
        early = proc.returncode in (-signal.SIGINT, 1) and all(b"app/__init__.py\"" in ln for ln in app_frames)
        outcomes.append((round(at * 1000), "interpreter start" if early else proc.returncode))
        if not early:
            assert proc.returncode == 130, (at, proc.returncode, err[-2000:])
            assert b"Traceback" not in err and b"Exception ignored" not in err, (at, err[-2000:])
        deadline = time.monotonic() + 10
        while True:
            procs, dirs = _left_behind(tmp_path)
            if not (procs or dirs) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert not procs and not dirs, (at, procs, dirs)
    early = [at for at, rc in outcomes if rc != 130]
    print(f"\n{POINTS} SIGINTs over {SPAN_S} s: {POINTS - len(early)} exited 130, {len(early)} in the "
          f"interpreter's own start (at {early} ms); root requests reached: "
          f"{len(server.requests_for('root'))}; load {os.getloadavg()[0]:.1f}")
    # The interpreter's own start takes 50-130 ms here (more under load): most points land after it.
    assert len(early) < POINTS // 2, outcomes


def test_a_second_sigint_quits_at_once(server, tmp_path):
    server.script("root", fn=lambda r: code("import time\ntime.sleep(30)"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("apples: 3\n")
    proc = _ask(tmp_path, server.url, docs)
    deadline = time.monotonic() + 60
    while not server.requests_for("root") and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)                               # the cell is running
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err[-2000:]
    assert time.monotonic() - t0 < 10, "the second Ctrl+C did not quit at once"
