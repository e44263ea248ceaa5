"""A seccomp filter for the REPL worker, built as classic BPF with ctypes.

Why not a binding: libseccomp's Python module is not on PyPI as a maintained wheel
(the distributions ship it as python3-seccomp, tied to their libseccomp), it would
need libseccomp.so inside the PyInstaller bundle, and what we need is a deny list
of some hundred syscalls and a few argument checks: a 95-140 instruction program. Writing it ourselves keeps the
worker free of native dependencies; the tests run every refused call for real.

The program (see Documentation/userspace-api/seccomp_filter.rst):

    ld  arch                      ; struct seccomp_data.arch (offset 4)
    jne NATIVE_ARCH -> kill       ; i386 via int 0x80, arm32 compat ...: kill the process
    ld  nr                        ; offset 0
    jge 0x40000000 -> deny        ; x86_64 only: the x32 ABI
    jeq <each refused nr> -> deny ; EPERM, so model code reads a clear PermissionError
    jeq <each xattr call> -> EOPNOTSUPP   ; "no xattrs here", which copy routines accept
    jeq clone -> check flags      ; namespace flags refused; in "no processes" mode only
                                  ; threads (CLONE_THREAD) may be made
    jeq clone3 -> ENOSYS          ; its flags sit in memory BPF cannot read; glibc then
                                  ; falls back to clone, which we can check
    jeq kill, prlimit64, sched_set*, setpriority, ioprio_set -> self
                                  ; "no processes" mode: the pid argument must be 0 or the
                                  ; worker's own (setpriority/ioprio_set: a single process)
    ret ALLOW

Refused with EPERM rather than killed: the root model reads "Operation not
permitted" in the cell's output and goes on; a kill would cost the variables.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing imports re: not at every worker start)
    from typing import Any

from core.repl.worker_log import get_logger

log = get_logger(__name__)

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000

# The refused system calls, by name: (x86_64 number, aarch64 number). None: not on that arch.
REFUSED: dict[str, tuple[int | None, int | None]] = {
    # the worker talks over inherited pipes only: no sockets of any family (AF_UNIX at a path
    # reaches the user's tmux, ssh-agent or session bus; a network namespace does not stop it)
    "socket": (41, 198), "socketpair": (53, 199),
    # other processes
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "pidfd_getfd": (438, 438), "kcmp": (312, 272),
    # mounts: the old API and the new one
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430),
    "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433),
    "mount_setattr": (442, 442), "open_tree_attr": (467, 467),
    # namespaces
    "unshare": (272, 97), "setns": (308, 268),
    # kernel attack surface model code never needs
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264),
    "acct": (163, 89), "swapon": (167, 224), "swapoff": (168, 225), "reboot": (169, 142),
    "syslog": (103, 116), "quotactl": (179, 60), "personality": (135, 92),
    "iopl": (172, None), "ioperm": (173, None), "uselib": (134, None), "_sysctl": (156, None),
    # memfd_create + execveat runs a binary no file rule sees
    "memfd_create": (319, 279),
    # SysV IPC and POSIX message queues: segments outlive the process that made them and
    # hold memory outside every limit; the host's (X11 MIT-SHM images) where there is no IPC
    # namespace. Nothing model code needs uses them (multiprocessing uses /dev/shm files).
    # ipc() exists only on i386/arm32, whose ABI the filter kills.
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197),
    "semget": (64, 190), "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192),
    "msgget": (68, 186), "msgsnd": (69, 189), "msgrcv": (70, 188), "msgctl": (71, 187),
    "mq_open": (240, 180), "mq_unlink": (241, 181), "mq_timedsend": (242, 182),
    "mq_timedreceive": (243, 183), "mq_notify": (244, 184), "mq_getsetattr": (245, 185),
    # pages of another process (same-user permission only)
    "migrate_pages": (256, 238), "move_pages": (279, 239),
    # watching files anywhere the uid can read (the names of files the user opens), and the
    # host's mount table (statmount names the host paths behind the /rlm view)
    "inotify_init": (253, None), "inotify_init1": (294, 26), "inotify_add_watch": (254, 27),
    "fanotify_init": (300, 262), "fanotify_mark": (301, 263),
    "statmount": (457, 457), "listmount": (458, 458),
}
# Refused without a mount view (the fallback): Landlock has no right for metadata, so these
# would reach every file the user owns (chmod ~ 0777, chown, utime, setuid bits as root).
METADATA: dict[str, tuple[int | None, int | None]] = {
    "chmod": (90, None), "fchmod": (91, 52), "fchmodat": (268, 53), "fchmodat2": (452, 452),
    "chown": (92, None), "fchown": (93, 55), "lchown": (94, None), "fchownat": (260, 54),
    "utime": (132, None), "utimes": (235, None), "futimesat": (261, None), "utimensat": (280, 88),
}
# Extended attributes, reads included (labels and user.* data of files outside the box):
# answered EOPNOTSUPP, "this file system has no xattrs", which copy routines (shutil.copy2)
# already accept; EPERM would make them fail.
XATTR: dict[str, tuple[int | None, int | None]] = {
    "setxattr": (188, 5), "lsetxattr": (189, 6), "fsetxattr": (190, 7),
    "getxattr": (191, 8), "lgetxattr": (192, 9), "fgetxattr": (193, 10),
    "listxattr": (194, 11), "llistxattr": (195, 12), "flistxattr": (196, 13),
    "removexattr": (197, 14), "lremovexattr": (198, 15), "fremovexattr": (199, 16),
    "setxattrat": (463, 463), "getxattrat": (464, 464), "listxattrat": (465, 465),
    "removexattrat": (466, 466),
}
# Without a PID namespace: allowed only on the worker itself (pid argument 0 or its own
# pid), so model code cannot set the engine's RLIMIT_FSIZE or another process's priority.
SELF_ONLY_PID0 = {"prlimit64": (302, 261), "sched_setparam": (142, 118),
                  "sched_setscheduler": (144, 119), "sched_setaffinity": (203, 122),
                  "sched_setattr": (314, 274)}
SETPRIORITY = (141, 140)    # (which, who): which must be PRIO_PROCESS (0)
IOPRIO_SET = (251, 30)      # (which, who): which must be IOPRIO_WHO_PROCESS (1)
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1
# Refused as well when the worker may not make processes (the fallback without namespaces:
# no PID namespace would take a double-forked daemon down with the worker).
NO_PROCESSES: dict[str, tuple[int | None, int | None]] = {
    "fork": (57, None), "vfork": (58, None), "execve": (59, 221), "execveat": (322, 281),
}
CLONE = (56, 220)
CLONE3 = (435, 435)
KILL_LIKE = {"kill": (62, 129), "tgkill": (234, 131), "rt_sigqueueinfo": (129, 138),
             "rt_tgsigqueueinfo": (297, 240)}
TKILL = (200, 130)
PIDFD_SEND_SIGNAL = (424, 424)
PIDFD_OPEN = (434, 434)

CLONE_THREAD = 0x00010000
CLONE_NEW_ANY = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000
                 | 0x40000000 | 0x00000080)   # NEWNS CGROUP UTS IPC USER PID NET TIME

# BPF
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


def native_arch() -> str | None:
    machine = os.uname().machine.lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return machine if machine in AUDIT_ARCH else None


class _Program:
    """Instructions with symbolic jump targets, resolved when built."""

    def __init__(self) -> None:
        self.ops: list[tuple[int, Any, Any, int]] = []   # (code, jt, jf, k); jt/jf: label or 0
        self.labels: dict[str, int] = {}

    def add(self, code: int, k: int, jt: Any = 0, jf: Any = 0) -> None:
        self.ops.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ops)

    def build(self) -> bytes:
        out = bytearray()
        for i, (code, jt, jf, k) in enumerate(self.ops):
            def rel(target: Any) -> int:
                if isinstance(target, int):
                    return target
                off = self.labels[target] - i - 1
                if not 0 <= off <= 255:
                    raise ValueError(f"seccomp: jump to {target} out of range ({off})")
                return off
            out += struct.pack("=HBBI", code, rel(jt), rel(jf), k & 0xFFFFFFFF)
        return bytes(out)


def build_filter(arch: str, *, allow_processes: bool, own_pid: int | None = None,
                 metadata: bool = True) -> bytes:
    """The BPF program for `arch`. Without allow_processes: fork/exec refused, signals only to
    the worker itself (own_pid) or its own process group (0), and prlimit64, setpriority,
    sched_set*, ioprio_set only on the worker itself. `metadata=False`: chmod, chown and
    utime calls refused too (no mount view makes the rest of the tree read-only)."""
    index = 0 if arch == "x86_64" else 1
    nr_of = lambda pair: pair[index]   # noqa: E731
    deny = RET_ERRNO | errno.EPERM
    p = _Program()
    p.add(_LD_W_ABS, 4)
    p.add(_JEQ_K, AUDIT_ARCH[arch], jt=1, jf=0)
    p.add(_RET_K, RET_KILL_PROCESS)
    p.add(_LD_W_ABS, 0)
    if arch == "x86_64":
        p.add(_JGE_K, X32_SYSCALL_BIT, jt="deny")
    refused = dict(REFUSED)
    if not allow_processes:
        refused.update(NO_PROCESSES)
        refused["tkill"] = TKILL
        refused["pidfd_open"] = PIDFD_OPEN
        refused["pidfd_send_signal"] = PIDFD_SEND_SIGNAL
    if not metadata:
        refused.update(METADATA)
    for name, pair in sorted(refused.items()):
        nr = nr_of(pair)
        if nr is not None:
            p.add(_JEQ_K, nr, jt="deny")
    for pair in XATTR.values():
        p.add(_JEQ_K, nr_of(pair), jt="enotsup")
    p.add(_JEQ_K, nr_of(CLONE3), jt="enosys")
    p.add(_JEQ_K, nr_of(CLONE), jt="clone")
    self_only = not allow_processes and own_pid is not None
    if self_only:
        for pair in KILL_LIKE.values():
            p.add(_JEQ_K, nr_of(pair), jt="self_arg0")
        for pair in SELF_ONLY_PID0.values():
            p.add(_JEQ_K, nr_of(pair), jt="self_arg0")
        p.add(_JEQ_K, nr_of(SETPRIORITY), jt="prio")
        p.add(_JEQ_K, nr_of(IOPRIO_SET), jt="ioprio")
    p.add(_RET_K, RET_ALLOW)
    # clone(flags, ...): args[0], low 32 bits at offset 16 (little endian on both arches)
    p.label("clone")
    p.add(_LD_W_ABS, 16)
    p.add(_JSET_K, CLONE_NEW_ANY, jt="deny")
    if not allow_processes:
        p.add(_JSET_K, CLONE_THREAD, jt="allow", jf="deny")
    p.label("allow")
    p.add(_RET_K, RET_ALLOW)
    if self_only:
        # setpriority(which, who, ..), ioprio_set(which, who, ..): `which` a single process,
        # then `who` (args[1], offset 24) as below
        p.label("prio")
        p.add(_LD_W_ABS, 16)
        p.add(_JEQ_K, PRIO_PROCESS, jt="self_arg1", jf="deny")
        p.label("ioprio")
        p.add(_LD_W_ABS, 16)
        p.add(_JEQ_K, IOPRIO_WHO_PROCESS, jt="self_arg1", jf="deny")
        p.label("self_arg1")
        p.add(_LD_W_ABS, 24)
        p.add(_JEQ_K, own_pid, jt="allow2")
        p.add(_JEQ_K, 0, jt="allow2", jf="deny")
        # kill(pid, sig), tgkill(tgid, ...), rt_sigqueueinfo(tgid, ...), prlimit64(pid, ...),
        # sched_set*(pid, ...): pid (args[0], pid_t: its low 32 bits) must be ours or 0
        p.label("self_arg0")
        p.add(_LD_W_ABS, 16)
        p.add(_JEQ_K, own_pid, jt="allow2")
        p.add(_JEQ_K, 0, jt="allow2", jf="deny")
        p.label("allow2")
        p.add(_RET_K, RET_ALLOW)
    p.label("enosys")
    p.add(_RET_K, RET_ERRNO | errno.ENOSYS)
    p.label("enotsup")
    p.add(_RET_K, RET_ERRNO | errno.EOPNOTSUPP)
    p.label("deny")
    p.add(_RET_K, deny)
    return p.build()


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(*, allow_processes: bool, metadata: bool = True) -> dict[str, Any]:
    """Load the filter for this process (and every thread and child it makes later).
    Sets no_new_privs first (the kernel requires it). Returns the report for hello_ok."""
    report: dict[str, Any] = {"enforced": False, "arch": None, "processes": allow_processes,
                              "metadata": "allowed" if metadata else "refused",
                              "other_processes": "refused" if not allow_processes else "pid namespace"}
    arch = native_arch()
    if arch is None:
        report["reason"] = f"no filter for {os.uname().machine}"
        return report
    report["arch"] = arch
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError as exc:
        report["reason"] = f"libc not loadable: {exc}"
        return report
    program = build_filter(arch, allow_processes=allow_processes, own_pid=os.getpid(), metadata=metadata)
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                           ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        report["reason"] = f"no_new_privs refused: {os.strerror(ctypes.get_errno())}"
        return report
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        report["reason"] = f"seccomp filter refused: {os.strerror(ctypes.get_errno())}"
        return report
    report.update(enforced=True, refused=len([1 for v in REFUSED.values() if v[0 if arch == "x86_64" else 1]
                                               is not None]))
    return report
