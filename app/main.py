"""Entry point of `rlm-studio` (also of the frozen binary).

No arguments: the desktop window. A subcommand: the CLI. `--repl-worker`: this
process is a REPL worker (a frozen app has no `python` to start one with).
"""

from __future__ import annotations

import sys
import signal


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--repl-worker"]:
        # lazy: +51 modules, 143 ms at load 9 (first use only)
        from core.repl.boot import main as worker_main
        return worker_main(args[1:])
    # Before anything can start a helper process: non-dumpable, keys out of the environment.
    # lazy: +32 modules, 106 ms at load 9 (first use only)
    from core.engine_process import prepare_engine_process
    prepare_engine_process()
    # lazy: +17 modules, 28 ms at load 9 (first use only)
    from app.cli import GUI_FLAGS, main as cli_main
    if not args or args[0] in GUI_FLAGS:
        # lazy: +88 modules, 177 ms at load 9 (first use only)
        from app.gui import run_gui
        return run_gui(args)
    code = cli_main(args)
    if argv is None:
        # The command is done and its record written; the interpreter now winds down, and its
        # last step puts SIGINT back to the kernel's default: a Ctrl+C that lands then would
        # end the process "killed by SIGINT" instead of with this exit code.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    return code


if __name__ == "__main__":
    sys.exit(main())
