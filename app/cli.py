"""The command line: `rlm-studio ask|runs|keys|ingest ...` (same engine as the window)."""

from __future__ import annotations

import argparse
import logging
import sys

from app.version import __version__

GUI_FLAGS = ("gui", "--smoke-quit-after", "--gui")


# The module that registers each command, in the order `--help` lists them.
COMMANDS = {"ask": "app.cli_ask", "runs": "app.cli_runs", "keys": "app.cli_keys", "ingest": "app.cli_ingest",
            "eval": "app.cli_eval", "scorecards": "app.cli_eval", "models": "app.cli_models", "grid": "app.cli_grid"}


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """Every command's parser; only the named one's when `argv` starts with a command (the
    others' modules and arguments are 80-100 ms of `ask`'s start at load 5.5, and only
    `--help` or a mistyped command lists them)."""
    parser = argparse.ArgumentParser(
        prog="rlm-studio",
        description="Ask questions over your own documents with a Recursive Language Model. "
                    "Without a command, the desktop window opens.")
    parser.add_argument("--version", action="version", version=f"rlm-studio {__version__}")
    parser.add_argument("--log-level", default="WARNING", help="logging level for stderr (default WARNING)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = COMMANDS.get(argv[0]) if argv else None
    for name in dict.fromkeys([named] if named else COMMANDS.values()):
        # lazy: a command's module (app/cli_*.py) is imported only for that command, or for --help;
        # the window's start (app.main -> app.cli) never imports them
        module = __import__(name, fromlist=["register"])
        module.register(sub)
    return parser


def migrate_identity() -> list[str]:
    """Data and keys kept under the old, shared names move to this app's own, once
    (core/identity_migration.py); what was done, for stderr. The data moves now; the keys
    just before the command first opens the keychain (a run whose calls carry no key never
    does, and keyring's import is 150-220 ms of its start), until their step is recorded."""
    # lazy: +25 modules in the command (where it runs)
    from core import identity_migration as moving
    moving.migrate_data()
    if not moving.keys_done():
        # lazy: +17 modules in the command (where it runs)
        from core import secrets

        def move_keys(store: object) -> None:
            moving.migrate_keys(store)
            for note in moving.take_notes():
                print(f"note: {note}", file=sys.stderr)
        secrets.before_first_use(move_keys)
    return moving.take_notes()


def main(argv: list[str]) -> int:
    """Everything the CLI prints goes through escape_controls (core/control_chars.py): model
    text, cell output, notices, file and member names can hold terminal escape sequences."""
    # lazy: +6 modules in the command (where it runs)
    from core.control_chars import EscapingStream
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(sys.stdout), EscapingStream(sys.stderr)
    code = _main(argv)     # an exception leaves the wrappers on: its traceback is escaped too
    sys.stdout.flush()
    sys.stderr.flush()
    sys.stdout, sys.stderr = saved
    return code


def _main(argv: list[str]) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    for note in migrate_identity():
        print(f"note: {note}", file=sys.stderr)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
