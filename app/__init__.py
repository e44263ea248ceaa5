"""The composition root: entry point, CLI, settings, wiring core <-> ui."""

import _signal
import sys as _sys

# The first instruction of `rlm-studio` that is ours (the console script and the frozen binary
# import this package before app.main): from here on every Ctrl+C counts (app/sigint.py). It
# is held (blocked, so it stays pending) while the handler's module loads, then delivered to it;
# the bundle's launcher (packaging/launcher.c) has held it since the process started.
if getattr(_sys, "frozen", False) or _sys.argv[0].endswith("rlm-studio"):
    _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT})
    try:
        from app.sigint import install_for_cli as _install_for_cli
        _install_for_cli(True)
    finally:
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {_signal.SIGINT})
