"""Who owns a /tmp/rlm-repl-* directory: a lock its engine holds, not a pid the sweep may
not see (core/repl/workdirs.py). Real engines (a ReplClient with its worker, in a process of
their own), killed with SIGKILL; real sweeps, one from another pid namespace. Every sweep
here runs with TMPDIR in tmp_path, so it never touches another job's directories."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.repl.workdirs import LOCK_NAME, NEW_DIR_STALE_S, NEW_PREFIX, OwnedDir, sweep_stale_dirs

ROOT = Path(__file__).resolve().parents[3]

# An engine's REPL in a process of its own: starts its worker, loads a context, prints its
# pid, workdir and worker pid, then on each line of stdin runs a cell and prints its output.
ENGINE = """
import asyncio, json, os, sys
from core.repl.client import ReplClient

async def main():
    async def no_sub_calls(request):
        return [{"error": "none here"} for _ in request.prompts]
    repl = ReplClient(on_sub_call=no_sub_calls)
    await repl.start()
    await repl.load_context([{"path": "a.txt", "text": "alpha " * 1000}])
    print(json.dumps({"pid": os.getpid(), "workdir": repl.workdir, "worker": repl.pid}), flush=True)
    loop = asyncio.get_running_loop()
    while (await loop.run_in_executor(None, sys.stdin.readline)).strip():
        result = await repl.execute("print(context.count('alpha'))", timeout_s=20)
        print(json.dumps({"stdout": result.stdout, "error": result.error}), flush=True)
    await repl.close()

asyncio.run(main())
"""

SWEEP = ("import json, os, sys\n"
         "from core.repl.workdirs import sweep_stale_dirs\n"
         "pid = int(sys.argv[1])\n"
         "try:\n    os.kill(pid, 0)\n    seen = True\n"
         "except ProcessLookupError:\n    seen = False\n"
         "print(json.dumps({'engine_pid_seen': seen, 'removed': sweep_stale_dirs()}))\n")


def env_for(tmp: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}


def start_engine(tmp: Path) -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen([sys.executable, "-c", ENGINE], cwd=ROOT, env=env_for(tmp), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline()
    assert line, proc.stderr.read()
    return proc, json.loads(line)


def sweep_elsewhere(tmp: Path, engine_pid: int, *, other_pid_namespace: bool) -> dict:
    """A sweep by another process; in a pid namespace of its own it cannot see the engine."""
    prefix = ["unshare", "--user", "--map-root-user", "--pid", "--fork"] if other_pid_namespace else []
    out = subprocess.run(prefix + [sys.executable, "-c", SWEEP, str(engine_pid)], cwd=ROOT, env=env_for(tmp),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def stop(proc: subprocess.Popen, worker: int | None) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=20)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        stream.close()
    if worker:
        try:
            os.kill(worker, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux's unshare")
def test_a_live_engines_dir_survives_a_sweep_that_cannot_see_its_pid(tmp_path):
    proc, info = start_engine(tmp_path)
    try:
        swept = sweep_elsewhere(tmp_path, info["pid"], other_pid_namespace=True)
        assert swept["engine_pid_seen"] is False          # the case a pid check gets wrong
        assert swept["removed"] == []
        assert os.path.isdir(info["workdir"]) and os.path.exists(os.path.join(info["workdir"], LOCK_NAME))
        # ... and the run goes on: a cell over the context written into that directory
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline()) == {"stdout": "1000\n", "error": None}
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0, proc.stderr.read()
        assert not os.path.exists(info["workdir"])        # close() removed it
    finally:
        stop(proc, info["worker"])


@pytest.mark.parametrize("other_pid_namespace", [False, True])
def test_a_killed_engines_dir_is_swept(tmp_path, other_pid_namespace):
    if other_pid_namespace and shutil.which("unshare") is None:
        pytest.skip("needs util-linux's unshare")
    proc, info = start_engine(tmp_path)
    try:
        assert sweep_elsewhere(tmp_path, info["pid"], other_pid_namespace=False)["removed"] == []
        proc.send_signal(signal.SIGKILL)                  # no close(): the lock goes with the process
        proc.wait(timeout=20)
        assert os.path.isdir(info["workdir"])
        swept = sweep_elsewhere(tmp_path, info["pid"], other_pid_namespace=other_pid_namespace)
        assert swept["removed"] == [info["workdir"]]
        assert not os.path.exists(info["workdir"])
    finally:
        stop(proc, info["worker"])


def test_this_process_keeps_its_own_dirs_and_half_made_ones(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    owned = OwnedDir.make()
    assert os.path.basename(owned.path).startswith(f"rlm-repl-{os.getpid()}-")
    assert sorted(os.listdir(owned.path)) == [LOCK_NAME]
    fresh = tmp_path / f"{NEW_PREFIX}{os.getpid()}-fresh"       # being made this instant
    fresh.mkdir()
    crashed = tmp_path / f"{NEW_PREFIX}12345-crashed"           # left between mkdtemp and the rename
    (crashed / LOCK_NAME).parent.mkdir()
    (crashed / LOCK_NAME).write_text("")
    old = time.time() - NEW_DIR_STALE_S - 60
    os.utime(crashed, (old, old))
    assert sweep_stale_dirs() == [str(crashed)]
    assert os.path.isdir(owned.path) and fresh.is_dir()
    owned.remove()
    owned.remove()                                               # twice is fine
    assert not os.path.exists(owned.path)


def test_removing_a_tree_another_sweep_is_removing_never_touches_its_parent(tmp_path):
    """Two sweeps removing the same directory at once: each one's rmtree finds entries the other
    took away. The retry once made the *parent* of a vanished entry 0700, and for the
    directory itself that parent is /tmp: the whole machine's /tmp became root-only and
    every other user's temp files failed (seen in CI: PermissionError in /tmp)."""
    import threading
    from core.repl.workdirs import remove_tree
    parent = tmp_path / "shared-tmp"
    parent.mkdir()
    os.chmod(parent, 0o1777)
    for round_ in range(30):
        tree = parent / f"rlm-repl-{round_}"
        for d in range(8):
            (tree / f"d{d}").mkdir(parents=True)
            for f in range(40):
                (tree / f"d{d}" / f"f{f}").write_bytes(b"x")
        gate = threading.Barrier(3)

        def sweep():
            gate.wait()
            remove_tree(str(tree))
        threads = [threading.Thread(target=sweep) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not tree.exists()
        assert oct(parent.stat().st_mode & 0o7777) == oct(0o1777), f"round {round_}"
