"""Ctrl+C on the CLI at several moments (once, and twice: the second while the run
cleans up): the process exits with 130, leaves no worker process and no `rlm-repl-*`
directory of its own, and a run it started is stored as cancelled."""

from __future__ import annotations

import glob
import json
import os
import signal
import sqlite3
import subprocess
import tempfile
import time

import pytest

from tests.integration.engine_helpers import code
from tests.integration.test_cli_ask import ask, make_folder
from tests.integration.test_store_failures import _prepare


def _left_by(pid: int) -> tuple[list[int], list[str]]:
    marker = f"rlm-repl-{pid}-".encode()
    procs = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if marker in f.read():
                        procs.append(int(name))
            except OSError:
                pass
    return procs, glob.glob(os.path.join(tempfile.gettempdir(), f"rlm-repl-{pid}-*"))


def _wait_for(predicate, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline and not predicate():
        time.sleep(0.02)
    assert predicate(), "the moment never came"


@pytest.mark.parametrize("moment,twice", [("root-call", False), ("cell", False), ("sub-calls", False),
                                          ("cell", True), ("sub-calls", True)])
def test_ctrl_c_leaves_nothing(server, tmp_path, moment, twice):
    if moment == "root-call":
        server.script("root", replies=["FINAL(never)"], latency_s=30)
    elif moment == "cell":
        server.script("root", replies=[code("import time\nopen('/dev/null').close()\ntime.sleep(30)")])
    else:
        server.script("sub", fn=lambda r: "slow", latency_s=30)
        server.script("root", replies=[code("out = llm_query_batched(['a', 'b', 'c'])")])
    cmd, env = ask(server, tmp_path, make_folder(tmp_path), "--json")
    db_path = _prepare(env)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if moment == "sub-calls":
            _wait_for(lambda: len(server.requests_for("sub")) >= 3)
        else:
            _wait_for(lambda: len(server.requests_for("root")) >= 1)
            if moment == "cell":
                time.sleep(0.8)                      # the reply is streamed, the cell sleeps
        proc.send_signal(signal.SIGINT)
        if twice:
            time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    left = _left_by(proc.pid)
    assert left == ([], []), f"left behind: {left}"
    assert proc.returncode == 130, err
    db = sqlite3.connect(db_path)
    rows = db.execute("SELECT status FROM runs").fetchall()
    db.close()
    if twice:
        assert rows in ([], [("cancelled",)], [("interrupted",)]), rows
    else:
        assert rows == [("cancelled",)], rows
        assert json.loads(out)["status"] == "cancelled"
