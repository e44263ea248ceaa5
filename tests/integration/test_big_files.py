"""One big file through the real CLI, ingest workers and REPL worker: a generated mailbox
(300 MB), log (300 MB) and CSV (200 MB), past the size at which they are read a piece at a
time, are counted right. Memory, measured from /proc over the whole process tree: its peak
(the CLI, the ingest workers and their fork server, the REPL worker and its launchers,
sampled together) stays within 1.5x the file, and the CLI and ingest processes hold no copy
of the text (they grow by less than half the file over the same run on a small file). A Stop
halfway through reading leaves nothing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time

import pytest

from tests.integration.engine_helpers import code
from tests.integration.test_cli_ask import cli_env
from tests.support.big_files import COUNTS, write_log, write_mbox
from tests.support.proc_tree import PeakSampler

import sys

MB = 1024 * 1024
SIZES = {"mbox": 300 * MB, "log": 300 * MB, "csv": 200 * MB}
KINDS = {kind: (name, write, counting) for kind, (name, write, counting, _right) in COUNTS.items()}


def _answer(kind: str, total: int, expected: int) -> str:
    return COUNTS[kind][3](total, expected)


def _ask(server, tmp_path, path, *extra):
    cmd = [sys.executable, "-m", "app.main", "ask", "How many?", str(path), "--root", "openai/root",
           "--sub", "openai/sub", "--api-base", server.url, "--mode", "rlm", "--json", *extra]
    return cmd, cli_env(tmp_path)


def _run(server, tmp_path, path, counting):
    server.script("root", replies=[code(f"FINAL(str({counting}))")])
    cmd, env = _ask(server, tmp_path, path)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = PeakSampler(proc.pid)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=600)
    finally:
        sampler.stop.set()
        sampler.join()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    return json.loads(out), err, sampler


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_big_file_is_counted_in_bounded_memory(server, tmp_path, kind):
    name, write, counting = KINDS[kind]
    (tmp_path / "small").mkdir()
    (tmp_path / "big").mkdir()
    # The baseline: a 3 MB log (past the size read in-process: a worker reads it, as the big file).
    write_log(tmp_path / "small" / "small.log", 3 << 20)
    total, expected = write(tmp_path / "big" / name, SIZES[kind])
    size = (tmp_path / "big" / name).stat().st_size
    _, _, base = _run(server, tmp_path, tmp_path / "small" / "small.log", KINDS["log"][2])
    data, err, big = _run(server, tmp_path, tmp_path / "big" / name, counting)
    assert data["status"] == "finished" and data["answer"] == _answer(kind, total, expected), (data, err)
    peak = big.peak_kb * 1024
    rest = (big.rest_peak_kb - base.rest_peak_kb) * 1024
    # A second run of the same file reads nothing again and answers the same.
    again, err, second = _run(server, tmp_path, tmp_path / "big" / name, counting)
    print(f"{kind}: {size:,} bytes, tree peak {peak / MB:,.0f} MB = {peak / size:.2f}x the file "
          f"(REPL worker {big.repl_peak_kb / 1024:,.0f} MB, the rest {big.rest_peak_kb / 1024:,.0f} MB), "
          f"second run {second.peak_kb * 1024 / size:.2f}x; load {os.getloadavg()[0]:.1f}")
    assert peak <= 1.5 * size, f"the tree's peak was {peak / size:.2f}x the file"
    assert rest <= 0.5 * size, f"the CLI and ingest processes grew {rest / size:.2f}x the file"
    assert again["answer"] == _answer(kind, total, expected)
    assert "1 of 1 files unchanged since an earlier read" in err
    assert second.peak_kb * 1024 <= 1.5 * size, f"the second run's peak was {second.peak_kb * 1024 / size:.2f}x"
    shutil.rmtree(tmp_path / "big")                   # the disk: the file and its sidecar
    shutil.rmtree(tmp_path / "home" / "texts", ignore_errors=True)


def test_a_stop_halfway_through_reading_leaves_nothing(server, tmp_path):
    path = tmp_path / "export.mbox"
    write_mbox(path, 60 * 1024 * 1024)
    size = path.stat().st_size
    server.script("root", replies=["FINAL(never)"])
    cmd, env = _ask(server, tmp_path, path)
    spool = tmp_path / "home" / "texts"
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = PeakSampler(proc.pid)
    sampler.start()
    try:
        deadline = time.monotonic() + 300
        while not any(p.name.startswith(".partial-") and p.stat().st_size > size // 3
                      for p in (spool.iterdir() if spool.exists() else ())):
            assert proc.poll() is None and time.monotonic() < deadline, "the read never got halfway"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        proc.communicate(timeout=60)
        took = time.monotonic() - stopped
    finally:
        sampler.stop.set()
        sampler.join()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert took < 10, f"the Stop took {took:.1f} s"
    deadline = time.monotonic() + 5           # the fork server leaves once its parent has gone
    while (alive := [p for p in sampler.seen if p != proc.pid and os.path.exists(f"/proc/{p}")]) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive == [], f"processes left: {alive}"
    assert list(spool.iterdir()) == [], "a half-written text was left"
    assert not server.requests_for("root")
    db = tmp_path / "home" / "runs.db"
    if db.exists():
        con = sqlite3.connect(db)
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM extracts").fetchone() == (0,)
        con.close()


def test_a_limit_set_with_the_flag_says_how_to_raise_it(server, tmp_path):
    path = tmp_path / "server.log"
    write_log(path, 3 << 20)
    cmd, env = _ask(server, tmp_path, path, "--max-file-mb", "1")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and json.loads(proc.stdout)["status"] == "failed"
    assert "skipped server.log: too_large:" in proc.stderr
    assert "over the 1,048,576 byte limit set for files; raise it with --max-file-mb (0: any size)" in proc.stderr
    assert not server.requests_for("root")
