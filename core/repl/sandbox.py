"""Process hardening: the engine side (non-dumpable) and the worker side
(the sandbox built before any model code runs, and its report for hello_ok).

Worker side, `build()`, in this order (Linux; each layer is reported, a layer the
kernel refuses is skipped and named in the report's "missing" list):
  1. RLIMIT_AS (memory, per process) and RLIMIT_CORE 0.
  2. user + network + mount + PID + IPC namespaces (core/repl/confine.py); the process the
     engine started stays outside as a supervisor, PID 1 inside reaps and takes every
     descendant down with it.
  3. the mount view: a tmpfs root with read-only binds of the runtime, a size-limited
     tmpfs as the worker's directory; pivot_root.
  4. pid_max of the namespace, RLIMIT_NPROC, RLIMIT_FSIZE.
  5. every capability dropped; no_new_privs.
  6. Landlock (core/repl/landlock.py): read the runtime and the context, write only the
     worker's directory; no TCP; signal and abstract-socket scopes.
  7. seccomp (core/repl/seccomp.py): no sockets, ptrace, mounts, namespaces, io_uring,
     bpf, keyctl ...; without a PID namespace also no fork/exec.
  8. without namespaces (and on macOS/Windows, where it is the only layer): an audit
     hook refusing sockets, subprocesses, ctypes and /proc secrets. It keeps no state
     that model code can reach: its tables are constants of its own code object.

See docs/sandbox.md for what each platform has.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing imports re: not at every worker start)
    import ctypes
    from typing import Any

from core.repl.worker_log import get_logger

log = get_logger(__name__)

PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
# Set by build() when the mount view binds the runtime at neutral paths: how the worker starts
# again from /rlm (core/repl/neutral.py: prepare, exec_worker). Only the first interpreter has it.
second_start: dict[str, Any] | None = None
NPROC_LIMIT = 128          # tasks (threads count) of the sandbox's user namespace
DIR_LIMIT_MB = 512         # the worker's directory (tmpfs size) and RLIMIT_FSIZE

# Audit events refused by the fallback hook (see PEP 578 / the audit events table).
BLOCKED_AUDIT_EVENTS = frozenset({
    "socket.__new__", "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
    "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
    "os.fork", "os.forkpty", "os.startfile", "pty.spawn",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function",
    "ctypes.cdata", "ctypes.cdata/buffer",
    "webbrowser.open", "urllib.Request", "http.client.connect", "ftplib.connect",
    "smtplib.connect", "imaplib.open", "poplib.connect", "telnetlib.Telnet.open",
    "nntplib.connect",
})


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes       # here: the worker's second interpreter imports this module, not ctypes
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError as exc:
        log.warning("libc not loadable: %s", exc)
        return None


# ---------------------------------------------------------------- engine side

def harden_engine_process() -> str:
    """Mark the engine process non-dumpable (Linux), so a worker running as the
    same user cannot ptrace it or read its /proc/<pid>/mem or environ, where
    the API keys pass. Returns what was done, for the log."""
    libc = _libc()
    if libc is None:
        return f"nothing to do on {sys.platform}"
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        import ctypes
        err = ctypes.get_errno()
        return f"prctl(PR_SET_DUMPABLE, 0) failed: {os.strerror(err)}"
    return "prctl(PR_SET_DUMPABLE, 0): engine process is not dumpable"


def is_dumpable() -> bool | None:
    libc = _libc()
    if libc is None:
        return None
    return bool(libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0))


# ---------------------------------------------------------------- worker side

def set_limits(memory_limit_mb: int | None) -> dict[str, Any]:
    """RLIMIT_AS and RLIMIT_CORE. Returns what was set."""
    done: dict[str, Any] = {"memory_limit_mb": None, "core_dumps": True}
    try:
        import resource
    except ImportError:   # Windows
        return done
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        done["core_dumps"] = False
    except (ValueError, OSError) as exc:
        log.warning("RLIMIT_CORE not set: %s", exc)
    if memory_limit_mb:
        limit = int(memory_limit_mb) * 1024 * 1024
        try:
            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            # hard = soft: model code cannot raise it again (setrlimit(RLIMIT_AS, (-1, -1)) fails)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            done["memory_limit_mb"] = limit // (1024 * 1024)
        except (ValueError, OSError, AttributeError) as exc:
            log.warning("RLIMIT_AS not set: %s", exc)
    return done


def _set_rlimit(name: str, value: int) -> int | None:
    import resource
    which = getattr(resource, name)
    try:
        _soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))
        return value
    except (ValueError, OSError) as exc:
        log.warning("%s not set: %s", name, exc)
        return None


def die_with_parent() -> bool:
    """Linux: SIGKILL this process when the engine goes away."""
    libc = _libc()
    if libc is None:
        return False
    import _signal     # (as core/repl/confine.py: signal.py imports enum)
    return libc.prctl(PR_SET_PDEATHSIG, int(_signal.SIGKILL), 0, 0, 0) == 0


def no_new_privs() -> bool:
    libc = _libc()
    if libc is None:
        return False
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    return libc.prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1


def build(*, memory_limit_mb: int | None, allow_namespace: bool, fds: tuple[int, ...],
          context_dir: str | None, forward_signals: bool = False,
          dir_limit_mb: int = DIR_LIMIT_MB, audit_hook: bool = True) -> dict[str, Any]:
    """Build the sandbox around this process. With a PID namespace this forks twice and
    returns only in the worker proper. Returns the report sent in hello_ok."""
    from core.repl import sandbox_report
    info: dict[str, Any] = {"platform": "linux" if sys.platform.startswith("linux") else sys.platform,
                            "network": "audit-hook", "audit_hook": False, "hidden_dirs": []}
    info.update(set_limits(memory_limit_mb))
    if info["platform"] == "linux":
        _build_linux(info, allow_namespace=allow_namespace, fds=fds, context_dir=context_dir,
                     forward_signals=forward_signals, dir_limit_mb=dir_limit_mb)
    else:
        info["die_with_parent"] = False
    if not (info.get("namespaces") or {}).get("net") and audit_hook:
        install_audit_hook()
        info.update(network="audit-hook", audit_hook=True)
    info["pid_in_sandbox"] = os.getpid()
    info["missing"] = sandbox_report.missing(info)
    info["partial"] = sandbox_report.partial(info)
    info["full"] = not info["missing"]
    return info


def _build_linux(info: dict[str, Any], *, allow_namespace: bool, fds: tuple[int, ...],
                 context_dir: str | None, forward_signals: bool, dir_limit_mb: int) -> None:
    import time
    started = time.monotonic()
    steps: dict[str, float] = {}
    info["setup_ms"] = steps          # when each step was done, ms after the start (for the bench)

    def done(step: str) -> None:
        steps[step] = round((time.monotonic() - started) * 1000, 2)

    from core.repl import confine, landlock, seccomp
    workdir = os.getcwd()
    run_dirs, etc_files = confine.runtime_paths()
    done("paths")
    ns = confine.enter_namespaces() if allow_namespace else None
    done("namespaces")
    info["namespaces"] = {k: bool(ns and ns.get(k)) for k in ("user", "net", "mnt", "pid", "ipc")}
    if ns and ns.get("net"):
        info["network"] = "namespace"
    info["die_with_parent"] = die_with_parent()
    pid_ns = bool(ns and ns.get("pid"))
    group = None
    if pid_ns:
        from core.repl import cgroup
        group = cgroup.create(info.get("memory_limit_mb"), NPROC_LIMIT)
        done("cgroup")
        confine.split_pid1(fds, forward_signals, group)   # the supervisor never returns
        done("pid1")
    view: dict[str, Any] = {"enforced": False}
    global second_start
    second_start = None
    if ns and ns.get("mnt"):
        # With a PID namespace the worker proper starts its interpreter again from neutral paths
        # (core/repl/neutral.py), so the view binds the runtime there; without one it cannot
        # (no exec) and keeps the host's paths, which its interpreter was started from.
        from core.repl import neutral
        targets = neutral.targets(run_dirs, workdir, context_dir) if pid_ns else None
        prepared = neutral.prepare(targets) if targets else None
        try:
            view = confine.mount_view(confine.Plan(workdir=workdir, context_dir=context_dir, run=run_dirs,
                                                   files=etc_files, dir_limit_mb=dir_limit_mb,
                                                   targets=targets))
        except OSError as exc:
            if os.path.exists(confine.OLD_ROOT):           # half-pivoted: no sane way on
                sys.stderr.write(f"repl-worker: building the mount view failed: {exc}\n")
                os._exit(3)
            view = {"enforced": False, "reason": str(exc)}
    info["mount_view"] = view
    if view.get("neutral"):
        second_start = prepared
        workdir, context_dir = view["workdir"], view["context_dir"]
        run_dirs = [targets.get(d, d) for d in run_dirs]
    done("mount_view")
    nproc = _set_rlimit("RLIMIT_NPROC", NPROC_LIMIT) if pid_ns else None
    fsize = _set_rlimit("RLIMIT_FSIZE", dir_limit_mb * 1024 * 1024)
    info["capabilities"] = confine.drop_capabilities()
    info["no_new_privs"] = no_new_privs()
    done("limits_caps")
    dev = [f"/dev/{n}" for n in confine.DEV_NODES]
    write = [workdir] + (["/dev/shm"] if view.get("enforced") else [])
    read = [p for p in (context_dir, "/sys/devices/system/cpu") if p] + etc_files
    if view.get("neutral") and not getattr(sys, "frozen", False):
        read.append("/rlm/app")             # holds only core/: the import system lists it
    # /proc: only the worker's own entries. With a PID namespace the worker is not forked yet,
    # so PID 1 grants the namespace's /proc and the worker narrows it with a second ruleset.
    info["landlock"] = landlock.restrict(read + (["/proc"] if pid_ns else landlock.own_proc(os.getpid())),
                                         run_dirs, write, dev)
    info["landlock"]["proc"] = "own entries" if not pid_ns else "namespace"
    done("landlock")
    # Metadata calls (chmod, chown, utime) stay allowed only where the mount view makes every
    # path outside the worker's own directory read-only.
    info["seccomp"] = seccomp.install(allow_processes=pid_ns, metadata=bool(view.get("enforced")))
    done("seccomp")
    if group is not None:
        # Only now, just before PID 1 forks the worker: moving PID 1 into the cgroup waits
        # for an RCU grace period in the supervisor, overlapped with all the steps above.
        group.wait_admitted()
        done("cgroup_admitted")
    cg = group.report if group is not None else {
        "enabled": False, "reason": "no writable cgroup with the memory and pids controllers" if pid_ns
        else "not used without a PID namespace (no process can be started there)"}
    info["cgroup"] = cg
    scope = "cgroup (the worker and its children together)" if cg.get("memory_mb") else "per-process"
    info["limits"] = {"memory_mb": info.get("memory_limit_mb"), "memory_scope": scope,
                      "pids_max": cg.get("pids_max"), "nproc": nproc,
                      "fsize_mb": fsize // (1024 * 1024) if fsize else None,
                      "processes": "allowed" if pid_ns else "refused",
                      "dir_limit": "tmpfs" if view.get("dir_limit_mb") else "per-file (RLIMIT_FSIZE)",
                      "dir_limit_mb": dir_limit_mb}
    if pid_ns:
        confine.start_worker(fds, forward_signals)         # PID 1 reaps there; we are PID 2
        done("worker")
        if info["landlock"].get("enforced"):
            second = landlock.restrict(read + landlock.own_proc(os.getpid()), run_dirs, write, dev)
            info["landlock"]["proc"] = "own entries" if second.get("enforced") else \
                f"namespace ({second.get('reason')})"
            done("landlock_proc")


# The fallback hook's tables (bound into the hook as positional defaults: see below).
_PROC_SECRETS = frozenset({"environ", "mem", "root", "cwd", "fd", "map_files", "pagemap", "task",
                           "syscall", "auxv", "stack"})
_GUARDED_ATTRS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})


def _audit_hook(event, args, BLOCKED=BLOCKED_AUDIT_EVENTS, DENIED=PermissionError,  # noqa: N803
                GUARDED=_GUARDED_ATTRS, PROC=_PROC_SECRETS, GETCWD=os.getcwd, type=type,  # noqa: A002
                str=str, bytes=bytes, len=len, getattr=getattr, SELF=None):  # noqa: A002
    # Reads only its parameters: no global, no closure cell that model code could change.
    # SELF is this function's own code object (bound by install_audit_hook).
    if event in BLOCKED:
        raise DENIED(f"sandbox: {event} is not allowed in the REPL (no network, no subprocesses)")
    if event == "object.__setattr__":
        if len(args) > 1 and args[1] in GUARDED and getattr(args[0], "__code__", None) is SELF:
            raise DENIED(f"sandbox: changing the sandbox's audit hook ({args[1]}) is not allowed")
        return
    if event != "open" and event != "os.symlink" and event != "os.link":
        return
    if not args:
        return
    path = args[0]
    if type(path) is bytes:
        path = path.decode("utf-8", "surrogateescape")
    if type(path) is not str:
        return
    if not path.startswith("/"):
        path = GETCWD() + "/" + path
    parts = []
    for seg in path.split("/"):
        if seg == "" or seg == ".":
            continue
        if seg == "..":
            if parts:
                parts.pop()
            continue
        parts.append(seg)
    bad = "environ" in parts or "mem" in parts
    if not bad and parts and parts[0] == "proc":
        for seg in parts[2:]:
            if seg in PROC:
                bad = True
    if bad:
        raise DENIED(f"sandbox: opening {args[0]!r} is not allowed in the REPL")


def install_audit_hook() -> None:
    """Refuse network, process creation, ctypes and /proc secrets from now on.

    Model code cannot take it off: an audit hook cannot be removed once added, and this
    one reads only its positional defaults (an immutable tuple of immutable objects), not
    a global or a closure cell; replacing a function's __code__ or __defaults__ is itself
    refused. `sys.audit = ...` does not reach the hooks the interpreter calls. It is still
    not the boundary: Landlock and seccomp are, where the kernel has them."""
    import types
    code = _audit_hook.__code__
    defaults = _audit_hook.__defaults__[:-1] + (code,)
    hook = types.FunctionType(code, {}, "_audit_hook", defaults)
    sys.addaudithook(hook)
