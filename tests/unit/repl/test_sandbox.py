"""The worker's sandbox: environment, network, subprocesses, shutdown, temp dir."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from core.repl.client import sweep_stale_dirs

from .conftest import PEAK_KB, WORKER


async def run(repl, code: str, timeout_s: float = 20.0):
    return await repl.execute(code, timeout_s=timeout_s)


SECRETS = {"OPENAI_API_KEY": "sk-secret", "ANTHROPIC_API_KEY": "sk-ant", "AWS_SECRET_ACCESS_KEY": "aws",
           "AZURE_API_KEY": "az", "GEMINI_API_KEY": "g", "HTTPS_PROXY": "http://proxy:1",
           "OPENAI_API_BASE": "http://x"}


async def test_worker_environment_has_no_keys_and_its_own_dirs(make_repl, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    repl = await make_repl()
    r = await run(repl, "import os, json\nprint(json.dumps({'env': dict(os.environ), 'cwd': os.getcwd()}))")
    data = json.loads(r.stdout)
    env = data["env"]
    for name in SECRETS:
        assert name not in env
    assert not [k for k in env if "KEY" in k or k.startswith(("OPENAI", "ANTHROPIC", "AWS", "AZURE"))]
    assert "sk-secret" not in r.stdout
    # namespace mode: the worker's directory is bound at a neutral path (core/repl/neutral.py)
    root = "/rlm/work" if repl.sandbox["mount_view"].get("neutral") else os.path.realpath(repl.workdir)
    assert os.path.realpath(data["cwd"]).startswith(root)
    assert os.path.realpath(env["HOME"]).startswith(root) and os.path.realpath(env["TMPDIR"]).startswith(root)
    with open(f"/proc/{repl.pid}/environ", "rb") as f:
        assert b"sk-secret" not in f.read()


@pytest.mark.parametrize("mode", ["default", "audit-hook"])
async def test_network_is_refused(make_repl, mode):
    command = WORKER + (["--no-namespace"] if mode == "audit-hook" else [])
    repl = await make_repl(worker_command=command)
    if mode == "audit-hook":
        assert repl.sandbox["network"] == "audit-hook"
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        r = await run(repl, f"import socket\ntry:\n"
                            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
                            f"    print('CONNECTED')\n"
                            f"except OSError as e:\n    print('refused:', type(e).__name__, e)")
        assert r.stdout.startswith("refused:"), r.stdout
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    print(f"\n{repl.sandbox['network']}: {r.stdout.strip()}")


async def test_audit_hook_refuses_subprocesses_and_ctypes(make_repl):
    repl = await make_repl(worker_command=WORKER + ["--no-namespace"])
    r = await run(repl, "import subprocess, os\nfor f in (lambda: subprocess.run(['true']), "
                        "lambda: os.system('true'), lambda: os.fork(), "
                        "lambda: __import__('ctypes').CDLL(None)):\n"
                        "    try:\n        f()\n        print('ran')\n"
                        "    except PermissionError as e:\n        print('refused')")
    assert r.stdout.split() == ["refused"] * 4


async def test_namespaces_used_where_the_kernel_allows_it(make_repl):
    repl = await make_repl()
    unshare = subprocess.run(["unshare", "--user", "--net", "true"], capture_output=True)
    if unshare.returncode != 0:
        pytest.skip("unprivileged user namespaces are not available here")
    assert repl.sandbox["network"] == "namespace" and repl.sandbox["audit_hook"] is False
    assert repl.sandbox["namespaces"] == {"user": True, "net": True, "mnt": True, "pid": True, "ipc": True}


def test_harden_engine_process_makes_it_non_dumpable():
    probe = subprocess.run(
        [sys.executable, "-c", "from core.repl.sandbox import harden_engine_process, is_dumpable; "
         "before = is_dumpable(); print(harden_engine_process()); print(before, is_dumpable())"],
        capture_output=True, text=True, timeout=30)
    did, flags = probe.stdout.splitlines()
    if sys.platform.startswith("linux"):
        assert "not dumpable" in did and flags == "True False"


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_close_graceful_removes_the_temp_dir(make_repl):
    repl = await make_repl()
    workdir, pid = repl.workdir, repl.pid
    assert os.path.isdir(workdir)
    assert await repl.close() == "graceful"
    assert repl.shutdown_path == "graceful" and not os.path.exists(workdir) and _gone(pid)
    assert await repl.close() == "graceful"      # idempotent


async def _stuck(repl, ignore_term: bool) -> asyncio.Task:
    """Start a cell stuck in C code holding the GIL (the reader thread cannot answer)."""
    code = ("import re, signal\n" + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "")
            + "llm_query('stuck')\nre.match(r'(a+)+$', 'a' * 64 + 'b')")
    calls = repl.on_sub_call.history
    task = asyncio.create_task(repl.execute(code, timeout_s=60))
    deadline = time.monotonic() + 10
    while not calls and time.monotonic() < deadline:   # (the worker's directory is its own tmpfs)
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)
    return task


async def test_close_terminates_a_worker_stuck_in_c_code(make_repl):
    repl = await make_repl()
    task = await _stuck(repl, ignore_term=False)
    pid = repl.pid
    assert await repl.close(grace_s=0.5) == "terminate"
    assert (await task).error_type == "ReplClosed" and _gone(pid)


async def test_close_kills_a_worker_ignoring_sigterm(make_repl):
    # Without namespaces the worker is the process we started: SIGTERM ignored, SIGKILL follows.
    repl = await make_repl(worker_command=WORKER + ["--no-namespace"])
    task = await _stuck(repl, ignore_term=True)
    pid = repl.pid
    assert await repl.close(grace_s=0.5) == "kill"
    assert (await task).fault == "crash" and _gone(pid)


async def test_sigterm_takes_the_namespace_down_even_if_model_code_ignores_it(make_repl):
    # In a PID namespace SIGTERM reaches the supervisor outside it, which kills PID 1.
    repl = await make_repl()
    if not repl.sandbox["namespaces"]["pid"]:
        pytest.skip("no PID namespace here")
    task = await _stuck(repl, ignore_term=True)
    pid = repl.pid
    assert await repl.close(grace_s=0.5) == "terminate"
    assert (await task).fault == "crash" and _gone(pid)


async def test_forty_mb_context_load_time(make_repl):
    docs = [{"path": f"doc{i:02}.txt", "text": (f"document {i} " + "lorem ipsum dolor " * 58_000)[:1_000_000]}
            for i in range(40)]
    repl = await make_repl(docs=None)
    started = time.monotonic()
    await repl.load_context(docs)
    loaded = time.monotonic() - started
    r = await run(repl, PEAK_KB + "print(len(context), len(documents), "
                        "peak_kb())")
    first_cell = time.monotonic() - started
    chars, count, peak_kb = map(int, r.stdout.split())
    assert count == 40 and chars == sum(len(f"=== {d['path']} ===\n") + len(d["text"]) + 2 for d in docs)
    print(f"\n40 MB context: load {loaded:.3f} s, first cell result {first_cell:.3f} s, "
          f"worker peak RSS {peak_kb / 1024:.0f} MB")


def test_stale_dirs_of_dead_engines_are_swept(tmp_path, monkeypatch):
    # directories without a lock file (made before core/repl/workdirs.py's lock) go by the pid
    # in their name; the lock's own tests are in test_workdirs.py
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f"rlm-repl-{dead}-abc"
    (stale / "worker-1" / "home").mkdir(parents=True)
    (stale / "context.txt").write_text("x")
    (stale / "context.txt").chmod(0o444)
    live = tmp_path / f"rlm-repl-{os.getppid()}-def"
    live.mkdir()
    other = tmp_path / "rlm-repl-notapid"
    other.mkdir()
    assert sweep_stale_dirs() == [str(stale)]
    assert not stale.exists() and live.exists() and other.exists()
