"""The REPL's temp directories (context files, each worker's cwd/HOME/TMPDIR), seen from
the engine: making one that its engine owns by a lock, removing it, sweeping those left by
engines that died without closing their REPLs, and compiling the worker's modules once so
its start does not.

Ownership is a lock, not a pid: the engine holds an exclusive flock on `<dir>/owner.lock`
from before the directory has its name until it is removed, and the kernel drops it when
the engine dies however it dies (kill -9 included). The sweep removes only a directory
whose lock it can take, so a live engine's directory stays even when the sweeping process
cannot see that engine's pid (another pid namespace, a container sharing /tmp). A
directory appears under its `rlm-repl-<pid>-<random>` name already locked: it is made as
`.rlm-repl-new-...`, locked, then renamed. Directories without a lock file were made
before this (an older version still running): for those the pid check stays.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)

ROOT_PREFIX = "rlm-repl-"
NEW_PREFIX = ".rlm-repl-new-"      # being made: not yet locked, or locked and not yet renamed
LOCK_NAME = "owner.lock"
NEW_DIR_STALE_S = 600.0            # a .rlm-repl-new-* dir this old was left by a crash


class OwnedDir:
    """A temp directory and the open lock file that says its engine is alive."""

    def __init__(self, path: str, lock_fd: int | None) -> None:
        self.path = path
        self._lock_fd: int | None = lock_fd

    @classmethod
    def make(cls, parent: str | None = None) -> "OwnedDir":
        parent = parent or tempfile.gettempdir()
        pid = os.getpid()
        new = tempfile.mkdtemp(prefix=f"{NEW_PREFIX}{pid}-", dir=parent)
        lock = os.path.join(new, LOCK_NAME)
        try:
            fd: int | None = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except OSError:
            remove_tree(new)
            raise
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:     # a file system without locks: the pid in the name, as before
                log.info("no lock on %s (%s): its sweep goes by the pid", new, exc)
                os.close(fd)
                fd = None
                os.unlink(lock)
            final = os.path.join(parent, ROOT_PREFIX + os.path.basename(new)[len(NEW_PREFIX):])
            os.rename(new, final)      # (the random part is mkdtemp's: unique among rlm-repl-<pid>-*)
        except OSError:
            if fd is not None:
                os.close(fd)
            remove_tree(new)
            raise
        return cls(final, fd)

    def remove(self) -> None:
        """Remove the directory, then let go of its lock (idempotent)."""
        try:
            remove_tree(self.path)
        finally:
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None


def _lock_if_free(lock_path: str) -> int | None:
    """An fd holding the lock of a directory whose owner is gone, or None (owner alive, or the
    directory went away meanwhile)."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:          # another user's
        return False
    return False


def sweep_stale_dirs() -> list[str]:
    """Remove the temp dirs of engines that died without close() (a killed app): those whose
    lock nobody holds (see the module's docstring). Returns the paths removed."""
    removed = []
    tmp = tempfile.gettempdir()
    try:
        names = os.listdir(tmp)
    except OSError as exc:
        log.debug("cannot list %s: %s", tmp, exc)
        return removed
    for name in names:
        made = name.startswith(ROOT_PREFIX)
        if not (made or name.startswith(NEW_PREFIX)):
            continue
        path = os.path.join(tmp, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        if not made and time.time() - info.st_mtime < NEW_DIR_STALE_S:
            continue                     # being made this instant: locked and renamed next
        lock = os.path.join(path, LOCK_NAME)
        if os.path.lexists(lock):
            fd = _lock_if_free(lock)
            if fd is None:
                continue                 # its engine holds it: alive, wherever it runs
            try:
                remove_tree(path)
            finally:
                os.close(fd)
        elif made:                       # made by a version without the lock: the pid in its name
            parts = name[len(ROOT_PREFIX):].split("-", 1)
            if len(parts) != 2 or not parts[0].isdigit():
                continue
            pid = int(parts[0])
            if pid == os.getpid() or not _pid_gone(pid):
                continue
            remove_tree(path)
        else:                            # left by a crash between mkdtemp and the lock
            remove_tree(path)
        removed.append(path)
    return removed


def remove_tree(path: str | None) -> None:
    """Remove `path` and everything in it. An entry that is already gone (another sweep, or
    the owner, removing the same tree) is skipped; one that cannot be removed is made
    writable and tried again, but only inside the tree: never its parent (for the tree
    itself that parent is /tmp, which a chmod to 0700 made root-only for every user)."""
    if not path or not os.path.exists(path):
        return
    root = os.path.abspath(path)

    def inside(target: str) -> bool:
        target = os.path.abspath(target)
        return target == root or target.startswith(root + os.sep)

    def retry(func: Callable[..., Any], target: str, exc_info: Any) -> None:
        if isinstance(exc_info[1], FileNotFoundError):
            return                       # already removed by someone else
        try:
            if inside(os.path.dirname(target)):
                os.chmod(os.path.dirname(target), stat.S_IRWXU)
            if inside(target):
                os.chmod(target, stat.S_IRWXU)
            func(target)
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("could not remove %s: %s", target, exc)

    shutil.rmtree(path, onerror=retry)


def compile_worker_modules() -> None:
    """The worker runs with PYTHONDONTWRITEBYTECODE (model code must not write .pyc into the
    app), so it would compile its own modules at every start (about 7 ms of the sandbox's
    modules alone on a busy machine). Write their .pyc here once, from the engine, into the
    app's tree when it is writable: py_compile writes even where the engine itself runs with
    PYTHONDONTWRITEBYTECODE, which importing them (the earlier way) did not."""
    if getattr(sys, "frozen", False):
        return
    import importlib.util
    import py_compile
    here = Path(__file__).resolve().parent
    for path in [here.parent / "__init__.py", *sorted(here.glob("*.py"))]:
        cached = importlib.util.cache_from_source(str(path))
        try:
            if os.path.exists(cached) and os.stat(cached).st_mtime >= path.stat().st_mtime:
                continue
            py_compile.compile(str(path), cfile=cached, doraise=True)
        except (OSError, py_compile.PyCompileError) as exc:   # a read-only install: compiled at start
            log.debug("%s not compiled: %s", path.name, exc)
            return
