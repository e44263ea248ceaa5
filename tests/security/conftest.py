"""One real engine run per sandbox mode, every attack a ```repl cell of the root's reply.

The root is the scripted OpenAI-compatible server on 127.0.0.1; litellm calls it over
HTTP; the REPL worker is the real one (namespace mode, or --no-namespace: fallback).
Targets are real: a fake HOME with an ssh key, .bashrc and a keyring file, a data
dir with settings.json and a SQLite file, a secret in the host's /tmp, a listening
UNIX socket at a host path, a victim process of the same user.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import pwd
import random
import socket
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import core.repl.worker as worker_module
from core.config import RunConfig
from core.engine.run import Engine
from core.repl import seccomp
from core.repl.client import default_worker_command
from tests.security.attacks import ATTACKS, ORDINARY
from tests.support.openai_server import ScriptedOpenAI

# namespace: every layer; fallback: no namespaces (Landlock, seccomp, audit hook);
# landlock+seccomp: the fallback without its audit hook, to show those two hold alone.
MODES = ("namespace", "fallback", "landlock+seccomp")
SECRET = "SECRET-7f3a9c"
KERNEL_CALLS = ("io_uring_setup", "bpf", "keyctl", "add_key", "request_key", "perf_event_open",
                "process_vm_readv", "process_vm_writev", "setns", "kexec_load", "init_module",
                "userfaultfd", "open_by_handle_at", "pidfd_getfd", "mount", "pivot_root", "chroot",
                "move_mount", "open_tree", "fspick", "mount_setattr")


def worker_command(mode: str) -> list[str]:
    return default_worker_command() + {"namespace": [], "fallback": ["--no-namespace"],
                                       "landlock+seccomp": ["--no-namespace", "--no-audit-hook"]}[mode]


def nr(name: str) -> int:
    return nr_any(seccomp.REFUSED[name])


def nr_any(pair: tuple[int | None, int | None]) -> int:
    value = pair[0 if seccomp.native_arch() == "x86_64" else 1]
    assert value is not None
    return value


SHM_LEAK_SIZE = (64 << 20) + 4321    # the size of the segments a cell tries to leave behind


class HostShm:
    """A SysV shared-memory segment of the host holding the secret (as X11's MIT-SHM images
    of other apps would), and a count of the host's segments to see what a run leaves."""

    def __init__(self) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.shmat.restype = ctypes.c_void_p
        self.key = random.randint(0x10000, 0x7FFFFFFF)
        self.id = self.libc.shmget(self.key, 4096, 0o1600)   # IPC_CREAT | 0600
        assert self.id >= 0, os.strerror(ctypes.get_errno())
        addr = self.libc.shmat(self.id, None, 0)
        ctypes.memmove(addr, SECRET.encode(), len(SECRET))
        self.libc.shmdt(ctypes.c_void_p(addr))

    def still_there(self) -> bool:
        return self.libc.shmget(self.key, 0, 0) == self.id

    @staticmethod
    def segments() -> set[str]:
        """The host's segments of the size the attack uses (others' segments come and go)."""
        with open("/proc/sysvipc/shm") as f:
            return {fields[1] for fields in (line.split() for line in f.readlines()[1:])
                    if fields[3] == str(SHM_LEAK_SIZE)}

    def close(self) -> None:
        self.libc.shmctl(self.id, 0, None)   # IPC_RMID


class UnixListener:
    """A listening UNIX socket at a host path; records every connection it accepts."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.accepted = 0
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(path)
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self.thread.join(2)
        self.sock.close()


@dataclass
class Targets:
    root: Path
    home: Path
    data: Path
    outside: Path
    host_tmp: str
    sock: UnixListener
    victim: subprocess.Popen
    daemon_mark: str
    shm: HostShm
    setuid_target: Path
    snapshot: dict[str, bytes] = field(default_factory=dict)
    meta: dict[str, tuple] = field(default_factory=dict)
    segments_before: set[str] = field(default_factory=set)

    def tokens(self, port: int) -> dict[str, str]:
        site = sysconfig.get_paths()["purelib"]
        return {"@HOME@": str(self.home), "@DATA@": str(self.data), "@OUTSIDE@": str(self.outside),
                "@HOST_TMP@": self.host_tmp, "@SOCK@": self.sock.path, "@PORT@": str(port),
                "@ENGINE_PID@": str(os.getpid()), "@VICTIM_PID@": str(self.victim.pid),
                "@APP_CODE@": os.path.abspath(worker_module.__file__), "@SITE@": site,
                "@REAL_HOME@": pwd.getpwuid(os.getuid()).pw_dir,
                "@DAEMON_MARK@": self.daemon_mark, "@NR_SOCKET@": str(nr("socket")),
                "@NR_FSOPEN@": str(nr("fsopen")), "@NR_UNSHARE@": str(nr("unshare")),
                "@NR_PTRACE@": str(nr("ptrace")), "@NR_MQ_OPEN@": str(nr_any((240, 180))),
                "@NR_IOPRIO_SET@": str(nr_any((251, 30))), "@SHM_KEY@": str(self.shm.key),
                "@SHM_LEAK_SIZE@": str(SHM_LEAK_SIZE),
                "@SETUID_TARGET@": str(self.setuid_target),
                "@NR_STATX@": str(nr_any((332, 291))), "@NR_STATMOUNT@": str(nr("statmount")),
                "@NR_LISTMOUNT@": str(nr("listmount")), "@NR_INOTIFY_INIT1@": str(nr("inotify_init1")),
                "@NR_INOTIFY_ADD_WATCH@": str(nr("inotify_add_watch")),
                "@NR_FANOTIFY_INIT@": str(nr("fanotify_init")),
                "@KERNEL_CALLS@": repr([(n, nr(n)) for n in KERNEL_CALLS])}

    def watched(self) -> list[str]:
        return [str(self.home / ".bashrc"), str(self.data / "settings.json"),
                os.path.abspath(worker_module.__file__)]

    def metadata_watched(self) -> list[str]:
        return [str(self.home), str(self.home / ".ssh" / "id_rsa"), str(self.home / ".bashrc"),
                str(self.data / "rlm-studio.sqlite"), str(self.setuid_target)]


def metadata_of(path: str) -> tuple:
    st = os.stat(path)
    try:
        xattrs = tuple(sorted(os.listxattr(path)))
    except OSError:
        xattrs = ()
    return (oct(st.st_mode), st.st_uid, st.st_gid, st.st_mtime_ns, xattrs)


def make_targets(root: Path) -> Targets:
    home = root / "fakehome"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{SECRET}\n")
    (home / ".bashrc").write_text("# bashrc\n")
    keyring = home / ".local" / "share" / "python_keyring"
    keyring.mkdir(parents=True)
    (keyring / "keyring_pass.cfg").write_text(f"[rlm-studio]\nopenai = {SECRET}\n")
    data = root / "rlm-home"
    data.mkdir()
    (data / "settings.json").write_text('{"version": 1, "endpoints": [{"name": "openai"}]}')
    con = sqlite3.connect(data / "rlm-studio.sqlite")
    con.execute("create table blobs (text)")
    con.execute("insert into blobs values (?)", (f"another run's document {SECRET}",))
    con.commit()
    con.close()
    outside = root / "outside"
    outside.mkdir()
    fd, host_tmp = tempfile.mkstemp(prefix="rlm-sec-", dir="/tmp")
    os.write(fd, SECRET.encode())
    os.close(fd)
    os.chmod(host_tmp, 0o644)
    sock = UnixListener(str(root / "host.sock"))
    victim = subprocess.Popen(["sleep", "300"])
    mark = f"{86000 + random.randint(0, 399)}.{random.randint(100000, 999999)}"
    setuid_target = outside / "tool"
    setuid_target.write_bytes(Path("/bin/true").read_bytes())
    setuid_target.chmod(0o755)
    t = Targets(root, home, data, outside, host_tmp, sock, victim, mark, HostShm(), setuid_target)
    t.snapshot = {p: Path(p).read_bytes() for p in t.watched()}
    t.meta = {p: metadata_of(p) for p in t.metadata_watched()}
    t.segments_before = HostShm.segments()
    return t


@dataclass(frozen=True)
class Doc:
    path: str
    text: str


@dataclass
class ModeRun:
    mode: str
    targets: Targets
    cells: dict[str, Any]            # attack name -> CellExecuted
    ordinary: list[Any]              # the two ordinary cells (first and last)
    feedback: str                    # the root's next request: what it read of every cell
    sandbox: dict[str, Any]
    daemon_alive_after: bool
    victim_alive_after: bool
    engine_rss_growth_mb: float
    result: Any
    victim_after: dict[str, Any] = field(default_factory=dict)
    meta_after: dict[str, tuple] = field(default_factory=dict)
    segments_after: set[str] = field(default_factory=set)
    host_shm_kept: bool = True
    engine_fsize_after: tuple[int, int] = (0, 0)


def _rss_kb() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def daemon_running(mark: str) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if mark.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def fence(src: str) -> str:
    return f"```repl\n{src.strip()}\n```"


async def _run_mode(mode: str, targets: Targets, server: ScriptedOpenAI) -> ModeRun:
    tokens = targets.tokens(int(server.url.rsplit(":", 1)[1].split("/")[0]))
    bodies = []
    for attack in ATTACKS:
        code = attack.code
        for token, value in tokens.items():
            code = code.replace(token, value)
        bodies.append(fence(f"print('ATTACK {attack.name}')\n{code}"))
    reply = "\n\n".join([fence(ORDINARY)] + bodies + [fence(ORDINARY)])
    server.script("root", replies=[reply, "FINAL(done)"])
    server.script("sub", fn=lambda r: "pong")
    sandbox: dict[str, Any] = {}
    events: list[Any] = []

    def emit(e: Any) -> None:
        events.append(e)

    config = RunConfig(root_model="openai/root", sub_model="openai/sub", api_base=server.url,
                       max_iterations=3, cell_timeout_s=60, max_retries=1, request_timeout_s=60,
                       memory_limit_mb=2048, mode="rlm")     # an RLM, whatever Auto would choose
    engine = Engine(config, emit=emit, key_for=lambda m: "sk-test", worker_command=worker_command(mode))
    rss_before = _rss_kb()
    result = await engine.run("What do the documents say?", [Doc("a.txt", "alpha beta beta gamma")])
    rss_growth = (_rss_kb() - rss_before) / 1024
    executed = [e for e in events if e.type == "CellExecuted"]
    assert len(executed) == len(ATTACKS) + 2, [e.type for e in events][-5:]
    cells = {a.name: e for a, e in zip(ATTACKS, executed[1:-1])}
    notices = [e for e in events if e.type == "Notice"]
    sandbox["notices"] = [n.message for n in notices]
    deadline = time.monotonic() + 5
    alive = daemon_running(targets.daemon_mark)
    while alive and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        alive = daemon_running(targets.daemon_mark)
    roots = server.requests_for("root")
    feedback = roots[1].messages[-1]["content"] if len(roots) > 1 else ""
    import resource
    victim = targets.victim.pid
    victim_after = {"nice": os.getpriority(os.PRIO_PROCESS, victim),
                    "affinity": sorted(os.sched_getaffinity(victim)),
                    "rlimit_cpu": resource.prlimit(victim, resource.RLIMIT_CPU)}
    return ModeRun(mode, targets, cells, [executed[0], executed[-1]], feedback, sandbox,
                   daemon_alive_after=alive, victim_alive_after=targets.victim.poll() is None,
                   engine_rss_growth_mb=rss_growth, result=result, victim_after=victim_after,
                   meta_after={p: metadata_of(p) for p in targets.metadata_watched()},
                   segments_after=HostShm.segments(), host_shm_kept=targets.shm.still_there(),
                   engine_fsize_after=resource.getrlimit(resource.RLIMIT_FSIZE))


@pytest.fixture(scope="module", params=MODES)
def mode_run(request, tmp_path_factory) -> ModeRun:
    mode = request.param
    targets = make_targets(tmp_path_factory.mktemp(f"attack-{mode}"))
    saved = {k: os.environ.get(k) for k in ("HOME", "RLMSTUDIO_DESKTOP_HOME", "OPENAI_API_KEY")}
    os.environ.update(HOME=str(targets.home), RLMSTUDIO_DESKTOP_HOME=str(targets.data),
                      OPENAI_API_KEY=f"sk-engine-{SECRET}")
    server = ScriptedOpenAI().start()
    try:
        run = asyncio.run(_run_mode(mode, targets, server))
        yield run
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        targets.sock.close()
        targets.shm.close()
        for shmid in HostShm.segments() - targets.segments_before:   # only if an attack got through
            targets.shm.libc.shmctl(int(shmid), 0, None)
        for path, (mode_text, uid, gid, mtime_ns, _x) in targets.meta.items():
            if metadata_of(path)[:4] != (mode_text, uid, gid, mtime_ns):   # only if an attack got through
                os.chmod(path, int(mode_text, 8))
                os.utime(path, ns=(mtime_ns, mtime_ns))
        try:
            os.removexattr(str(targets.home / ".bashrc"), "user.rlm")
        except OSError:
            pass
        targets.victim.kill()
        targets.victim.wait()
        os.unlink(targets.host_tmp)
        for path, content in targets.snapshot.items():
            if Path(path).read_bytes() != content:   # only if an attack got through: undo it
                Path(path).write_bytes(content)
        for name in ("zz-planted.pth",):
            path = Path(sysconfig.get_paths()["purelib"]) / name
            if path.exists():          # only if an attack got through: never leave it there
                path.unlink()


def pytest_report_header(config: Any) -> str:
    return f"security suite: modes {', '.join(MODES)}; uid {os.getuid()}; python {sys.version.split()[0]}"
