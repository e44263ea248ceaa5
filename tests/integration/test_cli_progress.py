"""`rlm-studio ask` shows its reading progress on a terminal (stderr a TTY, a real pty
here), and never with --json, whose stderr a script may read as it is."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from tests.integration.engine_helpers import code
from tests.integration.test_cli_ask import ask, make_folder


def _ask_on_a_terminal(server, tmp_path, *extra):
    server.script("root", replies=[code("FINAL('done')")])
    cmd, env = ask(server, tmp_path, make_folder(tmp_path), "--mode", "rlm", *extra)
    main, side = pty.openpty()
    try:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=side, stdin=subprocess.DEVNULL,
                              timeout=120)
        os.close(side)
        side = -1
        seen = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:                   # EIO: the terminal's other end is closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if side >= 0:
            os.close(side)
        os.close(main)
    return proc, seen.decode("utf-8", "replace")


def test_the_terminal_sees_the_reading_progress(server, tmp_path):
    proc, terminal = _ask_on_a_terminal(server, tmp_path)
    assert proc.returncode == 0, terminal
    assert "reading 2/2 files" in terminal


def test_json_runs_show_no_progress(server, tmp_path):
    proc, terminal = _ask_on_a_terminal(server, tmp_path, "--json")
    assert proc.returncode == 0, terminal
    assert b'"status": "finished"' in proc.stdout
    assert "reading" not in terminal
