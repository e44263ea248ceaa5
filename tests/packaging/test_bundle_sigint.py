"""Every Ctrl+C of the BUILT bundle's `rlm-studio ask` counts, from its first instruction on.

The bundle's `rlm-studio` is packaging/launcher.c: it blocks SIGINT and runs the frozen
program, whose interpreter and bootloader start with the signal held until the app's handler
takes it (app/__init__.py). SIGINT at 40 points over the first 1.5 s (or up to 1.5 times the
start to the first request, under load) against the scripted server: every point ends with
130 (or, in the launcher's first microseconds, killed by SIGINT) and no traceback, and leaves
no process and no rlm-repl-* directory. packaging/smoke.sh runs the same sweep from the shell.

Skipped unless RLM_BUNDLE points at the bundle folder (tests/packaging/test_bundle.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.sigint_sweep import ask_argv, ask_env, serve_sleeping_root, summary, sweep, to_first_request

BUNDLE = os.environ.get("RLM_BUNDLE")
pytestmark = pytest.mark.skipif(not BUNDLE, reason="RLM_BUNDLE is not set (no built bundle)")
POINTS = 40


@pytest.mark.timeout(600)
def test_sigint_anywhere_in_the_bundles_start_ends_ask_with_130(tmp_path):
    exe = Path(BUNDLE or "").resolve() / "rlm-studio"
    assert exe.is_file() and (exe.parent / "rlm-studio-bin").is_file(), "the launcher and the frozen program"
    server = serve_sleeping_root()
    try:
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "a.txt").write_text("apples: 3\n")
        argv = ask_argv([str(exe)], server.url, docs)
        start = to_first_request(argv, tmp_path / "first", ask_env(), server)
        span = max(1.5, 1.5 * start)
        result = sweep(lambda _home: argv, ask_env(), tmp_path / "points", points=POINTS, span_s=span, parallel=2)
    finally:
        server.stop()
    print(f"\nover {span:.2f} s (first request {start:.2f} s after the start): {summary(result)}")
    assert not [str(p) for p in result if p.outcome == "bad" or p.left]
    assert sum(p.outcome == "130" for p in result) >= POINTS - 1, [str(p) for p in result]
