"""Every Ctrl+C of `rlm-studio ask` counts, from the process's first instruction on.

A real `rlm-studio ask` (the installed console script) against the scripted server on
127.0.0.1, whose root writes a cell that sleeps 30 s; SIGINT at 40 points spread over the
first 1.5 s after the process starts (longer when the start to the first request is slower,
under load, so the points reach the run): wherever it lands (start-up, an import, a
callback, reading the documents, the worker's start, the cell), each point is its own
process, and tests/support/sigint_sweep.py says what it ended in.

  - Started with SIGINT held, as the bundle's launcher starts the program
    (packaging/launcher.c; the built bundle itself: tests/packaging/test_bundle_sigint.py):
    every point ends with 130, no traceback, nothing left behind.
  - The console script as pip writes it: the same after the package's first line; before
    it, in the interpreter's own start, Python decides (docs/cli.md, "Ctrl+C"): those
    points are counted, and must show no frame of the app but the console script's import.
A second SIGINT quits at once.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.engine_helpers import code
from tests.support.sigint_sweep import (SLEEPING_CELL, ask_argv, ask_env, one_point, summary, sweep,
                                        to_first_request)

POINTS = 40
SPAN_S = 1.5


def _script() -> str:
    return str(Path(sys.executable).with_name("rlm-studio"))


def _sweep(server, tmp_path: Path, hold_sigint: bool) -> tuple[list, float]:
    assert Path(_script()).exists(), "the console script is installed with the package (pip install -e .)"
    server.script("root", fn=lambda r: code(SLEEPING_CELL))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("apples: 3\n")
    argv = ask_argv([_script()], server.url, docs)
    start = to_first_request(argv, tmp_path / "first", ask_env(), server)
    span = max(SPAN_S, 1.5 * start)       # run two at a time: each start is slower than this one
    result = sweep(lambda _home: argv, ask_env(), tmp_path / "points", points=POINTS, span_s=span,
                   parallel=2, hold_sigint=hold_sigint)
    print(f"\nover {span:.2f} s (first request {start:.2f} s after the start): {summary(result)}")
    for point in result:
        assert not point.left, (str(point), point.left)
    return result, start


@pytest.mark.timeout(600)       # 41 real starts of the CLI, two at a time
def test_sigint_anywhere_in_a_held_start_ends_ask_with_130_and_leaves_nothing(server, tmp_path):
    result, _start = _sweep(server, tmp_path, hold_sigint=True)
    bad = [str(p) for p in result if p.outcome == "bad"]
    assert not bad, bad
    assert sum(p.outcome == "130" for p in result) == POINTS, [str(p) for p in result]


@pytest.mark.timeout(600)
def test_the_console_script_leaves_only_the_interpreters_own_start_to_python(server, tmp_path):
    result, _start = _sweep(server, tmp_path, hold_sigint=False)
    early = []
    for point in result:
        if point.outcome != "bad":
            continue
        # Python's start (init_import_site: exit 1) or the console script's own lines before
        # the package's first one (KeyboardInterrupt, then killed by SIGINT): no app frame but
        # the script's `from app.main import main`, nothing left (checked in _sweep).
        text = point.stderr.decode("utf-8", "replace")
        app_frames = [ln for ln in text.splitlines() if "/app/" in ln or "/core/" in ln]
        assert point.returncode in (1, -signal.SIGINT), str(point)
        assert not app_frames, str(point)
        early.append(point.at_ms)
    # The interpreter's start is the first 50-130 ms at rest (longer under load, where the
    # span stretches with it): most points land after it.
    assert len(early) < POINTS // 2, [str(p) for p in result]


def test_a_second_sigint_quits_at_once(server, tmp_path):
    server.script("root", fn=lambda r: code("import time\ntime.sleep(30)"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("apples: 3\n")
    env = dict(ask_env(), RLMSTUDIO_DESKTOP_HOME=str(tmp_path / "home"))
    proc = subprocess.Popen(ask_argv([_script()], server.url, docs), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
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


def test_a_held_sigint_ends_the_windows_start_with_130_too(tmp_path):
    """The window has no CLI handler: a Ctrl+C held since the launch (the bundle's launcher)
    ends its start with 130 as well, not with a KeyboardInterrupt in the package's import."""
    point = one_point([_script(), "--smoke-quit-after", "20000"], 0.010, tmp_path / "gui", ask_env(),
                      hold_sigint=True)
    assert point.outcome == "130" and not point.left, str(point)
