"""The REPL worker's flags, read by hand for both of its interpreters (core/repl/boot.py and
core/repl/worker.py). argparse, with the gettext, locale, shutil, bz2 and lzma it pulls in,
cost 8-10 ms of CPU at each start, twice in namespace mode (tests/bench/bench_sandbox.py).

    --fd-in N --fd-out M      the protocol pipes (required without --stdio)
    --stdio                   the protocol comes on stdin/stdout (spawned without pass_fds)
    --memory-limit-mb N       RLIMIT_AS (and the cgroup's memory.max)
    --no-namespace            no namespaces: Landlock, seccomp and the audit hook only
    --context-dir DIR         a directory the worker may read (the engine's context files)
    --forward-signals         spawned without a process group: pass SIGINT on to the worker
    --no-audit-hook           tests only: without namespaces, Landlock and seccomp alone
    --dir-limit-mb N          size limit of the worker's directory
    --sandbox-fd N            started again inside the box: its report and sys.path come here
    --repl-worker             (a frozen app's marker: ignored)
"""

from __future__ import annotations

INT_FLAGS = ("--fd-in", "--fd-out", "--memory-limit-mb", "--dir-limit-mb", "--sandbox-fd")
STR_FLAGS = ("--context-dir",)
BOOL_FLAGS = ("--stdio", "--no-namespace", "--forward-signals", "--no-audit-hook")


class Args:
    """The flags as attributes (fd_in, no_namespace, ...); absent ones are None or False.
    An unknown argument is an error (SystemExit with the message)."""

    def __init__(self, argv: list[str]) -> None:
        values: dict[str, object] = {f: None for f in INT_FLAGS + STR_FLAGS}
        values.update({f: False for f in BOOL_FLAGS})
        it = iter(a for a in argv if a != "--repl-worker")
        for arg in it:
            flag, eq, inline = arg.partition("=")
            if flag in BOOL_FLAGS and not eq:
                values[flag] = True
            elif flag in values and flag not in BOOL_FLAGS:
                text = inline if eq else next(it, None)
                if text is None or not eq and text.startswith("--"):
                    raise SystemExit(f"repl-worker: {flag} needs a value")
                try:
                    values[flag] = text if flag in STR_FLAGS else int(text)
                except ValueError:
                    raise SystemExit(f"repl-worker: {flag} takes a number, got {text!r}") from None
            else:
                raise SystemExit(f"repl-worker: unknown argument {arg!r} (the flags: "
                                 f"{', '.join(INT_FLAGS + STR_FLAGS + BOOL_FLAGS)})")
        for flag, value in values.items():
            setattr(self, flag[2:].replace("-", "_"), value)


def parse(argv: list[str]) -> Args:
    """The worker's flags: an unknown one, a missing value and missing pipes are errors
    (exit status 1, the message on stderr), told before any box is built."""
    args = Args(argv)
    if not args.stdio and (args.fd_in is None or args.fd_out is None):
        raise SystemExit("repl-worker: --fd-in and --fd-out are required without --stdio")
    return args
