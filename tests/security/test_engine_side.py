"""The engine's side of the box: the protocol line cap, refusing to run without the full
sandbox (client, setting, CLI flag), the warning line, and the spawn mode over standard
pipes that Windows and macOS use (tested here on Linux)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from pathlib import Path

from app.settings import Settings, build_run_config, load_settings, save_settings
from core.repl.client import ReplClient, SandboxIncomplete, default_worker_command
from tests.integration.engine_helpers import code

FALLBACK = default_worker_command() + ["--no-namespace"]


async def _echo(request):
    return [{"ok": f"echo:{p}"} for p in request.prompts]


def _rss_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def test_a_300_mb_protocol_line_is_dropped_and_the_worker_restarted():
    repl = ReplClient(on_sub_call=_echo, memory_limit_mb=2048)
    await repl.start()
    try:
        await repl.load_context([{"path": "a.txt", "text": "alpha"}])
        await repl.execute("x = 1", timeout_s=20)
        before = _rss_mb()
        r = await repl.execute("import os, sys\nfd = int(sys.argv[sys.argv.index('--fd-out') + 1])\n"
                               "os.write(fd, b'[' + b'x' * (300 << 20) + b']\\n')", timeout_s=60)
        growth = _rss_mb() - before
        assert r.fault == "crash" and r.restarted
        assert "protocol line longer than 16 MB" in r.error
        assert growth < 100, f"engine grew {growth:.0f} MB"
        after = await repl.execute("print(len(context))", timeout_s=20)
        assert after.stdout.strip() == str(len("=== a.txt ===\nalpha\n\n"))
    finally:
        await repl.close()


async def test_a_worker_too_large_sub_call_comes_back_as_a_clear_error():
    repl = ReplClient(on_sub_call=_echo, memory_limit_mb=2048)
    await repl.start()
    try:
        r = await repl.execute("try:\n    llm_query('x' * (20 << 20))\nexcept Exception as e:\n"
                               "    print(type(e).__name__, e)", timeout_s=30)
        assert "over the protocol's 16 MB line cap" in r.stdout and r.fault is None
    finally:
        await repl.close()


async def test_require_full_sandbox_refuses_before_any_model_code():
    repl = ReplClient(on_sub_call=_echo, worker_command=FALLBACK, require_full_sandbox=True)
    with pytest.raises(SandboxIncomplete) as info:
        await repl.start()
    assert info.value.missing == ["namespaces"]
    assert "No model code was run" in str(info.value) and "namespaces" in str(info.value)
    await repl.close()


async def test_full_sandbox_here_starts_when_required():
    probe = ReplClient(on_sub_call=_echo)
    await probe.start()
    full = probe.sandbox["full"]
    await probe.close()
    if not full:
        pytest.skip(f"this host lacks {probe.sandbox['missing']}")
    repl = ReplClient(on_sub_call=_echo, require_full_sandbox=True)
    await repl.start()
    try:
        assert (await repl.execute("print(6 * 7)", timeout_s=20)).stdout.strip() == "42"
    finally:
        await repl.close()


def test_the_setting_reaches_the_run_config(tmp_path):
    path = tmp_path / "settings.json"
    save_settings(Settings(root_model="openai/root", require_full_sandbox=True), path)
    assert json.loads(path.read_text())["require_full_sandbox"] is True
    settings = load_settings(path)
    assert settings.require_full_sandbox is True
    assert build_run_config(settings).require_full_sandbox is True
    assert build_run_config(Settings(root_model="openai/root")).require_full_sandbox is False


def _ask(server, tmp_path, *extra):
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / "one.txt").write_text("apples: 3\n")
    env = dict(os.environ, RLMSTUDIO_DESKTOP_HOME=str(tmp_path / "home"), OPENAI_API_KEY="sk-cli",
               PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring", RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE="1")
    cmd = [sys.executable, "-m", "app.main", "ask", "How many?", str(folder), "--root", "openai/root",
           "--sub", "openai/root", "--api-base", server.url, *extra]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def test_cli_require_sandbox_refuses_and_says_what_is_missing(server, tmp_path):
    server.script("root", replies=[code("print('model code ran')"), "FINAL(three)"])
    proc = _ask(server, tmp_path, "--require-sandbox")
    assert proc.returncode == 1, proc.stderr
    assert "the full REPL sandbox is required but namespaces is missing" in proc.stderr
    assert server.requests_for("root") == []          # refused before the root was even asked


def test_cli_prints_one_warning_line_when_a_layer_is_missing(server, tmp_path):
    server.script("root", replies=["FINAL(three)"])
    proc = _ask(server, tmp_path, "--quiet")
    assert proc.returncode == 0 and proc.stdout.strip() == "three"
    warnings = [ln for ln in proc.stderr.splitlines() if "sandbox is incomplete" in ln]
    assert len(warnings) == 1 and warnings[0].startswith("rlm-studio: warning: The REPL sandbox")
    assert "missing: namespaces" in warnings[0]


@pytest.mark.parametrize("namespace", [True, False], ids=["namespace", "fallback"])
async def test_spawn_over_standard_pipes(namespace):
    command = default_worker_command() + ([] if namespace else ["--no-namespace"])
    repl = ReplClient(on_sub_call=_echo, worker_command=command, spawn="stdio", interrupt_grace_s=2.0)
    await repl.start()
    try:
        assert repl.sandbox["namespaces"]["pid"] is namespace
        await repl.load_context([{"path": "a.txt", "text": "alpha"}])
        r = await repl.execute("import os\nos.write(1, b'C-level noise\\n')\nprint(llm_query('hi'), len(context))",
                               timeout_s=20)
        assert r.stdout.strip() == "echo:hi 21" and r.error is None
        # A timeout interrupts the cell with SIGINT sent to the process (no process group here).
        t = await repl.execute("import time\nx = 5\ntime.sleep(30)", timeout_s=1.0)
        assert t.fault == "timeout" and "KeyboardInterrupt" in (t.error or "") and not t.restarted
        assert (await repl.execute("print(x)", timeout_s=10)).stdout.strip() == "5"
    finally:
        path = await repl.close()
    assert path == "graceful"


ENGINE = r"""
import asyncio, sys
from core.repl.client import ReplClient, default_worker_command
async def noop(request):
    return []
async def main():
    repl = ReplClient(on_sub_call=noop, worker_command=default_worker_command() + sys.argv[1:])
    await repl.start()
    await repl.execute("x = 1", timeout_s=20)
    print(repl.pid, flush=True)
    await asyncio.sleep(60)
asyncio.run(main())
"""


@pytest.mark.parametrize("mode", ["namespace", "fallback"])
def test_the_worker_dies_with_a_killed_engine(mode):
    """PR_SET_PDEATHSIG survives the sandbox (in the fallback it is set before the audit
    hook, which would refuse the ctypes call); in namespace mode the supervisor goes and
    PID 1 and the worker follow."""
    import signal
    import time
    extra = [] if mode == "namespace" else ["--no-namespace"]
    engine = subprocess.Popen([sys.executable, "-c", ENGINE, *extra], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])))
    try:
        worker_pid = int(engine.stdout.readline())
        assert os.path.exists(f"/proc/{worker_pid}")
        engine.send_signal(signal.SIGKILL)
        engine.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(worker_pid):
            time.sleep(0.05)
        assert not _alive(worker_pid), "the worker outlived the engine"
    finally:
        engine.kill()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


async def test_a_rebuilt_repl_for_a_follow_up_refuses_a_degraded_sandbox_when_required(server, tmp_path):
    """A follow-up whose REPL is rebuilt re-runs the recorded cells and then the new ones:
    with require_full_sandbox it is refused before any of that code runs, like a fresh run."""
    from dataclasses import replace

    from app.run_service import RunRequest, RunService
    from core.ingest.model import Document
    from core.store import RunStore
    from tests.integration.engine_helpers import config
    server.script("root", replies=[code("x = 41\nprint(x)"), code("FINAL(str(x + 1))"),
                                   code("FINAL(str(x + 2))")])
    store = RunStore.open(tmp_path / "runs.db")
    doc = Document(path="a.txt", source_path=str(tmp_path / "a.txt"), format="text", text="alpha", chars=5,
                   size=5, sha256="0" * 64)
    service = RunService(store=store, worker_command=FALLBACK)
    first = await service.run(RunRequest.ask("What is x?", [doc], config(server)))
    assert first.status == "finished" and first.answer == "42"
    calls = len(server.history)
    strict = replace(config(server), require_full_sandbox=True)
    with pytest.raises(SandboxIncomplete) as info:
        await service.run(RunRequest.rebuild(first.run_id, "And x + 2?", strict))
    assert info.value.missing == ["namespaces"] and len(server.history) == calls
    relaxed = await service.run(RunRequest.rebuild(first.run_id, "And x + 2?", config(server)))
    assert relaxed.status == "finished" and relaxed.answer == "43"      # x came back from the record
    store.close()


@pytest.mark.parametrize("mode", ["namespace", "fallback"])
async def test_without_the_watchdog_the_box_wide_limit_is_missing_and_required_refuses(mode):
    # issue 24: where neither a memory cgroup (or the worker's own tmpfs) nor the engine's
    # watchdog holds, the limit is named missing, told to the user, and a required full
    # sandbox refuses. This host (cgroup v1) has no memory cgroup; the fallback no tmpfs.
    command = default_worker_command() + ([] if mode == "namespace" else ["--no-namespace"])
    probe = ReplClient(on_sub_call=_echo, worker_command=command, watchdog=False)
    await probe.start()
    report = probe.sandbox
    await probe.close()
    layer = "memory limit" if mode == "namespace" else "directory limit"
    if mode == "namespace" and (report.get("cgroup") or {}).get("memory_mb"):
        pytest.skip("this host gives the worker a memory cgroup: nothing for the watchdog to do")
    assert layer in report["missing"] and not report["full"]
    from core.repl.sandbox_report import describe
    assert layer in describe(report)
    repl = ReplClient(on_sub_call=_echo, worker_command=command, watchdog=False, require_full_sandbox=True)
    with pytest.raises(SandboxIncomplete) as info:
        await repl.start()
    assert layer in info.value.missing and "No model code was run" in str(info.value)
    await repl.close()
    watched = ReplClient(on_sub_call=_echo, worker_command=command)
    await watched.start()
    try:
        assert layer not in watched.sandbox["missing"]
        key = "memory" if mode == "namespace" else "dir"
        assert watched.sandbox["watchdog"][key] is True
    finally:
        await watched.close()
