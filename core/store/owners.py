"""Which process owns a running run, and is that process still alive?

Each EventWriter holds an exclusive OS lock on a small file
`<database>.owners/<token>.lock` for as long as it lives; the run rows it creates
record that token (plus pid and host, for people reading the table). The OS drops
the lock when the process dies, however it dies (kill -9 included), so "can I take
the lock?" answers "is the owner dead?" without trusting pids, which get reused,
or `os.kill(pid, 0)`, which on Windows would terminate the process.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from pathlib import Path

log = logging.getLogger(__name__)


def owners_dir(db_path: Path) -> Path:
    return Path(db_path).with_name(Path(db_path).name + ".owners")


def _try_lock(fd: int) -> bool:
    if os.name == "nt":
        import msvcrt
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    if os.name == "nt":
        import msvcrt
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        import fcntl
        fcntl.flock(fd, fcntl.LOCK_UN)


class OwnerLock:
    """Held by one EventWriter: `token` goes into the runs it writes."""

    def __init__(self, db_path: Path) -> None:
        self.token = uuid.uuid4().hex
        self.pid = os.getpid()
        self.host = socket.gethostname()
        directory = owners_dir(db_path)
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{self.token}.lock"
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if not _try_lock(self._fd):   # a fresh random name: nobody else can hold it
            raise OSError(f"could not lock {self.path}")

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        _unlock(fd)
        os.close(fd)
        try:
            self.path.unlink()
        except OSError as exc:
            log.warning("could not remove owner lock %s: %s", self.path, exc)


def owner_alive(db_path: Path, token: str | None) -> bool:
    """True while the process holding `token` lives. A missing file means dead;
    a stale file (owner dead) is removed."""
    if not token:
        return False
    path = owners_dir(db_path) / f"{token}.lock"
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        if not _try_lock(fd):
            return True
        _unlock(fd)
    finally:
        os.close(fd)
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("could not remove stale owner lock %s: %s", path, exc)
    return False
