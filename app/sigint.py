"""Every Ctrl+C of the CLI counts, from the process's first instruction on.

Python's own SIGINT handler raises KeyboardInterrupt wherever the main thread is: inside an
import, a weakref callback of the import lock, a `__del__`. There the exception is printed as
"Exception ignored" and lost, and the command goes on. `install()`, the first thing the
`app` package does when it is imported by the `rlm-studio` program (app/__init__.py; for
`python -m app.main`, app/main.py), puts this handler in its place:

  - no event loop running (start-up, argument parsing, config, the end): nothing has been
    started that must be stopped, so the process exits at once with 130, "interrupted";
  - an event loop running before a run is (reading the documents): KeyboardInterrupt is
    raised from a callback of that loop, where it always propagates: asyncio.run cancels
    what is left (helper processes end) and the CLI exits with 130, "interrupted";
  - a run going: the run path's own handler (app/cli_common.py: run_request) has taken
    SIGINT over and cancels the run (status "cancelled", 130), and puts this one back after;
  - a second Ctrl+C: exits at once with 130.

What runs before the package's first line is the interpreter's own start, and Python's
handler is in place there: a Ctrl+C then ends as Python decides (exit 1 from
init_import_site, a traceback, or killed by SIGINT). The bundle's launcher on Linux
(packaging/launcher.c) starts the program with SIGINT blocked, so it stays pending until
app/__init__.py has put this handler in place and unblocks it; pip's console script has no
launcher (docs/cli.md, "Ctrl+C").

Only the C module `_signal` is imported (the `signal` module builds enums: ~11 ms at start).
"""

from __future__ import annotations

import _signal
import os
import sys

_pressed = 0


def _quit() -> None:
    try:
        os.write(2, b"\ninterrupted\n")
    except OSError:
        pass
    os._exit(130)


def _interrupt() -> None:
    raise KeyboardInterrupt


def _running_loop() -> object | None:
    """The event loop running in this thread, if any, without importing anything (asyncio's
    C part keeps it; a module another thread is still importing is not trusted)."""
    module = sys.modules.get("_asyncio")
    get = getattr(module, "_get_running_loop", None)
    try:
        return get() if get is not None else None
    except Exception:            # noqa: BLE001 - half imported: treat as no loop
        return None


def on_sigint(_signum: int, _frame: object) -> None:
    global _pressed
    _pressed += 1
    loop = _running_loop()
    if _pressed > 1 or loop is None:
        _quit()
    try:
        loop.call_soon_threadsafe(_interrupt)      # type: ignore[attr-defined]
    except Exception:            # noqa: BLE001 - a loop closing: nothing left to cancel
        _quit()


def install() -> None:
    """This module's handler for SIGINT (in the main thread only, as signals are)."""
    _signal.signal(_signal.SIGINT, on_sigint)


NOT_CLI = ("--repl-worker", "gui", "--gui", "--smoke-quit-after")    # a REPL worker, the window


def install_for_cli(program: bool) -> None:
    """install() when this process is `rlm-studio` running a CLI command (`program`: the
    caller knows it is the program: the console script, `python -m app.main`, the frozen
    binary), not the window or a REPL worker."""
    if (program and sys.argv[1:2] and sys.argv[1] not in NOT_CLI
            and not sys.argv[1].startswith("--multiprocessing")):    # a frozen app's helper process
        install()
    elif program and _signal.SIGINT in _signal.sigpending():
        # A Ctrl+C held since the process started (the bundle's launcher, packaging/launcher.c,
        # starts it with SIGINT blocked), and Python's own handler would raise it here, in the
        # middle of the package's import: nothing has started yet, so quit as the CLI does.
        _quit()
