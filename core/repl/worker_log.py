"""The sandbox modules' logger, which imports `logging` only when it must.

The worker's first interpreter (core/repl/boot.py) builds the box with confine, landlock,
seccomp and cgroup; importing `logging` there (and with it re, enum, traceback, string)
cost milliseconds at every worker start, for warnings that almost never come. Until
something has imported `logging`, nobody can have configured it: debug and info go nowhere
(as at the worker's WARNING level), warnings and errors are written to stderr as the
worker's log would write them. Once `logging` is imported (the engine, tests, the worker
after its start), every call goes to it.
"""

from __future__ import annotations

import sys

_NAMES = {10: "DEBUG", 20: "INFO", 30: "WARNING", 40: "ERROR"}


class LazyLog:
    def __init__(self, name: str) -> None:
        self.name = name

    def _log(self, level: int, msg: str, *args: object, **kwargs: object) -> None:
        logging = sys.modules.get("logging")
        if logging is not None:
            logging.getLogger(self.name).log(level, msg, *args, **kwargs)
        elif level >= 30 and sys.__stderr__ is not None:
            sys.__stderr__.write(f"repl-worker: {_NAMES[level]} {msg % args if args else msg}\n")

    def debug(self, msg: str, *args: object, **kwargs: object) -> None:
        self._log(10, msg, *args, **kwargs)

    def info(self, msg: str, *args: object, **kwargs: object) -> None:
        self._log(20, msg, *args, **kwargs)

    def warning(self, msg: str, *args: object, **kwargs: object) -> None:
        self._log(30, msg, *args, **kwargs)

    def error(self, msg: str, *args: object, **kwargs: object) -> None:
        self._log(40, msg, *args, **kwargs)


def get_logger(name: str) -> LazyLog:
    return LazyLog(name)
