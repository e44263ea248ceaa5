"""The composition root: entry point, CLI, settings, wiring core <-> ui."""

import sys as _sys

# The first instruction of `rlm-studio` that is ours (the console script and the frozen binary
# import this package before app.main): from here on every Ctrl+C counts (app/sigint.py).
if getattr(_sys, "frozen", False) or _sys.argv[0].endswith("rlm-studio"):
    from app.sigint import install_for_cli as _install_for_cli
    _install_for_cli(True)
