"""The process that runs the engine (the window, every CLI command), hardened first thing.

    report = prepare_engine_process()     # idempotent; call it before any helper process starts

1. Non-dumpable (Linux: prctl(PR_SET_DUMPABLE, 0), core.repl.sandbox.harden_engine_process):
   no process of the same user can ptrace it or read its /proc/<pid>/mem and environ.
2. No keys in the environment: every provider's key variable (core/providers.py, and
   RLMSTUDIO_DESKTOP_<ENDPOINT>_API_KEY, or the old RLM_STUDIO_ name) moves from os.environ into the key store's memory
   (core.key_env.take_keys_from_environment; KeyStore.resolve still finds it there), and
   its value in the process's initial environment block, which /proc/<pid>/environ shows
   for the life of the process, is overwritten with NUL bytes. Every process started
   afterwards (multiprocessing's forkserver and resource tracker, the ingest workers, the
   REPL worker) inherits none of them.
3. Helper processes non-dumpable too: multiprocessing starts its forkserver, resource tracker
   and spawned children by fork + exec, and exec makes a process dumpable again. Their `-c`
   code gets `prctl(PR_SET_DUMPABLE, 0)` put in front (multiprocessing.util.spawnv_passfds is
   wrapped once); the ingest workers fork from the forkserver and inherit it.

Linux only for 1 and 3 (elsewhere they are reported as not done); 2 everywhere.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

# Put in front of the `-c` code of multiprocessing's helper processes (Linux).
NO_DUMP_PREFIX = "import ctypes as _c; _c.CDLL(None).prctl(4, 0, 0, 0, 0); del _c; "


@dataclass(frozen=True)
class EngineProcessReport:
    dumpable: bool | None                 # None: not Linux
    hardening: str                        # what harden_engine_process said
    keys_moved: tuple[str, ...]           # env var names taken out of os.environ
    environ_wiped: int                    # values overwritten in the initial environment block
    helpers_non_dumpable: bool            # multiprocessing helpers get the prctl prefix
    notes: tuple[str, ...] = field(default=())


_done: EngineProcessReport | None = None


def prepare_engine_process() -> EngineProcessReport:
    """Do all three steps once per process; later calls move keys set since, and return."""
    global _done
    from core.key_env import key_env_names, take_keys_from_environment
    from core.repl.sandbox import harden_engine_process, is_dumpable
    names = key_env_names()
    wiped = _wipe_initial_environ(names)
    moved = tuple(take_keys_from_environment())
    if _done is not None:
        if moved:
            log.info("moved %d more key variable(s) out of the environment", len(moved))
        return _done
    hardening = harden_engine_process()
    helpers = _helpers_non_dumpable()
    notes = []
    if not sys.platform.startswith("linux"):
        notes.append(f"{sys.platform}: no prctl; the process and its helpers stay dumpable")
    _done = EngineProcessReport(dumpable=is_dumpable(), hardening=hardening, keys_moved=moved,
                                environ_wiped=wiped, helpers_non_dumpable=helpers, notes=tuple(notes))
    log.info("engine process: %s; %d key variable(s) moved out of the environment (%d wiped); "
             "helper processes non-dumpable: %s", hardening, len(moved), wiped, helpers)
    return _done


def _wipe_initial_environ(names: list[str]) -> int:
    """Overwrite the values of `names` in the C environment with NUL bytes (Linux, glibc or
    musl). Must run before os.environ forgets them (unsetenv drops the pointer, not the bytes)."""
    if not names or not sys.platform.startswith("linux"):
        return 0
    wanted = {n.encode() for n in names}
    try:
        libc = ctypes.CDLL(None)
        environ = ctypes.POINTER(ctypes.c_void_p).in_dll(libc, "environ")
    except (OSError, ValueError) as exc:
        log.info("cannot reach the C environment: %s", exc)
        return 0
    wiped, index = 0, 0
    while environ[index]:
        address = environ[index]
        entry = ctypes.string_at(address)
        name, sep, value = entry.partition(b"=")
        if sep and name in wanted and value:
            ctypes.memset(address + len(name) + 1, 0, len(value))
            wiped += 1
        index += 1
    return wiped


def _helpers_non_dumpable() -> bool:
    """Wrap multiprocessing.util.spawnv_passfds so the helpers it execs call prctl first."""
    if not sys.platform.startswith("linux"):
        return False
    from multiprocessing import util
    original = util.spawnv_passfds
    if getattr(original, "_rlm_no_dump", False):
        return True

    def spawnv_passfds(path: Any, args: Any, passfds: Any) -> int:
        return original(path, with_no_dump(list(args)), passfds)

    spawnv_passfds._rlm_no_dump = True      # type: ignore[attr-defined]
    util.spawnv_passfds = spawnv_passfds
    return True


def with_no_dump(args: list[str]) -> list[str]:
    """`args` of a Python command line with the prctl call put into its `-c` code, before the
    code runs. multiprocessing's own helpers ("from multiprocessing.X import main; main(...)")
    keep their first statement first: a frozen app (PyInstaller's multiprocessing hook)
    recognises them by that start, so the call goes right after the import."""
    if "-c" in args:
        at = args.index("-c") + 1
        if at < len(args) and NO_DUMP_PREFIX not in str(args[at]):
            code = str(args[at])
            head, sep, rest = code.partition(";")
            if head.startswith("from multiprocessing.") and sep:
                args[at] = f"{head}; {NO_DUMP_PREFIX}{rest.lstrip()}"
            else:
                args[at] = NO_DUMP_PREFIX + code
    return args
