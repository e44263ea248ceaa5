"""The REPL's temp directories (context files, each worker's cwd/HOME/TMPDIR), seen from
the engine: removing one, sweeping those left by engines that died without closing
their REPLs, and compiling the worker's modules once so its start does not."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)

ROOT_PREFIX = "rlm-repl-"


def sweep_stale_dirs() -> list[str]:
    """Remove temp dirs left by engines that died without close() (killed app).
    A dir is named rlm-repl-<engine pid>-<random>; it is stale when that pid is gone."""
    removed = []
    tmp = tempfile.gettempdir()
    try:
        names = os.listdir(tmp)
    except OSError as exc:
        log.debug("cannot list %s: %s", tmp, exc)
        return removed
    for name in names:
        parts = name[len(ROOT_PREFIX):].split("-", 1)
        if not name.startswith(ROOT_PREFIX) or len(parts) != 2 or not parts[0].isdigit():
            continue
        pid = int(parts[0])
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
            continue                     # still running (or another user's: PermissionError)
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        path = os.path.join(tmp, name)
        remove_tree(path)
        removed.append(path)
    return removed


def remove_tree(path: str | None) -> None:
    if not path or not os.path.exists(path):
        return

    def retry(func: Callable[..., Any], target: str, _exc: Any) -> None:
        try:
            os.chmod(os.path.dirname(target), stat.S_IRWXU)
            os.chmod(target, stat.S_IRWXU)
            func(target)
        except OSError as exc:
            log.warning("could not remove %s: %s", target, exc)

    shutil.rmtree(path, onerror=retry)


def compile_worker_modules() -> None:
    """The worker runs with PYTHONDONTWRITEBYTECODE (model code must not write .pyc into the
    app), so it would compile its own modules at every start (about 7 ms of the sandbox's
    modules alone on a busy machine). Write their .pyc here once, from the engine, into the
    app's tree when it is writable: py_compile writes even where the engine itself runs with
    PYTHONDONTWRITEBYTECODE, which importing them (the earlier way) did not."""
    if getattr(sys, "frozen", False):
        return
    import importlib.util
    import py_compile
    here = Path(__file__).resolve().parent
    for path in [here.parent / "__init__.py", *sorted(here.glob("*.py"))]:
        cached = importlib.util.cache_from_source(str(path))
        try:
            if os.path.exists(cached) and os.stat(cached).st_mtime >= path.stat().st_mtime:
                continue
            py_compile.compile(str(path), cfile=cached, doraise=True)
        except (OSError, py_compile.PyCompileError) as exc:   # a read-only install: compiled at start
            log.debug("%s not compiled: %s", path.name, exc)
            return
