"""How the REPL worker is launched: its command line, its environment (an allow-list:
no API key, provider variable or proxy reaches it) and how its exit is told."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from core.identity import env

BOOT_CODE = "import sys; from core.repl.boot import main; sys.exit(main(sys.argv[1:]))"


def default_worker_command() -> list[str]:
    """The worker's command line. RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE=1 (the engine's environment)
    starts it without namespaces, for hosts where they misbehave: reported as missing."""
    extra = ["--no-namespace"] if env("REPL_NO_NAMESPACE") == "1" else []
    if getattr(sys, "frozen", False):
        return [sys.executable, "--repl-worker", *extra]
    # -P: the worker's cwd (writable by model code) is not put on sys.path.
    # -S: no .pth file of the venv runs (core/repl/boot.py adds its site-packages as they are).
    # -c, not -m: runpy's imports cost ~9 ms of CPU per interpreter (core/repl/boot.py).
    return [sys.executable, "-S", "-P", "-c", BOOT_CODE, *extra]


def worker_environment(home: str, tmp: str) -> dict[str, str]:
    """An allow-list: nothing else of the engine's environment (API keys,
    provider variables, proxies, tokens) reaches the worker."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": home, "TMPDIR": tmp, "TMP": tmp, "TEMP": tmp,
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONIOENCODING": "utf-8",
        "MALLOC_ARENA_MAX": "2",   # fewer 64 MB malloc arenas under RLIMIT_AS
    }
    for name in ("LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    if not getattr(sys, "frozen", False):
        import core
        env["PYTHONPATH"] = str(Path(core.__file__).resolve().parent.parent)
    return env


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "stopped responding"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        extra = {"SIGSEGV": " (segmentation fault)", "SIGABRT": " (aborted)",
                 "SIGBUS": " (bus error)"}.get(name, "")
        if name == "SIGKILL":
            extra = " (killed; possibly the system's out-of-memory killer)"
        return f"was killed by {name}{extra}"
    return f"exited with code {returncode}"
