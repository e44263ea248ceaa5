"""Process hardening: the engine side (non-dumpable) and the worker side
(resource limits, network isolation, audit hook).

Worker side, in this order, before any model code runs:
  1. `set_limits`: RLIMIT_AS (memory) and RLIMIT_CORE 0 (no core dumps).
  2. `isolate_network`: an unprivileged user + network (+ mount) namespace via
     libc.unshare. The new network namespace has only a loopback that is down:
     no route anywhere, not even to 127.0.0.1 of the host. With the mount
     namespace we also cover the directories that hold the user's session
     sockets (D-Bus, X11, the keyring daemon), which a network namespace does not
     isolate because they are files.
  3. Where the namespace is refused (no unprivileged user namespaces, not Linux,
     a multi-threaded caller), `install_audit_hook`: a sys.addaudithook hook that
     refuses sockets, subprocesses, fork/exec and ctypes calls. This is best
     effort: an audit hook is not a security boundary against determined code.

Everything here uses only the standard library (ctypes), and fails soft: a step
that is not possible is reported, not raised.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
from typing import Any

log = logging.getLogger(__name__)

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MS_NOSUID = 0x2
MS_NODEV = 0x4
PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4

# Directories holding per-user session sockets (D-Bus session bus with the
# Secret Service, X11, ssh-agent, gpg-agent ...). Hidden under an empty tmpfs
# inside the worker's mount namespace, when it has one.
SESSION_SOCKET_DIRS = ("/run/user", "/var/run/user", "/run/dbus", "/var/run/dbus",
                       "/tmp/.X11-unix", "/tmp/.ICE-unix", "/run/systemd")

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
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
            done["memory_limit_mb"] = limit // (1024 * 1024)
        except (ValueError, OSError, AttributeError) as exc:
            log.warning("RLIMIT_AS not set: %s", exc)
    return done


def die_with_parent() -> bool:
    """Linux: SIGKILL this process when the engine goes away."""
    libc = _libc()
    if libc is None:
        return False
    import signal
    return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0


def _write_proc(path: str, text: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(text)
        return True
    except OSError as exc:
        log.debug("could not write %s: %s", path, exc)
        return False


def _hide_session_sockets(libc: ctypes.CDLL, keep: str) -> list[str]:
    """In a fresh mount namespace: cover SESSION_SOCKET_DIRS with empty tmpfs
    mounts (except a directory that holds `keep`, the worker's own cwd)."""
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        log.debug("mount --make-rprivate / failed: %s", os.strerror(ctypes.get_errno()))
        return []
    hidden = []
    keep = os.path.realpath(keep)
    for path in SESSION_SOCKET_DIRS:
        if not os.path.isdir(path) or os.path.islink(path):
            continue
        real = os.path.realpath(path)
        if keep == real or keep.startswith(real + os.sep) or real in hidden:
            continue
        rc = libc.mount(b"tmpfs", real.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"size=64k,mode=0755")
        if rc == 0:
            hidden.append(real)
        else:
            log.debug("could not hide %s: %s", real, os.strerror(ctypes.get_errno()))
    return hidden


def try_network_namespace() -> dict[str, Any] | None:
    """Enter a new user + network (+ mount) namespace. Must run while the
    process has a single thread. Returns details, or None when refused."""
    libc = _libc()
    if libc is None:
        return None
    uid, gid = os.getuid(), os.getgid()
    with_mounts = True
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) != 0:
        with_mounts = False
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
            log.info("unshare(CLONE_NEWUSER|CLONE_NEWNET) refused: %s",
                     os.strerror(ctypes.get_errno()))
            return None
    # Keep our own uid/gid inside the namespace (otherwise we would be "nobody").
    mapped = (_write_proc("/proc/self/setgroups", "deny")
              and _write_proc("/proc/self/uid_map", f"{uid} {uid} 1")
              and _write_proc("/proc/self/gid_map", f"{gid} {gid} 1"))
    hidden = _hide_session_sockets(libc, os.getcwd()) if with_mounts else []
    return {"uid_mapped": mapped, "hidden_dirs": hidden}


def install_audit_hook() -> None:
    """Refuse network, process creation and ctypes from now on (best effort)."""
    blocked = BLOCKED_AUDIT_EVENTS

    def hook(event: str, args: tuple) -> None:
        if event in blocked:
            raise PermissionError(f"sandbox: {event} is not allowed in the REPL "
                                  "(no network, no subprocesses)")
        if event == "open" and args and isinstance(args[0], (str, bytes)):
            path = os.fsdecode(args[0])
            if path.startswith("/proc/") and path.endswith(("/mem", "/environ")):
                raise PermissionError(f"sandbox: opening {path} is not allowed in the REPL")

    sys.addaudithook(hook)


def isolate_network(allow_namespace: bool = True) -> dict[str, Any]:
    """Namespace first; audit hook where that is refused. Returns the
    `sandbox` details reported in hello_ok."""
    details = try_network_namespace() if allow_namespace else None
    if details is not None:
        return {"network": "namespace", "audit_hook": False, **details}
    install_audit_hook()
    return {"network": "audit-hook", "audit_hook": True, "hidden_dirs": []}
