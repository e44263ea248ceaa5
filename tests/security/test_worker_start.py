"""Issue 24: what the worker's start costs is what it imports. In namespace mode two
interpreters start (core/repl/boot.py builds the box, core/repl/neutral.py starts the worker
again from /rlm), so each of them must import only what it needs: no runpy (-c, not -m),
no enum (the box uses _signal), no site, no argparse (core/repl/worker_args.py), and in the
worker proper no pathlib or dataclasses (core/repl/context_file.py).

The real worker command, real pipes, the real box; the first interpreter runs with
`-X importtime`, which it does not pass on, so its stderr is the list of its own imports.
Figures: tests/bench/bench_sandbox.py, docs/performance.md."""

from __future__ import annotations

import json
import os
import select
import site
import subprocess
import sys

import pytest

from core.repl import neutral
from core.repl import protocol as P
from core.repl.client import ReplClient, default_worker_command, worker_environment
from tests.security.conftest import worker_command

# Modules the box's first interpreter must not import: each cost 2-10 ms of CPU per start on
# the 2-core CI machine (runpy: -m; enum: signal.py; the rest: argparse, site, typing). The
# worker proper: no runpy, argparse (and what it pulls in), pathlib or dataclasses (context_file),
# typing; logging comes just after hello_ok.
NOT_IN_THE_BOX = ("runpy", "enum", "signal", "site", "argparse", "gettext", "locale", "shutil",
                  "re", "typing", "collections", "contextlib", "importlib.util", "logging", "pathlib",
                  "dataclasses")
NOT_IN_THE_WORKER = ("runpy", "argparse", "gettext", "locale", "shutil", "pathlib", "dataclasses", "inspect",
                     "typing")


def namespaces_available() -> bool:
    return subprocess.run(["unshare", "--user", "--net", "true"], capture_output=True).returncode == 0


def start_raw(tmp_path, python_flags: list[str], flags: list[str]) -> tuple[dict | None, str, int]:
    """Start the worker as the engine does (its pipes on fds, its own cwd), say hello, close its
    input; returns (hello_ok or None, everything it wrote on stdout and stderr, exit status)."""
    cwd = tmp_path / "worker-1"
    for d in ("home", "tmp"):
        (cwd / d).mkdir(parents=True)
    cmd = default_worker_command()
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    proc = subprocess.Popen([cmd[0], *python_flags, *cmd[1:], *flags, "--context-dir", str(tmp_path),
                             "--fd-in", str(to_r), "--fd-out", str(from_w)],
                            pass_fds=(to_r, from_w), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, cwd=str(cwd), start_new_session=True,
                            env=worker_environment(str(cwd / "home"), str(cwd / "tmp")))
    os.close(to_r)
    os.close(from_w)
    reply = None
    try:
        os.write(to_w, P.encode({"id": "e1", "type": P.HELLO, "version": P.PROTOCOL_VERSION}))
        line = b""
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([from_r], [], [], 30)
            chunk = os.read(from_r, 65536) if ready else b""
            if not chunk:
                break
            line += chunk
        if line:
            reply = json.loads(line)
    finally:
        os.close(to_w)                 # end of input: the worker leaves
        output = proc.communicate(timeout=30)[0].decode("utf-8", "replace")
        os.close(from_r)
    return reply, output, proc.returncode


def imported(output: str) -> set[str]:
    """The module names of `-X importtime` lines."""
    return {line.rsplit("|", 1)[1].strip() for line in output.splitlines() if line.startswith("import time:")
            and "|" in line} - {"imported package"}


def test_the_first_interpreter_of_namespace_mode_imports_only_what_the_box_needs(tmp_path):
    if not namespaces_available():
        pytest.skip("unprivileged user namespaces are not available here: no second start")
    reply, output, code = start_raw(tmp_path, ["-X", "importtime"], [])
    assert reply is not None and reply["type"] == P.HELLO_OK, output[-3000:]
    box = reply["sandbox"]
    assert box["mount_view"].get("neutral") is True and box["missing"] == [], box
    assert code == 0, output[-3000:]
    modules = imported(output)
    assert {"core.repl.confine", "core.repl.seccomp", "core.repl.landlock", "ctypes"} <= modules, output[-3000:]
    assert "core.repl.worker" not in modules          # the worker proper is the second interpreter
    assert sorted(m for m in NOT_IN_THE_BOX if m in modules) == []


@pytest.mark.parametrize("mode", ["namespace", "fallback"])
async def test_the_worker_proper_imports_only_what_it_needs(mode):
    if mode == "namespace" and not namespaces_available():
        pytest.skip("unprivileged user namespaces are not available here")

    async def no_calls(request):
        return []
    repl = ReplClient(on_sub_call=no_calls, worker_command=worker_command(mode))
    try:
        await repl.start()
        r = await repl.execute(f"import sys\nprint(sorted(m for m in {NOT_IN_THE_WORKER!r} if m in sys.modules))",
                               timeout_s=30)
        assert r.error is None, r
        assert r.stdout.strip() == "[]"
        r = await repl.execute("import re, json, csv, statistics\n"
                               "print(statistics.mean(json.loads('[1, 2, 3]')), re.sub('a', 'b', 'aa'))",
                               timeout_s=30)
        assert r.stdout.strip() == "2 bb", r                 # ordinary work still runs
        r = await repl.execute("import logging\nlogging.warning('to the log')\n"
                               "logging.getLogger('lib').warning('to the log too')\nprint('ok')", timeout_s=30)
        assert r.stdout.strip() == "ok" and "to the log" not in r.stderr, r   # the worker's log, as before
    finally:
        await repl.close()


@pytest.mark.parametrize("flags, told", [
    (["--bogus"], "unknown argument '--bogus'"),
    (["--memory-limit-mb", "lots"], "--memory-limit-mb takes a number, got 'lots'"),
    (["--dir-limit-mb=9x"], "--dir-limit-mb takes a number, got '9x'"),
    (["--memory-limit-mb", "--no-namespace"], "--memory-limit-mb needs a value"),
])
def test_a_wrong_worker_flag_is_told_before_any_box_is_built(tmp_path, flags, told):
    reply, output, code = start_raw(tmp_path, [], flags)
    assert reply is None and code == 1
    assert output.strip().splitlines()[-1].startswith(f"repl-worker: {told}"), output


def test_the_worker_without_its_pipes_is_told(tmp_path):
    proc = subprocess.run([*default_worker_command(), "--no-namespace"], capture_output=True, text=True,
                          timeout=30, cwd=str(tmp_path), env=worker_environment(str(tmp_path), str(tmp_path)))
    assert proc.returncode == 1
    assert proc.stderr.strip() == "repl-worker: --fd-in and --fd-out are required without --stdio"


def test_site_packages_are_those_site_would_name():
    venv = neutral.venv_dir()
    prefixes = [[venv]] if venv else []
    for given in prefixes + [[sys.prefix, sys.exec_prefix], [sys.base_prefix]]:
        assert neutral.site_packages(given) == site.getsitepackages(given)
