"""The REPL worker's entry: build the box, then run the worker in it.

    python -S -P -c "...from core.repl.boot import main..." --fd-in N --fd-out M [flags]
    <frozen app> --repl-worker ...

(the flags: core/repl/worker_args.py; -c rather than -m, as core/repl/client.py says why)

In namespace mode the worker proper starts its interpreter again from neutral paths
(core/repl/neutral.py), so this first interpreter imports only what the box needs (and
runs with -S: no .pth file of the venv is executed, its site-packages are added as plain
directories). Elsewhere (the fallback, other systems) it goes on as the worker itself.
"""

from __future__ import annotations

import os
import sys

from core.repl.stdio_fds import protocol_off_stdio
from core.repl import worker_args


def main(argv: list[str]) -> int:
    args = worker_args.parse(argv)        # a wrong flag stops here, before any box is built
    if args.sandbox_fd is not None:
        from core.repl import worker      # the second interpreter
        return worker.main(argv)
    # (no logging here: core/repl/worker_log.py writes the box's warnings until the worker's own)
    if args.stdio:
        args.fd_in, args.fd_out = protocol_off_stdio()
        argv = [a for a in argv if a != "--stdio"] + ["--fd-in", str(args.fd_in), "--fd-out", str(args.fd_out)]
    from core.repl import neutral, sandbox
    from core.repl.sandbox import DIR_LIMIT_MB
    # No model code has run yet and we have one thread: build the box (this forks into a
    # PID namespace when it can; only the worker proper comes back here).
    info = sandbox.build(
        memory_limit_mb=args.memory_limit_mb, allow_namespace=not args.no_namespace,
        fds=(args.fd_in, args.fd_out), context_dir=args.context_dir,
        forward_signals=args.forward_signals, dir_limit_mb=args.dir_limit_mb or DIR_LIMIT_MB,
        audit_hook=not args.no_audit_hook)
    if sandbox.second_start is not None:
        try:
            neutral.exec_worker(info, sandbox.second_start, (args.fd_in, args.fd_out), args.forward_signals)
        except OSError as exc:          # the view has no host path left to go on with
            sys.stderr.write(f"repl-worker: starting the worker from its neutral paths failed: {exc}\n")
            os._exit(3)
    if sys.flags.no_site:
        sys.path.extend(d for d in neutral.site_dirs() if d not in sys.path)
        neutral.site_builtins()
    from core.repl import worker
    return worker.main(argv, info=info)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
