"""The worker's box on Linux: namespaces, a PID 1, a minimal mount view, no capabilities.

Run by the worker before any model code, while it has one thread, in this order:

  enter_namespaces()   unshare(user + net + mnt + pid + ipc); our uid/gid mapped to themselves
  split_pid1()         fork: the process the engine started stays outside as a small
                       supervisor (waits, turns SIGTERM into SIGKILL of the namespace);
                       the child is PID 1 of the new PID namespace
  mount_view(plan)     a tmpfs root holding read-only binds of the runtime, the context
                       files, a size-limited tmpfs as the worker's directory, its own /proc
                       and a few /dev nodes; pivot_root into it, the old root detached
  drop_capabilities()  bounding set, ambient set, securebits locked, capset to zero
  start_worker()       PID 1 forks the worker proper (PID 2) and reaps every orphan until
                       the worker exits; then PID 1 exits and the kernel kills whatever is
                       left in the namespace (a double-forked daemon included)

Each step reports what it did; a step the kernel refuses is reported and skipped.
"""

from __future__ import annotations

import _signal as signal   # the C module signal.py wraps: the same calls, without enum (~10 ms of
import ctypes              # CPU at each start, in an interpreter that is gone at the exec)
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing imports re: not at every worker start)
    from typing import Any

from core.repl.worker_log import get_logger

log = get_logger(__name__)

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWPID = 0x20000, 0x10000000, 0x40000000, 0x20000000
CLONE_NEWIPC = 0x08000000   # SysV IPC and POSIX message queues of its own, gone with the box
CLONE_NEWUTS = 0x04000000   # a host name of its own ("rlm"): the host's often names its user
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 1 << 18
MNT_DETACH = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
SYS_MOUNT_SETATTR = 442
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_CAP_AMBIENT = 1, 24, 28, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECBITS_LOCKED_ALL = 0xEF   # NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE, each locked; KEEP_CAPS locked off
LINUX_CAPABILITY_VERSION_3 = 0x20080522
OLD_ROOT = "/.old-root"

# Files of /etc the runtime reads (dynamic linker, time zone, user names); not /etc itself.
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
             "/etc/timezone", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/mime.types",
             "/etc/os-release")
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
DEV_NODES = ("null", "zero", "full", "random", "urandom")


def libc() -> ctypes.CDLL:
    lib = ctypes.CDLL(None, use_errno=True)
    lib.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                          ctypes.c_char_p]
    lib.syscall.restype = ctypes.c_long
    return lib


def _err() -> str:
    return os.strerror(ctypes.get_errno())


class Plan:
    """What the worker may see: `run` paths read-only (and executable), `files` single
    read-only files, `context_dir` read-only, `workdir` read-write (size-limited).
    (A plain class: dataclasses would cost the worker's start-up an import of inspect.)"""

    def __init__(self, *, workdir: str, context_dir: str | None, run: list[str] | None = None,
                 files: list[str] | None = None, dir_limit_mb: int = 512,
                 targets: dict[str, str] | None = None) -> None:
        self.workdir = workdir
        self.context_dir = context_dir
        self.run = list(run or [])
        self.files = list(files or [])
        self.dir_limit_mb = dir_limit_mb
        self.targets = dict(targets or {})   # host directory -> where it is bound (core/repl/neutral.py)

    def target(self, path: str) -> str:
        return self.targets.get(path, path)


def runtime_paths() -> tuple[list[str], list[str]]:
    """(directories, files) the worker needs to run: system libraries, the Python
    installation, the app's code (or the frozen bundle). Real paths, existing only."""
    dirs: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.isdir(d):
            dirs.append(os.path.realpath(d))
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    if getattr(sys, "frozen", False):
        prefixes |= {getattr(sys, "_MEIPASS", ""), os.path.dirname(sys.executable)}
    else:
        import core
        prefixes.add(os.path.dirname(os.path.abspath(core.__file__)))   # the app's own code only
    app_root = None if getattr(sys, "frozen", False) else os.path.dirname(
        os.path.dirname(os.path.abspath(sys.modules["core"].__file__)))
    from core.repl.neutral import site_dirs, venv_dir
    for entry in sys.path + site_dirs() + [venv_dir() or ""]:
        if entry and os.path.isdir(entry) and os.path.abspath(entry) != app_root:
            prefixes.add(entry)
    for p in prefixes:
        if p and os.path.exists(p):
            dirs.append(os.path.realpath(p))
    files = [f for f in ETC_FILES if os.path.exists(f)]
    return outermost(dirs), files


def outermost(paths: list[str]) -> list[str]:
    """The paths that are not inside another one of the list (sorted)."""
    kept: list[str] = []
    for p in sorted(set(paths)):
        if not any(p == k or p.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(p)
    return kept


# ---------------------------------------------------------------- namespaces

def _write(path: str, text: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(text)
        return True
    except OSError as exc:
        log.debug("could not write %s: %s", path, exc)
        return False


def enter_namespaces() -> dict[str, Any] | None:
    """unshare user + net + mnt + ipc (+ pid). None when user namespaces are refused."""
    lib = libc()
    uid, gid = os.getuid(), os.getgid()
    got = {"user": True, "net": True, "mnt": True, "pid": True, "ipc": True}
    base = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    for flags, lost in ((base | CLONE_NEWNS | CLONE_NEWPID, ()),
                        (base | CLONE_NEWNS, ("pid",)),
                        (base, ("pid", "mnt")),
                        (CLONE_NEWUSER | CLONE_NEWNET, ("pid", "mnt", "ipc"))):
        if lib.unshare(flags) == 0:
            for name in lost:
                got[name] = False
            break
    else:
        log.info("unshare(CLONE_NEWUSER|CLONE_NEWNET) refused: %s", _err())
        return None
    got["uid_mapped"] = (_write("/proc/self/setgroups", "deny")
                         and _write("/proc/self/uid_map", f"{uid} {uid} 1")
                         and _write("/proc/self/gid_map", f"{gid} {gid} 1"))
    if got["ipc"]:           # (UTS came with IPC in every try above)
        name = b"rlm"
        got["hostname"] = lib.sethostname(name, len(name)) == 0
    return got


def set_pdeathsig(expected_parent: int | None = None) -> bool:
    """SIGKILL this process when its parent goes; exit now if it is already gone."""
    ok = libc().prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(1)
    return ok


def _exit_like(status: int) -> None:
    """Leave with the same status as a waited-for child (signal or code)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if os.getpid() != 1:
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
    if os.getpid() != 1 and 129 <= code <= 128 + 64:   # PID 1 below told us of a signal
        try:
            signal.signal(code - 128, signal.SIG_DFL)
            os.kill(os.getpid(), code - 128)
        except (OSError, ValueError):
            pass
    os._exit(code)


def split_pid1(fds: tuple[int, ...], forward_signals: bool, cgroup: Any = None) -> None:
    """Fork into the new PID namespace. The parent (outside) never returns: it waits for
    PID 1 and leaves with its status; SIGTERM/SIGHUP to it kill the whole namespace.
    SIGINT reaches the worker directly (the engine signals the process group), so the
    supervisor ignores it, unless `forward_signals` (spawned without a process group).
    `cgroup` (core.repl.cgroup.WorkerCgroup) is removed once PID 1 is gone."""
    if forward_signals:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if cgroup is not None:
        cgroup.split()
    pid = os.fork()
    if pid == 0:
        set_pdeathsig()   # (getppid() is 0 here: the parent lives outside our PID namespace)
        if cgroup is not None:
            cgroup.forget()
        return
    for fd in fds:
        os.close(fd)
    if cgroup is not None:
        cgroup.admit(pid)

    def kill_ns(signum: int, _frame: Any) -> None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, kill_ns)
    if forward_signals:
        signal.signal(signal.SIGINT, lambda s, f: os.kill(pid, signal.SIGINT))
    else:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            got, status = os.waitpid(pid, 0)
        except ChildProcessError:
            os._exit(1)
        if got == pid:
            if cgroup is not None:
                cgroup.remove()
            _exit_like(status)


def start_worker(fds: tuple[int, ...], forward_signals: bool) -> int:
    """In PID 1: fork the worker proper (returns in it, its pid) and reap every process of
    the namespace until the worker exits; then leave with its status."""
    me = os.getpid()
    worker = os.fork()
    if worker == 0:
        set_pdeathsig(me)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        return os.getpid()
    for fd in fds:
        os.close(fd)
    if forward_signals:
        signal.signal(signal.SIGINT, lambda s, f: os.kill(worker, signal.SIGINT))
    else:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda s, f: os.kill(worker, signal.SIGKILL))
    while True:
        try:
            got, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        if got == worker:
            _exit_like(status)


# ---------------------------------------------------------------- mount view

def _mount(lib: ctypes.CDLL, src: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    enc = lambda s: None if s is None else s.encode()   # noqa: E731
    if lib.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) != 0:
        raise OSError(ctypes.get_errno(), f"mount {src} on {target}: {_err()}")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _read_only(lib: ctypes.CDLL, target: str, *, nodev: bool = True) -> None:
    """Make a bind (and every mount below it) read-only."""
    attr = _MountAttr(attr_set=MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | (MOUNT_ATTR_NODEV if nodev else 0))
    rc = lib.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), target.encode(),
                     ctypes.c_uint(AT_RECURSIVE), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)))
    if rc != 0:   # before 5.12: the top mount only, keeping the flags the kernel locked
        st = os.statvfs(target)
        keep = st.f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
        _mount(lib, None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | keep)


def _mkdirs(path: str) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)


def _bind(lib: ctypes.CDLL, source: str, path: str | None = None, *, nodev: bool = True) -> bool:
    """Bind the host's `source` read-only at `path` (the same path by default)."""
    src = OLD_ROOT + source
    path = path or source
    if os.path.isdir(src):
        _mkdirs(path)
    elif os.path.exists(src):
        _mkdirs(os.path.dirname(path))
        if not os.path.exists(path):
            open(path, "w").close()
    else:
        return False
    _mount(lib, src, path, None, MS_BIND | MS_REC)
    _read_only(lib, path, nodev=nodev)
    return True


def mount_view(plan: Plan) -> dict[str, Any]:
    """Build the view and pivot_root into it. Raises OSError if a required step fails
    (the caller then reports the mount layer as missing and relies on Landlock)."""
    lib = libc()
    report: dict[str, Any] = {"enforced": False, "proc": False, "dir_limit_mb": None}
    workdir = os.path.realpath(plan.workdir)
    _mount(lib, None, "/", None, MS_REC | MS_PRIVATE)
    # The new root: a tmpfs on top of the worker's (empty) directory, pivoted into.
    _mount(lib, "tmpfs", workdir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    os.mkdir(workdir + OLD_ROOT)
    nr = SYS_PIVOT_ROOT.get(os.uname().machine)
    if nr is None or lib.syscall(ctypes.c_long(nr), workdir.encode(), (workdir + OLD_ROOT).encode()) != 0:
        raise OSError(ctypes.get_errno(), f"pivot_root: {_err()}")
    os.chdir("/")
    for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):   # merged /usr: symlinks
        if os.path.islink(OLD_ROOT + top):
            os.symlink(os.readlink(OLD_ROOT + top), top)
    for path in plan.run:
        if not os.path.islink(OLD_ROOT + path):
            _bind(lib, path, plan.target(path))
    neutral = bool(plan.targets)
    if neutral:                 # user names and homes of the host: not in the view
        from core.repl.neutral import write_passwd
        write_passwd(os.getuid(), os.getgid())
    for path in plan.files:
        if neutral and path in ("/etc/passwd", "/etc/group"):
            continue
        if os.path.islink(OLD_ROOT + path):
            _mkdirs(os.path.dirname(path))
            os.symlink(os.readlink(OLD_ROOT + path), path)
        else:
            _bind(lib, path)
    context_dir = None
    if plan.context_dir:
        context_dir = plan.target(os.path.realpath(plan.context_dir))
        _bind(lib, os.path.realpath(plan.context_dir), context_dir)
    # The worker's directory: its own tmpfs, so its size is capped and nothing in it runs.
    workdir = plan.target(workdir)
    _mkdirs(workdir)
    _mount(lib, "tmpfs", workdir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
           f"size={int(plan.dir_limit_mb)}m,mode=0700")
    for sub in ("home", "tmp"):
        os.mkdir(os.path.join(workdir, sub), 0o700)
    report["dir_limit_mb"] = int(plan.dir_limit_mb)
    _mkdirs("/dev")
    _mount(lib, "tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755")
    for node in DEV_NODES:
        open(f"/dev/{node}", "w").close()
        _mount(lib, f"{OLD_ROOT}/dev/{node}", f"/dev/{node}", None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"/dev/{name}")
    os.mkdir("/dev/shm")
    _mount(lib, "tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64m,mode=1777")
    _mkdirs("/proc")
    try:
        _mount(lib, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        report["proc"] = True
    except OSError as exc:
        log.info("no /proc in the worker's view: %s", exc)
    if lib.umount2(OLD_ROOT.encode(), MNT_DETACH) != 0:
        raise OSError(ctypes.get_errno(), f"umount old root: {_err()}")
    os.rmdir(OLD_ROOT)
    _mount(lib, None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(workdir)
    report.update(enforced=True, neutral=neutral, workdir=workdir, context_dir=context_dir)
    return report


# ---------------------------------------------------------------- capabilities

class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> dict[str, Any]:
    """Empty the bounding and ambient sets, lock the securebits, then capset to zero.
    Afterwards no mount can be changed and no exec can give capabilities back."""
    lib = libc()
    report: dict[str, Any] = {"dropped": False, "bounding": False}
    last = 63
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        pass
    bounding_ok = True
    for cap in range(last + 1):
        if lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:
            bounding_ok = False
    report["bounding"] = bounding_ok
    lib.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    report["securebits"] = lib.prctl(PR_SET_SECUREBITS, SECBITS_LOCKED_ALL, 0, 0, 0) == 0
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if lib.capset(ctypes.byref(header), data) != 0:
        report["reason"] = f"capset: {_err()}"
        return report
    report["dropped"] = effective_caps() == 0
    return report


def effective_caps() -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(("CapEff:", "CapPrm:")) and int(line.split()[1], 16):
                    return int(line.split()[1], 16)
        return 0
    except OSError:
        lib = libc()
        header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
        data = (_CapData * 2)()
        if lib.capget(ctypes.byref(header), data) != 0:
            return None
        return data[0].effective | data[0].permitted | data[1].effective | data[1].permitted
