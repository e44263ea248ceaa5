"""Neutral paths in namespace mode: nothing the worker can read names a host path.

The worker's interpreter starts from the host's paths (the venv in the user's home, the
app's checkout, the engine's temp directory), and they stay in `sys.prefix`, `sys.path`,
`__file__`, `/proc/self/exe` and `/proc/self/maps` for the life of that interpreter. So the
mount view binds them at neutral places instead:

    the Python installation (sys.base_prefix)   /rlm/python
    the venv (sys.prefix), when there is one    /rlm/venv
    the app's code (core/) or frozen bundle      /rlm/app/core, /rlm/app
    any other directory on sys.path             /rlm/path/<n>
    the worker's directory (cwd, HOME, TMPDIR)  /rlm/work
    the engine's context files                  /rlm/context

(system directories, /usr and the /lib links, keep their names: they name no user), writes
an /etc/passwd and /etc/group naming the worker's uid "rlm", and the worker proper then
`execve`s the interpreter again from /rlm (`exec_worker`), after every layer is in place:
the second interpreter knows only the neutral paths. The sandbox report reaches it through
a pipe (`--sandbox-fd`), as does its sys.path.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing imports re: not at every worker start)
    from typing import Any

ROOT = "/rlm"
WORK = "/rlm/work"
CONTEXT = "/rlm/context"
APP = "/rlm/app"
SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc")
HOSTNAME = "rlm"
WORKER_CODE = "import sys; from core.repl.worker import main; sys.exit(main(sys.argv[1:]))"


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _real(path: str | None) -> str:
    return os.path.realpath(path) if path else ""


def targets(run_dirs: list[str], workdir: str, context_dir: str | None) -> dict[str, str]:
    """{host directory: where the mount view binds it}, for the worker's directory, the
    context and each runtime directory (core.repl.confine.runtime_paths: real paths)."""
    frozen = getattr(sys, "frozen", False)
    named = {_real(venv_dir()): f"{ROOT}/venv", _real(sys.base_prefix): f"{ROOT}/python"}
    if frozen:
        exe_dir = _real(os.path.dirname(sys.executable))
        named[exe_dir] = APP
        bundle = _real(getattr(sys, "_MEIPASS", ""))
        if bundle and not _inside(bundle, exe_dir):        # a one-file app unpacks elsewhere
            named[bundle] = f"{ROOT}/bundle"
    else:
        import core
        named[_real(os.path.dirname(os.path.abspath(core.__file__)))] = f"{APP}/core"
    out = {_real(workdir): WORK}
    if context_dir:
        out[_real(context_dir)] = CONTEXT
    others = 0
    for d in run_dirs:
        if any(_inside(d, s) for s in SYSTEM):
            out[d] = d
        elif d in named:
            out[d] = named[d]
        else:
            out[d] = f"{ROOT}/path/{others}"
            others += 1
    return out


def to_view(path: str, mapping: dict[str, str]) -> str | None:
    """Where the host `path` is in the view (None: not in it)."""
    real = _real(path)
    for host in sorted(mapping, key=len, reverse=True):
        if _inside(real, host):
            return mapping[host] + real[len(host):]
    return None


def passwd(uid: int, gid: int) -> tuple[str, str]:
    """/etc/passwd and /etc/group of the view: root, and the worker's uid as "rlm"."""
    users = ["root:x:0:0:root:/root:/usr/sbin/nologin"]
    groups = ["root:x:0:"]
    if uid != 0:
        users.append(f"rlm:x:{uid}:{gid}:rlm:{WORK}/home:/usr/sbin/nologin")
    if gid != 0:
        groups.append(f"rlm:x:{gid}:")
    return "\n".join(users) + "\n", "\n".join(groups) + "\n"


def venv_dir() -> str | None:
    """The venv the interpreter was started from (with -S, sys.prefix is the base's)."""
    if sys.prefix != sys.base_prefix:
        return sys.prefix
    top = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    return top if os.path.isfile(os.path.join(top, "pyvenv.cfg")) else None


def write_passwd(uid: int, gid: int) -> None:
    """In the new root, before it is made read-only: its /etc/passwd and /etc/group."""
    os.makedirs("/etc", mode=0o755, exist_ok=True)
    for name, text in zip(("passwd", "group"), passwd(uid, gid)):
        with open(f"/etc/{name}", "w") as f:
            f.write(text)


def site_dirs() -> list[str]:
    """The venv's site-packages (or the base's without a venv), also when the interpreter runs
    with -S: the directories only, no .pth file is run."""
    if getattr(sys, "frozen", False):
        return []
    venv = venv_dir()
    return [d for d in site_packages([venv] if venv else [sys.prefix, sys.exec_prefix]) if os.path.isdir(d)]


def site_packages(prefixes: list[str]) -> list[str]:
    """site.getsitepackages(prefixes) of Python 3.11, written out: `import site` costs the
    first interpreter ~4 ms of CPU, and in namespace mode nothing else there needs it."""
    libdirs = [sys.platlibdir] + (["lib"] if sys.platlibdir != "lib" else [])
    version = "python%d.%d" % sys.version_info[:2]
    out: list[str] = []
    for prefix in dict.fromkeys(p for p in prefixes if p):
        if os.sep == "/":
            out += [os.path.join(prefix, d, version, "site-packages") for d in libdirs]
        else:
            out += [prefix] + [os.path.join(prefix, d, "site-packages") for d in libdirs]
    return out


def prepare(mapping: dict[str, str]) -> dict[str, Any]:
    """Before the mount view (host paths still resolve): what the second interpreter needs,
    in view paths: its executable, environment and sys.path."""
    frozen = getattr(sys, "frozen", False)
    # (a frozen app's bootloader sets up its own sys.path from where it starts: kept as it is)
    path = [] if frozen else [to_view(e, mapping) for e in sys.path + site_dirs() if e and os.path.exists(e)]
    sys_path = [] if frozen else list(dict.fromkeys([APP] + [p for p in path if p]))
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": f"{WORK}/home", "TMPDIR": f"{WORK}/tmp",
           "TMP": f"{WORK}/tmp", "TEMP": f"{WORK}/tmp", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONNOUSERSITE": "1", "PYTHONIOENCODING": "utf-8", "MALLOC_ARENA_MAX": "2"}
    for name in ("LANG", "LC_ALL", "LC_CTYPE"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    if frozen:
        exe = to_view(sys.executable, mapping)
        argv = ["--repl-worker"]
    else:
        exe = to_view(getattr(sys, "_base_executable", None) or sys.executable, mapping)
        home = to_view(sys.base_prefix, mapping) or sys.base_prefix
        exec_home = to_view(sys.base_exec_prefix, mapping)
        env["PYTHONHOME"] = home if exec_home in (None, home) else f"{home}:{exec_home}"
        env["PYTHONPATH"] = APP
        libdir = os.path.join(sys.base_prefix, "lib")
        if home != "/usr" and os.path.isdir(libdir) and any(n.startswith("libpython") for n in os.listdir(libdir)):
            env["LD_LIBRARY_PATH"] = f"{home}/lib"      # a shared libpython found by a host RUNPATH
        argv = ["-S", "-P", "-c", WORKER_CODE]       # (-c: no runpy, as core/repl/client.py)
    return {"exe": exe, "argv": argv, "env": env, "sys_path": sys_path}


def exec_worker(info: dict[str, Any], prepared: dict[str, Any], fds: tuple[int, int],
                forward_signals: bool) -> None:
    """In the worker proper, once every layer holds: start the interpreter again from the
    neutral paths, as `core.repl.worker --sandbox-fd N` (never returns). The host paths of
    this interpreter die with it."""
    exe = prepared["exe"]
    if exe is None:
        raise OSError("the interpreter is not in the worker's view")
    # repr, read back with ast.literal_eval: json (with re) is not imported in this interpreter
    payload = repr({"info": info, "sys_path": prepared["sys_path"], "started": time.monotonic()}).encode()
    r, w = os.pipe()
    os.write(w, payload)          # small (a few kB): fits the pipe
    os.close(w)
    os.set_inheritable(r, True)
    for fd in fds:
        os.set_inheritable(fd, True)
    args = [exe, *prepared["argv"], "--fd-in", str(fds[0]), "--fd-out", str(fds[1]), "--sandbox-fd", str(r)]
    if forward_signals:
        args.append("--forward-signals")
    os.chdir(WORK)
    os.execve(exe, args, prepared["env"])


def read_payload(fd: int) -> dict[str, Any]:
    """In the second interpreter: the report and sys.path `exec_worker` sent."""
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    import ast
    payload = ast.literal_eval(b"".join(chunks).decode())
    info = payload["info"]
    steps = info.setdefault("setup_ms", {})
    if steps:
        steps["exec"] = round(max(steps.values()) + (time.monotonic() - payload["started"]) * 1000, 2)
    return payload


def site_builtins() -> None:
    """What `site` would have added for an interpreter started with -S: exit, quit, help,
    copyright, credits, license (model code sometimes calls exit())."""
    import site
    site.setquit()
    site.setcopyright()
    site.sethelper()
