"""Issue 24: in namespace mode nothing model code can read names a host path (the home
layout, the user's name, the app's checkout, the venv, the engine's temp directory).

One hostile ```repl cell through the real engine (litellm over HTTP to the scripted server)
and the real worker, in every mode the suite runs (and again as an ordinary user, through
test_unprivileged.py). It reads what such code reads first: sys.prefix, sys.path,
sys.executable, __file__ of the worker's modules, os.environ, /proc/self/exe, cmdline and
maps, os.getcwd(), tempfile.gettempdir(), the host name, the passwd entry, every string
reachable through gc (the sandbox report the worker holds, module specs, code objects'
file names), and reports which host markers it found. The markers reach the cell reversed,
so that the cell's own text does not hold them.

Namespace mode must show none. The fallback has no mount namespace: the interpreter runs
from the host's paths, and the report says so (mount_view.neutral is not set); that is the
"host paths" row of docs/sandbox.md."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import socket
import sys
import tempfile

import pytest

from core.config import RunConfig
from core.engine.run import Engine
from tests.integration.engine_helpers import code
from tests.security.conftest import MODES, worker_command
from tests.support.openai_server import ScriptedOpenAI

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROBE = r'''
import gc, json, os, pwd, sys, tempfile
reversed_markers = json.loads(@MARKERS@)      # never turned back: the cell holds no marker itself
seen = {"sys.prefix": sys.prefix, "sys.base_prefix": sys.base_prefix, "sys.executable": sys.executable,
        "sys.path": sys.path, "sys.argv": sys.argv, "sys.orig_argv": getattr(sys, "orig_argv", []),
        "environ": dict(os.environ), "cwd": os.getcwd(), "tempdir": tempfile.gettempdir(),
        "host name": os.uname().nodename, "passwd": list(pwd.getpwuid(os.getuid())),
        "modules": sorted(str(getattr(m, "__file__", "")) for m in list(sys.modules.values())),
        "exe": os.readlink("/proc/self/exe"), "cwd link": os.readlink("/proc/self/cwd")}
for name in ("cmdline", "maps"):
    try:
        seen[name] = open(f"/proc/self/{name}", errors="replace").read()
    except OSError as exc:
        seen[name] = str(exc)
strings = set()
for obj in gc.get_objects():
    items = obj.items() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple, set)) else ()
    for item in items:
        for x in (item if isinstance(obj, dict) else (item,)):
            if isinstance(x, str):
                strings.add(x)
    code_ = getattr(obj, "__code__", None)
    if code_ is not None:
        strings.add(code_.co_filename)
seen["gc strings"] = sorted(strings)
backwards = {k: json.dumps(v)[::-1] for k, v in seen.items()}
found = {r: [k for k, b in backwards.items() if r in b] for r in reversed_markers}
print("HOSTPATHS " + json.dumps({"found": {r: ks for r, ks in found.items() if ks}, "checked": len(strings),
                                 "host name": os.uname().nodename, "user": seen["passwd"][0]}))
'''


def _markers() -> list[str]:
    """Host paths and names the worker must not show in namespace mode."""
    out = [ROOT, os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix), sys.prefix,
           os.path.join(os.path.realpath(tempfile.gettempdir()), f"rlm-repl-{os.getpid()}-"),
           os.path.realpath(os.environ.get("HOME", "/nonexistent"))]
    user = pwd.getpwuid(os.getuid())
    if os.getuid() != 0:
        out += [user.pw_name, user.pw_dir]
    host = socket.gethostname()
    if len(host) > 3 and host not in ("localhost", "rlm"):
        out.append(host)
    return sorted({m for m in out if m and m not in ("/", "/usr", "/tmp", "/root")})


async def _run_cell(mode: str, server: ScriptedOpenAI, cell: str) -> tuple[object, list]:
    server.script("root", replies=[code(cell), "FINAL(done)"])
    events: list = []
    config = RunConfig(root_model="openai/root", sub_model="openai/root", api_base=server.url,
                       max_iterations=3, cell_timeout_s=60, max_retries=1, request_timeout_s=60, mode="rlm")
    engine = Engine(config, emit=events.append, key_for=lambda m: "sk-test", worker_command=worker_command(mode))
    result = await engine.run("Where am I?", [_Doc("a.txt", "alpha")])
    assert result.status == "finished", result
    return next(e for e in events if e.type == "CellExecuted"), events


async def _probe(mode: str, server: ScriptedOpenAI) -> dict:
    markers = json.dumps([m[::-1] for m in _markers()])
    cell, _events = await _run_cell(mode, server, PROBE.replace("@MARKERS@", repr(markers)))
    assert cell.error is None, cell.error
    line = next(ln for ln in cell.stdout.splitlines() if ln.startswith("HOSTPATHS "))
    seen = json.loads(line.split(" ", 1)[1])
    seen["found"] = {r[::-1]: keys for r, keys in seen["found"].items()}
    return seen


class _Doc:
    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text


@pytest.mark.parametrize("mode", MODES)
def test_model_code_sees_no_host_path_in_namespace_mode(mode):
    server = ScriptedOpenAI().start()
    try:
        seen = asyncio.run(_probe(mode, server))
    finally:
        server.stop()
    assert seen["checked"] > 1000            # the gc sweep saw the worker's strings
    if mode == "namespace":
        assert seen["found"] == {}, seen["found"]
        assert seen["host name"] == "rlm"                       # a UTS namespace of its own
        assert seen["user"] == ("root" if os.getuid() == 0 else "rlm")   # the view's /etc/passwd
    else:   # the fallback starts from the host's paths and says so (docs/sandbox.md)
        assert ROOT in seen["found"] and "sys.path" in seen["found"][ROOT], seen["found"]


STAT = r'''
import ctypes, os
os.stat(@TARGET@)        # what stat tells: that it exists, its size, owner, mode and times
print("STAT os.stat", os.stat(@TARGET@).st_size)
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
nr = {"x86_64": 262, "aarch64": 79}[os.uname().machine]     # newfstatat, as a raw syscall
if libc.syscall(nr, -100, @TARGET@.encode(), buf, 0) != 0:
    raise OSError(ctypes.get_errno(), "newfstatat: " + os.strerror(ctypes.get_errno()))
print("STAT raw", int.from_bytes(buf.raw[48:56], "little"))
'''


@pytest.mark.parametrize("mode", MODES)
def test_stat_of_a_host_path_is_refused_or_reported_partial(mode, tmp_path):
    """Fallback: Landlock has no right for stat and seccomp cannot refuse it without refusing
    fstat (glibc's fstat is newfstatat(fd, "", AT_EMPTY_PATH)): the layer is reported partial,
    in the report and in the warning the user reads. Namespace mode: the path is not there."""
    secret = tmp_path / "id_rsa"
    secret.write_text("k" * 1234)
    server = ScriptedOpenAI().start()
    try:
        cell, events = asyncio.run(_run_cell(mode, server, STAT.replace("@TARGET@", repr(str(secret)))))
    finally:
        server.stop()
    notices = " ".join(e.message for e in events if e.type == "Notice")
    if mode == "namespace":
        assert "FileNotFoundError" in (cell.error or ""), (cell.stdout, cell.error)
        assert "STAT" not in cell.stdout and "Partial" not in notices
        return
    assert "STAT os.stat 1234" in cell.stdout, (cell.stdout, cell.error)
    if mode == "landlock+seccomp":           # (the audit hook refuses ctypes first in "fallback")
        assert "STAT raw 1234" in cell.stdout, (cell.stdout, cell.error)
    assert "Partial: stat: model code can stat any path" in notices, notices
    assert "Partial: " in notices and "host paths: sys.prefix" in notices
