"""A cgroup for one worker and everything it starts: memory and process count together.

RLIMIT_AS and RLIMIT_NPROC are per process and per user (and RLIMIT_NPROC never binds
uid 0). Where this process may create a child cgroup, the supervisor does, before it
forks the PID namespace, so every descendant is in it:

  cgroup v2   our own cgroup (from /proc/self/cgroup "0::/path") when it is writable and
              already delegates the memory and pids controllers to children (systemd's
              user@.service delegation, a root shell, a container with its own cgroup)
  cgroup v1   the pids hierarchy only, when writable (root on hybrid systems): creating a
              v1 memory cgroup costs ~20 ms of CPU per worker start (measured), over the
              start-time budget; the memory limit then stays per process (RLIMIT_AS) with
              the number of tasks capped

The cgroup is named rlm-repl-<supervisor pid>; the supervisor removes it when the
worker is gone, and removes empty ones left by supervisors that were killed.

Moving a process into a cgroup waits for an RCU grace period (5-40 ms on a busy
machine), so the supervisor forks first and moves PID 1 while PID 1 builds its mount
view, drops its capabilities and installs Landlock and seccomp; PID 1 waits for the word
(`wait_admitted`) only just before it forks the worker.
Everything here fails soft: `None` and a reason when no cgroup can be used.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing imports re: not at every worker start)
    from typing import Any

from core.repl.worker_log import get_logger

log = get_logger(__name__)

PREFIX = "rlm-repl-"
V1_ROOT = "/sys/fs/cgroup"


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _own_paths() -> dict[str, str]:
    """controller (or "" for v2) -> our cgroup path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    try:
        for line in _read("/proc/self/cgroup").splitlines():
            _id, controllers, path = line.split(":", 2)
            for c in (controllers.split(",") if controllers else [""]):
                out[c] = path
    except (OSError, ValueError):
        pass
    return out


def _v2_mount() -> str | None:
    try:
        for line in _read("/proc/self/mountinfo").splitlines():
            left, _, right = line.partition(" - ")
            if right.split(" ")[0] == "cgroup2":
                return left.split(" ")[4]
    except OSError:
        pass
    return None


def _sweep(parent: str) -> None:
    try:
        for name in os.listdir(parent):
            if name.startswith(PREFIX):
                try:
                    os.rmdir(os.path.join(parent, name))   # only empty ones go
                except OSError:
                    pass
    except OSError:
        pass


class WorkerCgroup:
    """The cgroup dirs made for this worker (one for v2; memory and/or pids for v1)."""

    def __init__(self, dirs: list[str], report: dict[str, Any]) -> None:
        self.dirs = dirs
        self.report = report
        # The supervisor shares the worker's mount namespace, so after pivot_root it no longer
        # sees /sys: it keeps a handle on each parent directory instead.
        self._parents = [(os.open(os.path.dirname(d), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC),
                          os.path.basename(d)) for d in dirs]
        self._ready_r = self._ready_w = -1

    def split(self) -> None:
        """Before the fork: the pipe on which the supervisor tells PID 1 it was moved in."""
        self._ready_r, self._ready_w = os.pipe()

    def admit(self, pid: int) -> None:
        """In the supervisor, after the fork: move PID 1 in, then tell it."""
        os.close(self._ready_r)
        ok = True
        for parent_fd, name in self._parents:
            try:
                fd = os.open(f"{name}/cgroup.procs", os.O_WRONLY, dir_fd=parent_fd)
                try:
                    os.write(fd, str(pid).encode())
                finally:
                    os.close(fd)
            except OSError as exc:
                log.warning("cgroup %s: moving %s in failed: %s", name, pid, exc)
                ok = False
        os.write(self._ready_w, b"1" if ok else b"0")
        os.close(self._ready_w)

    def wait_admitted(self) -> bool:
        """In PID 1, before it forks the worker: wait until it is in the cgroup."""
        if self._ready_r < 0:
            return False
        word = os.read(self._ready_r, 1)
        os.close(self._ready_r)
        self._ready_r = -1
        if word != b"1":
            self.report = {"enabled": False, "reason": "moving the worker into its cgroup failed"}
        return word == b"1"

    def forget(self) -> None:
        """In the forked child: drop the handles (model code must not inherit them)."""
        for parent_fd, _name in self._parents:
            os.close(parent_fd)
        self._parents = []
        if self._ready_w >= 0:
            os.close(self._ready_w)
            self._ready_w = -1

    def remove(self) -> None:
        """From the supervisor once the worker is gone (the cgroup is empty then)."""
        for parent_fd, name in self._parents:
            try:
                os.rmdir(name, dir_fd=parent_fd)
            except OSError as exc:
                log.debug("cgroup %s not removed: %s", name, exc)
            finally:
                os.close(parent_fd)


def create(memory_mb: int | None, max_tasks: int) -> WorkerCgroup | None:
    """Make the cgroup and set its memory and pids limits (`admit` moves a process in).
    None if impossible."""
    name = f"{PREFIX}{os.getpid()}"
    paths = _own_paths()
    mount = _v2_mount()
    if mount and "" in paths:
        parent = os.path.normpath(mount + paths[""])
        got = _v2(parent, name, memory_mb, max_tasks)
        if got:
            return got
    return _v1(paths, name, memory_mb, max_tasks)


def _v2(parent: str, name: str, memory_mb: int | None, max_tasks: int) -> WorkerCgroup | None:
    try:
        delegated = set(_read(os.path.join(parent, "cgroup.subtree_control")).split())
    except OSError:
        return None
    if not {"memory", "pids"} <= delegated or not os.access(parent, os.W_OK):
        return None
    _sweep(parent)
    path = os.path.join(parent, name)
    try:
        os.mkdir(path)
        if memory_mb:
            _write(os.path.join(path, "memory.max"), str(int(memory_mb) << 20))
            _write(os.path.join(path, "memory.swap.max"), "0") if os.path.exists(
                os.path.join(path, "memory.swap.max")) else None
        _write(os.path.join(path, "pids.max"), str(max_tasks))
    except OSError as exc:
        log.debug("cgroup v2 %s refused: %s", path, exc)
        try:
            os.rmdir(path)
        except OSError:
            pass
        return None
    return WorkerCgroup([path], {"enabled": True, "version": 2, "memory_mb": memory_mb,
                                 "pids_max": max_tasks})


def _v1(paths: dict[str, str], name: str, memory_mb: int | None, max_tasks: int) -> WorkerCgroup | None:
    made: list[str] = []
    report: dict[str, Any] = {"enabled": False, "version": 1, "memory_mb": None, "pids_max": None}
    for controller, files in (("pids", {"pids.max": max_tasks}),):
        if controller not in paths:
            continue
        parent = os.path.normpath(f"{V1_ROOT}/{controller}{paths[controller]}")
        if not os.access(parent, os.W_OK):
            continue
        _sweep(parent)
        path = os.path.join(parent, name)
        try:
            os.mkdir(path)
            for fname, value in files.items():
                _write(os.path.join(path, fname), str(value))
        except OSError as exc:
            log.debug("cgroup v1 %s refused: %s", path, exc)
            try:
                os.rmdir(path)
            except OSError:
                pass
            continue
        made.append(path)
        report["memory_mb" if controller == "memory" else "pids_max"] = (
            memory_mb if controller == "memory" else max_tasks)
    if not made:
        return None
    report["enabled"] = bool(report["pids_max"])
    report["reason"] = "cgroup v1: tasks capped; memory stays per process (RLIMIT_AS)"
    return WorkerCgroup(made, report)
