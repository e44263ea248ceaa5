"""CI runs as root; the box must also hold for an ordinary user (where RLIMIT_NPROC binds,
no cgroup may be writable, and the user's own files are the target). This runs the
security suite again as a dedicated user, created if missing (useradd), via runuser."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

USER = "rlm-sandbox-test"
# What the user's id changes: the box (limits, cgroups, namespaces), the files it can reach
# (keys in the user's keyring file and environment included), the engine process. What the
# terminal, the window and the exports make of model text is the same for every user (those
# files took 80 of the 170 s this re-run took at load 10, past the test's 120 s timeout).
BOX_TESTS = [f"tests/security/{name}.py" for name in (
    "test_attacks", "test_engine_side", "test_engine_process", "test_host_paths", "test_layers",
    "test_worker_start", "test_model_routing", "test_lifetime_limits")]
ROOT = Path(__file__).resolve().parents[2]


def _ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER], check=True,
                       capture_output=True)
        return pwd.getpwnam(USER)


def _grant_traversal(paths: list[str]) -> None:
    """The user must reach the interpreter, the venv and the worktree: x on every ancestor
    that has no x for others (e.g. /root holding pyenv), through an ACL, nothing else."""
    for target in paths:
        p = Path(target).resolve()
        for d in [*reversed(p.parents), p]:
            if d.is_dir() and not d.stat().st_mode & 0o001:
                subprocess.run(["setfacl", "-m", f"u:{USER}:x", str(d)], check=True, capture_output=True)


@pytest.mark.timeout(1600)      # the whole security suite once more, as another user
def test_security_suite_holds_for_an_unprivileged_user():
    if os.getuid() != 0:
        pytest.skip("not root: this suite already runs as an unprivileged user")
    for tool in ("useradd", "runuser", "setfacl"):
        assert shutil.which(tool), f"{tool} is needed (scripts/system-packages.sh installs acl)"
    user = _ensure_user()
    _grant_traversal([sys.base_prefix, sys.prefix, os.path.realpath(sys.executable), str(ROOT)])
    env = {"HOME": user.pw_dir, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TMPDIR": "/tmp",
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen",
           "LANG": "C.UTF-8"}
    proc = subprocess.run(
        ["runuser", "-u", USER, "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         *BOX_TESTS, "-k", "not unprivileged and not cli", "-x"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    tail = (proc.stdout + proc.stderr)[-4000:]
    assert proc.returncode == 0, tail
    assert " passed" in proc.stdout and "failed" not in proc.stdout, tail
    print(f"\nas {USER} (uid {user.pw_uid}): {proc.stdout.strip().splitlines()[-1]}")
