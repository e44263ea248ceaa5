"""Landlock for the REPL worker, through ctypes (Linux 5.13+; no root, no namespace).

The worker may read the runtime (system libraries, the Python installation, the
app's own code) and its context files, and read and write only its own directory.
Everything else of the file system, every TCP bind/connect (ABI 4+), signals to
processes outside the sandbox and abstract UNIX sockets of the host (scopes, ABI 6+)
are refused. A kernel with an older ABI gets what it has; what is missing is
reported (`missing`), never hidden.

ABI history (landlock(7)): 1 file system; 2 REFER (link/rename across directories);
3 TRUNCATE; 4 TCP bind/connect; 5 IOCTL_DEV; 6 scopes (abstract UNIX sockets,
signals); 7 audit logging flags (nothing to add for us).
"""

from __future__ import annotations

import ctypes
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing imports re: not at every worker start)
    from typing import Any, Iterable

from core.repl.worker_log import get_logger

log = get_logger(__name__)

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446   # x86_64 and aarch64 alike
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV   # the only ones a file rule may hold
READ = READ_FILE | READ_DIR
RUN = READ | EXECUTE
WRITE = (READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_FIFO
         | MAKE_SYM | REFER | TRUNCATE)   # no EXECUTE: nothing written there can be run


def fs_rights(abi: int) -> int:
    """Every file-system right this ABI knows (all of them are handled, i.e. denied
    unless a rule grants them)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """0 when the kernel has no Landlock (or it is disabled at boot)."""
    try:
        libc = _libc()
    except OSError:
        return 0
    abi = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                       ctypes.c_uint32(CREATE_RULESET_VERSION))
    return int(abi) if abi > 0 else 0


def missing_for(abi: int) -> list[str]:
    """What this ABI cannot do that the full sandbox wants."""
    if abi <= 0:
        return ["landlock"]
    missing = []
    if abi < 2:
        missing.append("landlock: links/renames across directories (ABI 2)")
    if abi < 3:
        missing.append("landlock: truncate (ABI 3)")
    if abi < 4:
        missing.append("landlock: TCP rules (ABI 4)")
    if abi < 6:
        missing.append("landlock: signal and abstract-socket scopes (ABI 6)")
    return missing


# What of /proc the worker may read: its own process's entries, no other process's
# (command lines, limits), nothing host-wide, and not its own `net` (the host's UNIX sockets
# in the fallback), `mountinfo`/`mounts` (the host paths of the binds), `task` (each thread's
# copy of both), `environ`, `mem`. Landlock rules name objects, so only entries that exist
# when the rules are made can be granted: a child the worker starts later reads no /proc.
OWN_PROC_ENTRIES = ("status", "stat", "statm", "cmdline", "comm", "limits", "io", "maps",
                    "fd", "fdinfo", "oom_score", "cgroup")


def own_proc(pid: int) -> list[str]:
    """The /proc entries of process `pid` the worker may read (see OWN_PROC_ENTRIES)."""
    return [f"/proc/{pid}/{name}" for name in OWN_PROC_ENTRIES]


def restrict(read_paths: Iterable[str], run_paths: Iterable[str], write_paths: Iterable[str],
             dev_paths: Iterable[str] = ()) -> dict[str, Any]:
    """Enforce on this thread and everything it starts later (call while single-threaded,
    after no_new_privs). `run_paths` may also be executed, `write_paths` get WRITE,
    `dev_paths` (files such as /dev/null) get read and write. Returns the report."""
    abi = abi_version()
    report: dict[str, Any] = {"abi": abi, "enforced": False, "scopes": [], "net": False,
                              "missing": missing_for(abi), "skipped": []}
    if abi == 0:
        report["reason"] = "the kernel has no Landlock (or it is disabled)"
        return report
    libc = _libc()
    handled = fs_rights(abi)
    attr = _RulesetAttr(handled_access_fs=handled)
    size = 8
    if abi >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
        report["net"] = True
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
        report["scopes"] = ["abstract_unix_socket", "signal"]
    fd = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                      ctypes.c_uint32(0))
    if fd < 0:
        report["reason"] = f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}"
        return report
    try:
        seen: set[str] = set()
        for paths, rights in ((write_paths, WRITE), (dev_paths, READ_FILE | WRITE_FILE | TRUNCATE),
                              (run_paths, RUN), (read_paths, READ)):
            for path in paths:
                if path in seen:
                    continue
                seen.add(path)
                problem = _add_rule(libc, int(fd), path, rights & handled)
                if problem:
                    report["skipped"].append(f"{path}: {problem}")
        if libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            report["reason"] = f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}"
            return report
    finally:
        os.close(int(fd))
    report["enforced"] = True
    return report


def _add_rule(libc: ctypes.CDLL, ruleset_fd: int, path: str, rights: int) -> str | None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        rule = _PathBeneath(allowed_access=rights, parent_fd=fd)
        if libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset_fd),
                        ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            return os.strerror(ctypes.get_errno())
    finally:
        os.close(fd)
    return None
