"""Entry point of `rlm-studio` (also of the frozen binary).

No arguments: the desktop window. A subcommand: the CLI. `--repl-worker`: this
process is a REPL worker (a frozen app has no `python` to start one with).
"""

from __future__ import annotations

import sys

# `python -m app.main` (the console script and the frozen binary did it in app/__init__.py)
if __name__ == "__main__":
    from app.sigint import install_for_cli  # lazy: not lazy, the first thing (app/sigint.py)
    install_for_cli(True)

import atexit  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import threading  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--repl-worker"]:
        # lazy: +5 modules in the start (where it runs)
        from core.repl.boot import main as worker_main
        return worker_main(args[1:])
    if args[:1] == ["ask"]:
        _preload_in_background()
    # Before anything can start a helper process: non-dumpable, keys out of the environment.
    # lazy: +30 modules in the start (where it runs)
    from core.engine_process import prepare_engine_process
    prepare_engine_process()
    # lazy: +15 modules in the start (where it runs)
    from app.cli import GUI_FLAGS, main as cli_main
    if not args or args[0] in GUI_FLAGS:
        # lazy: +88 modules in the start (where it runs)
        from app.gui import run_gui
        return run_gui(args)
    code = cli_main(args)
    if argv is None:
        # The command is done and its record written; the interpreter now winds down, and its
        # last step puts SIGINT back to the kernel's default: a Ctrl+C that lands then would
        # end the process "killed by SIGINT" instead of with this exit code.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the process once a command has returned: its record is complete by then (the run
    service awaited the sources, closed the writer and the store; the REPL workers and the
    ingest helpers are closed). What the interpreter does at exit is done here too, in its
    order: helper threads joined (threading's own shutdown, which also stops idle thread
    pools), the atexit functions run (logging flushed, temporary files removed), stdout and
    stderr flushed. What is skipped is tearing down every module and object, which nobody
    reads: 0.9-1.2 s after a 40 MB run at load 15-17, 5-9 ms with it skipped
    (docs/dev/speed-round-7.md)."""
    threading._shutdown()               # type: ignore[attr-defined]  (what Py_Finalize calls first)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe: nothing more can be said there
            pass
    os._exit(code)


def _preload_in_background() -> None:
    """What `ask` needs before its first request and can load in a thread from launch, beside
    the CLI's own imports, the store and the documents (the first request waits only for
    what is left, on the import lock or the map's lock): aiohttp, the direct route's
    transport (core/llm/openai_http.py; 0.15-0.5 s, mostly its two SSL contexts), then the
    price map (core/price_map.py, 30-60 ms) that the start check and Auto's choice read.
    Launch to first request, medians of 8 alternated: 0.77 s against 1.03 s with aiohttp
    alone (load 4.5-5.1), 1.10 s against 1.25 s with the map too (load 5.2-5.6). Not a
    daemon, as litellm's import (core/llm/litellm_import.py): a daemon thread caught
    mid-import by the interpreter's shutdown can crash the process."""
    threading.Thread(target=_preload, name="rlm-preload", daemon=False).start()


def _preload() -> None:
    import aiohttp  # noqa: F401  (lazy: loading it beside the start is this thread's point)
    from core.price_map import model_cost  # lazy: as above
    model_cost()


if __name__ == "__main__":
    sys.exit(main())
