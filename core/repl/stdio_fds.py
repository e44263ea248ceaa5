"""The worker's protocol moved off stdio, for both of its interpreters (core/repl/boot.py, the
first; core/repl/worker.py, the worker proper). Imports only `os`: the first interpreter keeps
its imports to what the box needs."""

from __future__ import annotations

import os


def protocol_off_stdio() -> tuple[int, int]:
    """--stdio: keep the protocol on private copies of fd 0/1; fd 1 then goes to stderr (C-level
    output of model code must not land in the protocol) and fd 0 to /dev/null."""
    fd_in, fd_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    return fd_in, fd_out
