"""What the worker's sandbox holds, in words: read by the worker (hello_ok), the
engine (require_full_sandbox, the warning notice), the CLI and the window.

A report is the `sandbox` dict of hello_ok (see core/repl/protocol.py). `missing()`
names each layer that is absent; an empty list means the full sandbox.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing imports re: not at every worker start)
    from typing import Any

# What each missing layer means for the user, in one clause.
MEANING = {
    "namespaces": "model code shares the host's network, mounts and process list",
    "pid namespace": "a process started by model code can outlive the run",
    "mount view": "model code sees the host's directory tree (Landlock still filters it)",
    "landlock": "model code can read and write every file the user can",
    "landlock scopes": "model code can signal the user's other processes and reach abstract sockets",
    "seccomp": "model code can open sockets (tmux, ssh-agent, the session bus) and call any syscall",
    "capabilities": "model code keeps capabilities and can undo mounts",
    "no_new_privs": "a set-uid program could raise model code's privileges",
    "die with parent": "the worker may survive a crashed app",
    "memory limit": "the worker's processes together can hold more memory than the limit (it is per process)",
    "directory limit": "model code can fill the disk through the worker's directory (the limit is per file)",
}


NOTICE_PREFIX = "The REPL sandbox is incomplete"

# Layers that hold only in part, and why (the report's "partial" names them; docs/sandbox.md).
PARTIAL = {
    "stat": "model code can stat any path (whether it exists, its size, owner, mode and times; not "
            "read or change it): Landlock has no right for stat, and seccomp cannot refuse it, since "
            "glibc's fstat is newfstatat(fd, \"\", AT_EMPTY_PATH), the same call as a stat of a path",
    "host paths": "sys.prefix, sys.path, __file__ and the worker's directory are the host's paths "
                  "(the home layout, the user's name): without a mount namespace there is no other "
                  "place to start the interpreter from",
}


def missing(report: dict[str, Any]) -> list[str]:
    """The layers of the full sandbox this report lacks (empty: all there)."""
    if not report:
        return ["sandbox report"]
    if report.get("platform") and report.get("platform") != "linux":
        return ["landlock", "seccomp", "namespaces"]
    out: list[str] = []
    ns = report.get("namespaces") or {}
    if not (ns.get("user") and ns.get("net") and ns.get("mnt")):
        out.append("namespaces")
    elif not ns.get("pid"):
        out.append("pid namespace")
    if ns.get("mnt") and not (report.get("mount_view") or {}).get("enforced"):
        out.append("mount view")
    ll = report.get("landlock") or {}
    if not ll.get("enforced"):
        out.append("landlock")
    elif "signal" not in (ll.get("scopes") or []):
        out.append("landlock scopes")
    if not (report.get("seccomp") or {}).get("enforced"):
        out.append("seccomp")
    if not (report.get("capabilities") or {}).get("dropped"):
        out.append("capabilities")
    if not report.get("no_new_privs"):
        out.append("no_new_privs")
    if not report.get("die_with_parent"):
        out.append("die with parent")
    # Limits for the whole box: a memory cgroup or tmpfs, else the engine's watchdog
    # (core/repl/watchdog.py adds "watchdog" to the report once the engine has it).
    limits = report.get("limits") or {}
    watch = report.get("watchdog") or {}
    if (limits.get("processes") == "allowed" and limits.get("memory_mb")
            and not (report.get("cgroup") or {}).get("memory_mb") and not watch.get("memory")):
        out.append("memory limit")
    if limits.get("dir_limit") == "per-file (RLIMIT_FSIZE)" and not watch.get("dir"):
        out.append("directory limit")
    return out


def partial(report: dict[str, Any]) -> list[str]:
    """The layers that hold only in part (see PARTIAL): without a mount view (the fallback),
    `stat`; without the neutral binds (no mount view, or no PID namespace to start again in),
    the host paths."""
    if not report or (report.get("platform") and report.get("platform") != "linux"):
        return []
    view = report.get("mount_view") or {}
    return [name for name, holds in (("stat", view.get("enforced")), ("host paths", view.get("neutral")))
            if not holds]


def describe(report: dict[str, Any]) -> str:
    """One line for a person: what is missing and what it means ("" when nothing is)."""
    gaps = missing(report)
    if not gaps:
        return ""
    meaning = "; ".join(f"{g}: {MEANING[g]}" for g in gaps if g in MEANING)
    where = report.get("platform") or "this system"
    part = "; ".join(f"{p}: {PARTIAL[p]}" for p in partial(report))
    return (f"{NOTICE_PREFIX} on {where} (missing: {', '.join(gaps)}). "
            + (meaning + "." if meaning else "") + (f" Partial: {part}." if part else "")).strip()


def notes(report: dict[str, Any]) -> list[str]:
    """Plain facts that are not missing layers (limits that are per process)."""
    out = []
    limits = report.get("limits") or {}
    if (not (report.get("cgroup") or {}).get("enabled") and limits.get("memory_mb")
            and not (report.get("watchdog") or {}).get("memory")
            and limits.get("processes") == "allowed"):
        out.append(f"memory limit is per process ({limits['memory_mb']} MB each; "
                   f"processes capped at {limits.get('pids_max') or limits.get('nproc') or 'none'})")
    return out
