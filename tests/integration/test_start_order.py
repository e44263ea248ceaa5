"""What a run's first model request waits for (issue 28: launch to first request).

- The REPL worker starts beside the root's first call: a worker that takes a second to
  start does not hold the first request back, and its first cell still runs in it. With
  `require_full_sandbox` the worker is started (and checked) first, as before: a box that
  lacks a layer is refused before any model call.
- `rlm-studio ask` against the user's own server never imports keyring (its calls carry no
  key); the keys of the old service name still move before the first keychain access
  (tests/unit/test_identity_migration.py::test_the_cli_says_so_on_stderr_once).

Real engine, real worker (behind a wrapper that holds its start, then execs the worker), the
scripted server on 127.0.0.1; the clocks compared are CLOCK_MONOTONIC, one for every process.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.engine.run import Engine
from core.repl.client import default_worker_command
from tests.integration.engine_helpers import KEY, Doc, code, config, of_type
from tests.support.openai_server import Delay

ROOT_DIR = Path(__file__).resolve().parents[2]

# The worker's start is held until the gate file exists (made by the test when what it waits
# for has happened) or hold_s (its 2nd argument) passed; then the marker says when the real worker was started.
SLOW_START = """
import os, sys, time
marker, gate, hold_s, real = sys.argv[1], sys.argv[1] + ".go", float(sys.argv[2]), sys.argv[3:]
deadline = time.monotonic() + hold_s
while not os.path.exists(gate) and time.monotonic() < deadline:
    time.sleep(0.01)
with open(marker, "w") as f:
    f.write(repr(time.monotonic()))
os.execv(real[0], real)
"""


@pytest.mark.parametrize("require_full_sandbox", [False, True])
async def test_the_first_request_does_not_wait_for_the_worker(server, tmp_path, require_full_sandbox):
    wrapper, marker = tmp_path / "slow_start.py", tmp_path / "worker-started"
    wrapper.write_text(SLOW_START)
    replies = iter([code("print(context.count('apple'))"), code("FINAL('50')")])

    def root(request):
        Path(f"{marker}.go").touch()            # the first request is in: the worker may go on
        return next(replies)
    server.script("root", fn=root)
    # Without the check the gate opens with the first request (however long a loaded machine
    # takes to send it); with it no request comes before the worker, which starts after 2 s.
    hold_s = "2" if require_full_sandbox else "60"
    events = []
    engine = Engine(config(server, require_full_sandbox=require_full_sandbox), emit=events.append,
                    key_for=lambda m: KEY,
                    worker_command=[sys.executable, str(wrapper), str(marker), hold_s, *default_worker_command()])
    result = await engine.run("How many apples?", [Doc("a.txt", "apple " * 50)])
    assert result.status == "finished" and result.answer == "50", result.error
    assert of_type(events, "CellExecuted")[0].stdout == "50\n"
    worker_up = float(marker.read_text())
    first = server.requests_for("root")[0].started
    if require_full_sandbox:
        assert first > worker_up          # checked first: refused before any call if it lacks a layer
    else:
        assert first < worker_up          # sent while the worker was still starting


async def test_an_answer_before_the_workers_handshake_still_records_its_sandbox(server, tmp_path):
    # FINAL with no code comes back while the worker (in the fallback: a layer missing) is
    # still starting: the run waits for the handshake, not the load, so its events (the
    # window, the CLI's warning line, the record) still say the sandbox is incomplete.
    wrapper, marker = tmp_path / "slow_start.py", tmp_path / "worker-started"
    wrapper.write_text(SLOW_START)
    server.script("root", replies=["FINAL(three)"])
    events = []

    def emit(event):
        events.append(event)
        if event.type == "RootReplied":
            Path(f"{marker}.go").touch()        # the answer is in: the worker may go on
    engine = Engine(config(server), emit=emit, key_for=lambda m: KEY,
                    worker_command=[sys.executable, str(wrapper), str(marker), "2", *default_worker_command(),
                                    "--no-namespace"])
    result = await engine.run("How many?", [Doc("a.txt", "apples: 3")])
    assert result.status == "finished" and result.answer == "three", result.error
    assert server.requests_for("root")[0].started < float(marker.read_text())   # answered first
    warnings = [e for e in of_type(events, "Notice") if "sandbox is incomplete" in e.message]
    assert len(warnings) == 1, [e.message for e in of_type(events, "Notice")]
    assert events.index(warnings[0]) < events.index(of_type(events, "RunFinished")[0])


async def test_a_stop_while_the_answer_waits_for_the_handshake_leaves_nothing(server, tmp_path):
    # The answer is in, the run waits for the worker's handshake (above), and Stop lands
    # there: the run ends as cancelled with its reply kept, and no worker process or
    # rlm-repl-* directory of this process is left.
    import asyncio
    from tests.support import leaks
    leaks.clean_up()
    wrapper, marker = tmp_path / "slow_start.py", tmp_path / "worker-started"
    wrapper.write_text(SLOW_START)
    server.script("root", replies=["FINAL(three)"])
    events = []

    def emit(event):
        events.append(event)
        if event.type == "RootReplied":
            asyncio.get_running_loop().call_later(0.3, engine.cancel)   # inside the 2 s start
    engine = Engine(config(server), emit=emit, key_for=lambda m: KEY,
                    worker_command=[sys.executable, str(wrapper), str(marker), "2", *default_worker_command(),
                                    "--no-namespace"])
    result = await engine.run("How many?", [Doc("a.txt", "apples: 3")])
    assert result.status == "cancelled", (result.status, result.error)
    assert not marker.exists()                       # stopped before the worker shook hands
    assert of_type(events, "RootReplied") and events[-1].type == "RunFailed"
    assert not await asyncio.to_thread(leaks.settle, 3.0) and not leaks.repl_dirs()


async def test_a_worker_that_dies_while_starting_ends_the_run_and_its_first_call(server, tmp_path):
    # The worker dies a second into its start, while the root's first call is still waiting
    # for a slow reply: the run fails as a worker that could not run, without that reply.
    wrapper = tmp_path / "dies.py"
    wrapper.write_text("import sys, time\ntime.sleep(1.0)\nsys.exit(3)\n")
    server.script("root", replies=[Delay(20, code("FINAL('late')"))])
    events = []
    engine = Engine(config(server), emit=events.append, key_for=lambda m: KEY,
                    worker_command=[sys.executable, str(wrapper)])
    started = time.monotonic()
    result = await engine.run("q", [Doc("a.txt", "alpha")])
    assert result.status == "failed" and "REPL worker could not run" in result.error, result.error
    assert time.monotonic() - started < 10              # not the 20 s of the reply
    [first] = server.requests_for("root")
    assert first.disconnected                            # the call in flight was cancelled
    assert events[-1].type == "RunFailed" and not of_type(events, "RootReplied")


PROBE = r"""
import atexit, json, sys
def report():
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("keyring", "secretstorage", "jeepney"))
    print("PROBE " + json.dumps(loaded), file=sys.stderr, flush=True)
atexit.register(report)
from app.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_an_ask_against_ones_own_server_never_imports_keyring(server, tmp_path):
    server.script("root", replies=[code("FINAL('3')")])
    (tmp_path / "notes.txt").write_text("apples: 3\n")
    env = {**os.environ, "RLMSTUDIO_DESKTOP_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT_DIR),
           "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    cmd = [sys.executable, "-c", PROBE, "ask", "How many apples?", str(tmp_path / "notes.txt"),
           "--root", "openai/root", "--sub", "openai/root", "--api-base", server.url, "--mode", "rlm", "--json"]
    proc = subprocess.run(cmd, cwd=ROOT_DIR, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["answer"] == "3"
    assert json.loads(proc.stderr.rsplit("PROBE ", 1)[1]) == []


def test_a_command_builds_only_its_own_parser_and_help_lists_them_all():
    code = ("import sys\nfrom app.cli import build_parser\n"
            "build_parser(['ask', 'q', 'x'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('app.cli_')))\n"
            "print(build_parser([]).format_help())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT_DIR, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT_DIR)})
    assert out.returncode == 0, out.stderr
    first, help_text = out.stdout.split("\n", 1)
    assert "app.cli_runs" not in first and "app.cli_eval" not in first and "app.cli_ask" in first
    for command in ("ask", "runs", "keys", "ingest", "eval", "scorecards", "models"):
        assert f"    {command} " in help_text
