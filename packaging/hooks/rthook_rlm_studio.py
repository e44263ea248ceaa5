"""PyInstaller runtime hook: runs in every process of the frozen app (the
GUI, the CLI, each REPL worker, the ingest pool's helpers) before any of the
app's code. Kept tiny: it runs at the start of every REPL worker.
"""

import os
import sys

# litellm must read its bundled price map, never fetch one from the network at
# import time; the variable has to be set before anything imports litellm.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

# On Linux the bootloader restarts the program with LD_LIBRARY_PATH pointing
# into the bundle; the dynamic loader has read it by now (glibc keeps the value
# from start-up). Programs the app starts (a browser or file manager through
# xdg-open, ldconfig, ...) must load the system's libraries, not the bundle's,
# so the user's own value comes back. The REPL worker and the multiprocessing
# helpers are this executable again: its bootloader sets the variable anew.
if sys.platform.startswith("linux") and getattr(sys, "frozen", False):
    _orig = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if _orig is not None:
        os.environ["LD_LIBRARY_PATH"] = _orig
    else:
        os.environ.pop("LD_LIBRARY_PATH", None)
