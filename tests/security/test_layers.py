"""Each layer of the worker's box alone, in a fresh Python process that applies only it
and then tries what it must stop (and something it must still allow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.repl import landlock

ROOT = str(Path(__file__).resolve().parents[2])


def probe(body: str, cwd: str | None = None) -> dict:
    """Run `body` (which fills the dict `out`) in a new interpreter; returns `out`."""
    script = (PRELUDE + textwrap.dedent(body) + "\nprint(json.dumps(out))\n")
    proc = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


PRELUDE = """import json, os, sys
out = {}
def err(fn):
    try:
        fn()
        return "allowed"
    except OSError as e:
        return e.errno
"""


@pytest.fixture
def secret_dir(tmp_path):
    d = tmp_path / "user"
    d.mkdir()
    (d / "secret.txt").write_text("secret")
    work = tmp_path / "work"
    work.mkdir()
    return d, work


def test_landlock_alone_confines_files_tcp_and_signals(secret_dir):
    if landlock.abi_version() == 0:
        pytest.skip("this kernel has no Landlock")
    user, work = secret_dir
    out = probe(f"""
        import signal, socket
        from core.repl import confine, landlock, sandbox
        run, files = confine.runtime_paths()
        sandbox.no_new_privs()
        out["report"] = landlock.restrict(files, run, [{str(work)!r}], ["/dev/null"])
        out["read_user_file"] = err(lambda: {f"open({str(user / 'secret.txt')!r}).read()"})
        out["write_own_dir"] = err(lambda: {f"open({str(work / 'mine.txt')!r}, 'w').write('ok')"})
        out["read_etc"] = err(lambda: open('/etc/hostname').read())
        out["tcp"] = err(lambda: socket.create_connection(('127.0.0.1', 9), timeout=1))
        out["signal_parent"] = err(lambda: {f"os.kill({os.getpid()}, 0)"})
    """)
    assert out["report"]["enforced"] is True
    assert out["read_user_file"] == 13 and out["read_etc"] == 13 and out["write_own_dir"] == "allowed"
    if out["report"]["abi"] >= 4:
        assert out["tcp"] == 13
    if out["report"]["abi"] >= 6:
        assert out["signal_parent"] == 1


def test_seccomp_alone_refuses_sockets_and_mounts_but_not_threads():
    out = probe(f"""
        import ctypes, socket, threading
        from core.repl import seccomp
        out["report"] = seccomp.install(allow_processes=True)
        out["socket"] = err(lambda: socket.socket(socket.AF_UNIX))
        out["memfd"] = err(lambda: os.memfd_create('x'))
        libc = ctypes.CDLL(None, use_errno=True)
        out["umount2"] = libc.umount2(b"/proc", 2), ctypes.get_errno()
        out["unshare"] = libc.unshare(0x10000000), ctypes.get_errno()
        t = threading.Thread(target=lambda: out.setdefault("thread", "ran"))
        t.start(); t.join()
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    """)
    assert out["report"]["enforced"] is True
    assert out["socket"] == 1 and out["memfd"] == 1
    assert out["umount2"] == [-1, 1] and out["unshare"] == [-1, 1]
    assert out["thread"] == "ran" and out["fork"] == 7


def test_seccomp_alone_refuses_file_watches_and_the_mount_table():
    """Without the audit hook or any namespace: inotify, fanotify, listmount and statmount
    work before the filter and are refused (EPERM) after it, whatever the hook does."""
    out = probe(f"""
        import ctypes, struct
        from core.repl import seccomp
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        def sc(name, *args):
            nr = seccomp.REFUSED[name][0 if seccomp.native_arch() == "x86_64" else 1]
            rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
            return "allowed" if rc >= 0 else ctypes.get_errno()
        req = ctypes.create_string_buffer(struct.pack("<IIQQQ", 32, 0, 2**64 - 1, 0, 0))
        ids = (ctypes.c_uint64 * 64)()
        def calls():
            return {{"inotify_init1": sc("inotify_init1", 0), "fanotify_init": sc("fanotify_init", 0, 0),
                     "listmount": sc("listmount", ctypes.addressof(req), ctypes.addressof(ids), 64, 0),
                     "statmount": sc("statmount", ctypes.addressof(req), ctypes.addressof(ids), 64, 0),
                     "inotify_add_watch": sc("inotify_add_watch", -1, 0, 0)}}
        out["before"] = calls()
        seccomp.install(allow_processes=True)
        out["after"] = calls()
    """)
    assert out["before"]["inotify_init1"] == "allowed" and out["before"]["listmount"] == "allowed"
    assert out["before"]["inotify_add_watch"] in (9, 22)     # EBADF/EINVAL: the call itself is there
    assert out["after"] == {name: 1 for name in out["after"]}, out


def test_seccomp_without_processes_refuses_fork_exec_and_foreign_signals():
    victim = subprocess.Popen(["sleep", "30"])
    try:
        out = probe(f"""
            import signal, subprocess, threading
            from core.repl import seccomp
            out["report"] = seccomp.install(allow_processes=False)
            out["fork"] = err(lambda: os.fork())
            out["spawn"] = err(lambda: subprocess.run(['true']))
            out["kill_other"] = err(lambda: {f"os.kill({victim.pid}, signal.SIGKILL)"})
            signal.signal(signal.SIGUSR1, lambda *a: out.setdefault("self_signal", "ok"))
            os.kill(os.getpid(), signal.SIGUSR1)
            t = threading.Thread(target=lambda: out.setdefault("thread", "ran"))
            t.start(); t.join()
        """)
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
    assert out["fork"] == 1 and out["spawn"] == 1 and out["kill_other"] == 1
    assert out["self_signal"] == "ok" and out["thread"] == "ran"


def test_seccomp_filter_is_built_for_both_architectures():
    from core.repl import seccomp
    for arch in ("x86_64", "aarch64"):
        for allow in (True, False):
            prog = seccomp.build_filter(arch, allow_processes=allow, own_pid=1234)
            assert len(prog) % 8 == 0 and 40 < len(prog) // 8 < 200
            # first instruction loads the arch, the second compares it with this arch's AUDIT_ARCH
            assert int.from_bytes(prog[12:16], "little") == seccomp.AUDIT_ARCH[arch]


def test_capabilities_dropped_no_mount_can_be_undone(tmp_path):
    out = probe(f"""
        import ctypes
        from core.repl import confine
        ns = confine.enter_namespaces()
        out["ns"] = bool(ns)
        if ns:
            lib = confine.libc()
            out["mount_before"] = lib.mount(b"tmpfs", {str(tmp_path).encode()!r}, b"tmpfs", 0, None)
            lib.umount2({str(tmp_path).encode()!r}, 2)
            out["caps"] = confine.drop_capabilities()
            out["mount_after"] = lib.mount(b"tmpfs", {str(tmp_path).encode()!r}, b"tmpfs", 0, None), ctypes.get_errno()
    """)
    if not out["ns"]:
        pytest.skip("no user namespaces here")
    assert out["mount_before"] == 0
    assert out["caps"]["dropped"] is True and out["caps"]["bounding"] is True
    assert out["mount_after"] == [-1, 1]


def test_mount_view_alone_shows_only_the_runtime(tmp_path):
    ctx = tmp_path / "ctx"
    work = ctx / "worker-1"
    work.mkdir(parents=True)
    (ctx / "context.txt").write_text("the context")
    out = probe(f"""
        from core.repl import confine
        ns = confine.enter_namespaces()
        out["ns"] = bool(ns and ns["mnt"])
        if out["ns"]:
            run, files = confine.runtime_paths()
            out["view"] = confine.mount_view(confine.Plan(workdir={str(work)!r}, context_dir={str(ctx)!r},
                                                          run=run, files=files, dir_limit_mb=8))
            out["cwd"] = os.getcwd()
            out["context"] = open({str(ctx / 'context.txt')!r}).read()
            out["shadow"] = os.path.exists("/etc/shadow")
            out["home"] = os.path.exists({str(Path.home())!r} + "/.bashrc")
            open("mine", "w").write("x")
            try:
                open("/usr/planted", "w")
                out["write_usr"] = "allowed"
            except OSError as e:
                out["write_usr"] = e.errno
            try:
                open("big", "wb").write(b"x" * (9 << 20))
                out["big"] = "allowed"
            except OSError as e:
                out["big"] = e.errno
    """, cwd=str(work))
    if not out["ns"]:
        pytest.skip("no user + mount namespaces here")
    assert out["view"]["enforced"] and out["cwd"] == str(work) and out["context"] == "the context"
    assert out["shadow"] is False and out["home"] is False
    assert out["write_usr"] == 30 and out["big"] == 28          # EROFS, ENOSPC (8 MB tmpfs)
    assert not (work / "mine").exists()                         # the worker's files live in its own tmpfs


def test_audit_hook_alone_holds_against_its_removal():
    out = probe("""
        import gc, socket, types
        from core.repl import sandbox
        sandbox.install_audit_hook()
        sys.audit = lambda *a: None
        hook = next(o for o in gc.get_objects() if getattr(o, "__name__", "") == "_audit_hook"
                    and (o.__defaults__ or (None,))[-1] is not None)
        def plain():
            pass
        plain.__code__ = (lambda: None).__code__        # ordinary code may still do this
        types.coroutine(lambda: None)                    # (the stdlib does, e.g. types.coroutine)
        for attr, value in (("__code__", (lambda e, a: None).__code__), ("__defaults__", ())):
            try:
                setattr(hook, attr, value)
                out[attr] = "replaced"
            except PermissionError:
                out[attr] = "kept"
        try:
            socket.socket()
            out["socket"] = "allowed"
        except PermissionError:
            out["socket"] = "refused"
        for path in ("//proc/1/environ", "/proc/./1/environ", "/tmp/../proc/1/mem"):
            try:
                open(path, "rb")
                out[path] = "allowed"
            except PermissionError:
                out[path] = "refused"
            except OSError:
                out[path] = "allowed"
    """)
    assert out["__code__"] == "kept" and out["__defaults__"] == "kept" and out["socket"] == "refused"
    assert out["//proc/1/environ"] == out["/proc/./1/environ"] == out["/tmp/../proc/1/mem"] == "refused"


def test_cgroup_caps_the_tasks_of_worker_and_children():
    out = probe("""
        from core.repl import cgroup
        group = cgroup.create(256, 12)
        out["group"] = group.report if group else None
        if group:
            group.split()
            r, w = os.pipe()
            pid1 = os.fork()
            if pid1 == 0:                      # what PID 1 does: wait to be moved in, then fork
                group.forget()
                admitted = group.wait_admitted()
                kids, err = [], None
                try:
                    for _ in range(40):
                        pid = os.fork()
                        if pid == 0:
                            import time; time.sleep(10); os._exit(0)
                        kids.append(pid)
                except OSError as e:
                    err = e.errno
                for k in kids:
                    os.kill(k, 9); os.waitpid(k, 0)
                os.write(w, json.dumps([admitted, len(kids), err]).encode())
                os._exit(0)
            os.close(w)
            group.admit(pid1)
            out["admitted"], out["forked"], out["err"] = json.loads(os.read(r, 100))
            os.waitpid(pid1, 0)
            group.remove()
            out["removed"] = not any(os.path.exists(d) for d in group.dirs)
    """)
    if out["group"] is None:
        pytest.skip("no writable cgroup with memory and pids controllers here")
    assert out["admitted"] is True and out["forked"] < 12 and out["err"] == 11 and out["removed"]


def test_report_names_what_is_missing():
    from core.repl.sandbox_report import describe, missing
    assert missing({"platform": "darwin"}) == ["landlock", "seccomp", "namespaces"]
    partial = {"platform": "linux", "namespaces": {"user": False}, "landlock": {"enforced": True, "scopes": []},
               "seccomp": {"enforced": True}, "capabilities": {"dropped": True}, "no_new_privs": True,
               "die_with_parent": True}
    assert missing(partial) == ["namespaces", "landlock scopes"]
    assert "signal the user's other processes" in describe(partial)
