"""SIGINT at many points of `rlm-studio ask`'s first seconds, and what each one ends in.

Used by tests/integration/test_sigint_from_start.py (the console script) and by the bundle's
checks (tests/packaging/test_bundle_sigint.py, packaging/smoke.sh):

    python -m tests.support.sigint_sweep PROGRAM [--points 40] [--span 1.5] [--parallel 2]

Each point is its own process with its own TMPDIR and data home, so points run a few at a
time (`parallel`): the 40 points' delays add up to 30 s, and one after the other they took
33 s. What a point ends in:

  "130"        exit 130 and no traceback: the app's handler took it (app/sigint.py);
  "killed"     killed by SIGINT with nothing on stderr: the signal's default action, before
               the interpreter installed its handler (the shell's $? is 130 all the same);
  "bad"        anything else: a traceback, "Fatal Python error: init_import_site" (exit 1),
               "Failed to execute script" (the frozen bootloader), another code, or still
               running 30 s later.

`left` lists what a point left behind: processes whose command line names its directory
(the REPL worker names its context dir, under TMPDIR) and rlm-repl-* directories.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

QUESTION = "How many?"
SLEEPING_CELL = "import time\ntime.sleep(30)\nprint('slept')"
NOISE = (b"Traceback", b"Exception ignored", b"Fatal Python error", b"Failed to execute script")


@dataclass
class Point:
    at_ms: int
    returncode: int | None
    stderr: bytes
    left: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        noisy = any(n in self.stderr for n in NOISE)
        if self.returncode == 130 and not noisy:
            return "130"
        if self.returncode == -signal.SIGINT and not noisy and not self.stderr.strip():
            return "killed"
        return "bad"

    def __str__(self) -> str:
        tail = self.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        return f"{self.at_ms} ms: {self.returncode} {self.outcome} {' | '.join(tail)[:300]}"


def point_times(points: int, span_s: float, first_s: float = 0.010) -> list[float]:
    return [first_s + i * (span_s - first_s) / (points - 1) for i in range(points)]


def _left_behind(home: Path) -> list[str]:
    mark = str(home).encode()
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if mark in cmdline:
                found.append(f"pid {pid}: {cmdline[:160]!r}")
    found += [f"dir {p.name}" for p in (home / "tmp").iterdir() if "rlm-repl" in p.name]
    return found


def ask_argv(program: list[str], server_url: str, docs: Path) -> list[str]:
    return [*program, "ask", QUESTION, str(docs), "--root", "openai/root", "--sub", "openai/root",
            "--api-base", server_url, "--mode", "rlm", "--cell-timeout", "60", "--quiet"]


def _wait(pid: int, timeout_s: float) -> int | None:
    """The exit status as subprocess gives it (-N: killed by signal N), None if still running."""
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.01)


def one_point(argv: list[str], at_s: float, home: Path, env: dict[str, str],
              hold_sigint: bool = False) -> Point:
    """Start argv in `home` (its TMPDIR and data home), SIGINT it `at_s` after the start,
    wait for its end and for what it started to go. hold_sigint: the program starts with
    SIGINT blocked, as packaging/launcher.c starts the bundle (posix_spawn's sigmask: no
    Python runs in the child between fork and exec)."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = dict(env, RLMSTUDIO_DESKTOP_HOME=str(home / "data"), TMPDIR=str(home / "tmp"))
    err_path = home / "stderr"
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, str(err_path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions,
                         setsigmask={signal.SIGINT} if hold_sigint else set(), setsigdef={signal.SIGINT})
    time.sleep(max(0.0, at_s - 0.0005))
    os.kill(pid, signal.SIGINT)
    code = _wait(pid, 30)
    if code is None:
        os.kill(pid, signal.SIGKILL)
        _wait(pid, 10)
    err = err_path.read_bytes() + (b"\n[still running 30 s after SIGINT]" if code is None else b"")
    point = Point(round(at_s * 1000), code, err)
    deadline = time.monotonic() + 10
    while (left := _left_behind(home)) and time.monotonic() < deadline:
        time.sleep(0.05)
    point.left = left
    return point


def to_first_request(argv: list[str], home: Path, env: dict[str, str], server) -> float:
    """Seconds from the program's start to the root's first request on `server` (then it is
    stopped with SIGINT): the span a sweep must cover to reach the run, slower under load."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = dict(env, RLMSTUDIO_DESKTOP_HOME=str(home / "data"), TMPDIR=str(home / "tmp"))
    before = len(server.requests_for("root"))
    t0 = time.monotonic()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[
        (os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)])
    try:
        while len(server.requests_for("root")) == before:
            if time.monotonic() - t0 > 120 or _wait(pid, 0) is not None:
                raise AssertionError(f"{argv[0]} sent no request within {time.monotonic() - t0:.0f} s")
            time.sleep(0.01)
        return time.monotonic() - t0
    finally:
        os.kill(pid, signal.SIGINT)
        if _wait(pid, 30) is None:
            os.kill(pid, signal.SIGKILL)
            _wait(pid, 10)


def sweep(argv_for: Callable[[Path], list[str]], env: dict[str, str], base: Path, *, points: int = 40,
          span_s: float = 1.5, parallel: int = 2, hold_sigint: bool = False) -> list[Point]:
    """One process per point (argv_for(its home) gives its command line), `parallel` at a time."""
    def run(i_at: tuple[int, float]) -> Point:
        i, at = i_at
        home = base / f"p{i:02d}"
        return one_point(argv_for(home), at, home, env, hold_sigint)
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(run, enumerate(point_times(points, span_s))))


def summary(result: list[Point]) -> str:
    counts = {k: sum(p.outcome == k for p in result) for k in ("130", "killed", "bad")}
    bad = [p.at_ms for p in result if p.outcome == "bad"]
    return (f"{len(result)} SIGINTs: {counts['130']} exit 130, {counts['killed']} killed by SIGINT "
            f"before the interpreter's handler, {counts['bad']} otherwise{f' (at {bad} ms)' if bad else ''}; "
            f"load {os.getloadavg()[0]:.1f}")


def ask_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(OPENAI_API_KEY="sk-sigint", PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
               NO_PROXY="127.0.0.1,localhost", QT_QPA_PLATFORM="offscreen")
    env.pop("RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE", None)
    return env


def serve_sleeping_root():
    """The scripted OpenAI-compatible server on 127.0.0.1 whose root writes a 30 s cell."""
    from tests.support.openai_server import ScriptedOpenAI
    server = ScriptedOpenAI().start()
    server.script("root", fn=lambda _request: f"Working on it.\n```repl\n{SLEEPING_CELL}\n```")
    return server


def main(argv: list[str] | None = None) -> int:
    """The sweep against a program (the bundle's `rlm-studio`), with the scripted server run
    here; exit 1 unless every point ended in 130 or was killed by SIGINT, and nothing was left."""
    parser = argparse.ArgumentParser(prog="sigint_sweep")
    parser.add_argument("program")
    parser.add_argument("--points", type=int, default=40)
    parser.add_argument("--span", type=float, default=1.5)
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args(argv)
    server = serve_sleeping_root()
    try:
        with tempfile.TemporaryDirectory(prefix="rlm-sigint-") as tmp:
            base = Path(tmp)
            docs = base / "docs"
            docs.mkdir()
            (docs / "a.txt").write_text("apples: 3\n", encoding="utf-8")
            argv_for = lambda _home: ask_argv([args.program], server.url, docs)  # noqa: E731
            start = to_first_request(argv_for(base), base / "first", ask_env(), server)
            span = max(args.span, 1.5 * start)     # two at a time: each start is slower than this one
            result = sweep(argv_for, ask_env(), base, points=args.points, span_s=span, parallel=args.parallel)
    finally:
        server.stop()
    failed = [p for p in result if p.outcome == "bad" or p.left]
    for p in failed:
        print(f"sigint_sweep: {p}{f' left {p.left}' if p.left else ''}", file=sys.stderr)
    print(f"sigint_sweep: over {span:.2f} s (the first request came {start:.2f} s after the start): "
          f"{summary(result)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
