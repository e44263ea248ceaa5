"""litellm, imported lazily, once, and quietly.

Importing litellm costs about two seconds and, left to itself, it fetches the
price map from GitHub at import time. So nothing imports it at module level:
callers ask `litellm()` when they are about to make a call or read a price.
Before the import we set LITELLM_LOCAL_MODEL_COST_MAP=True (the price map that
ships inside the installed litellm release is used; no network at import);
after it we silence its banners and telemetry and clear every callback, so a
call goes to the provider and nowhere else.

The import is seconds of CPU. A command that knows it will call a model soon
starts it at once in a thread (`start_background_import()`), and does its other
work (reading documents, starting the REPL worker) meanwhile; code on an event
loop waits for it with `await litellm_async()`, which never blocks the loop.
The thread is not a daemon (a process ending mid-import waits for it), and its
import does no full garbage collection (only the main thread's does).
"""

from __future__ import annotations

import asyncio
import builtins
import gc
import logging
import os
import threading
from concurrent.futures import Future
from contextlib import contextmanager
from types import ModuleType
from typing import Iterator

from core import switch_interval

log = logging.getLogger(__name__)

CALLBACK_LISTS = ("callbacks", "input_callback", "success_callback", "failure_callback",
                  "service_callback", "_async_success_callback", "_async_failure_callback",
                  "_async_input_callback")

_lock = threading.Lock()
_module: ModuleType | None = None
_started_lock = threading.Lock()
_background: Future | None = None


def litellm() -> ModuleType:
    """The configured litellm module (imported on first use)."""
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            _module = _import()
    return _module


def loaded() -> ModuleType | None:
    """litellm when its import has finished, else None (never waits, never imports). While
    the import runs in its thread, `sys.modules` already holds a half-made litellm: code on
    other threads must not touch it (importing its submodules then fails)."""
    return _module


def start_background_import() -> Future:
    """Import litellm in a daemon thread (idempotent); the future resolves to the module."""
    global _background
    with _started_lock:
        if _background is None:
            _background = Future()
            # Not a daemon: a process that ends while litellm is still importing waits for
            # it. A daemon thread caught mid-import by the interpreter's shutdown crashed the
            # process (SIGSEGV, seen when a quick run ended seconds before the import did).
            threading.Thread(target=_import_in_background, args=(_background,),
                             name="rlm-litellm-import", daemon=False).start()
        return _background


async def litellm_async() -> ModuleType:
    """The configured litellm module, imported without blocking the running event loop."""
    if _module is not None:
        return _module
    return await asyncio.wrap_future(start_background_import())


IMPORT_SWITCH_INTERVAL_S = 0.001


def _import_in_background(done: Future) -> None:
    # The import is seconds of pure-Python CPU holding the GIL; a thread that wants the GIL
    # meanwhile (the event loop, woken by a reply) waits up to the switch interval (5 ms by
    # default) each time. Shorter while the import runs: the run beside it waits less.
    # No garbage collection while it runs: the import allocates hundreds of thousands of
    # objects, so collections would run in this thread, and one that finalises the window's
    # garbage Qt objects off the GUI thread leaves Qt a dangling timer (SIGSEGV in
    # QTimerInfoList::activateTimers on the GUI thread, seen under gdb). Collection resumes
    # when the import ends.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with switch_interval.at_most(IMPORT_SWITCH_INTERVAL_S):
            lm = litellm()
    except BaseException as exc:      # the caller that awaits it sees the error
        done.set_exception(exc)
        return
    finally:
        if collecting:
            gc.enable()
    done.set_result(lm)


@contextmanager
def _without_qt_import_hook() -> Iterator[None]:
    """PySide6 (shibokensupport's feature module, PYSIDE-2029) replaces `builtins.__import__` with
    one that reads the source of each module imported for the first time (`inspect.getsource`,
    which asks the module for `__wrapped__`). On a pydantic module that call runs its lazy
    `__getattr__`, which imports `pydantic._internal._validators`; when that module is the one
    being imported, the import fails ("cannot import name 'import_string' from partially
    initialized module"): the window's first run through litellm failed so. litellm and pydantic
    are imported with Python's own import (`builtins.__orig_import__`, kept by PySide6); other
    threads' imports meanwhile skip the hook too, which only serves `from __feature__ import`."""
    original = getattr(builtins, "__orig_import__", None)
    hooked = builtins.__import__
    if original is None or hooked is original:
        yield
        return
    builtins.__import__ = original
    try:
        yield
    finally:
        if builtins.__import__ is original:
            builtins.__import__ = hooked


def _import() -> ModuleType:
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    with _without_qt_import_hook():
        import litellm as lm

    lm.suppress_debug_info = True
    lm.telemetry = False
    lm.set_verbose = False
    lm.turn_off_message_logging = True        # prompts never reach a logging integration
    lm.drop_params = True                     # an OpenAI-compatible server may not know every param
    lm.num_retries = None                     # our retries are the only ones (client.py)
    for name in CALLBACK_LISTS:
        if isinstance(getattr(lm, name, None), list):
            getattr(lm, name).clear()
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.ERROR)
    log.debug("litellm %s loaded, %d priced models", _version(lm), len(lm.model_cost))
    # Importing litellm leaves ~400k long-lived objects that every full garbage collection
    # would walk again (0.3-0.45 s pauses during big fan-outs, felt as GUI stalls).
    # Move them out of the collector's way once. The full collection first runs only on the
    # main thread: elsewhere (the background import) it would finalise the window's garbage
    # Qt objects off the GUI thread, which crashed the window mid-run (SIGSEGV in the GUI
    # thread while litellm imported beside a run). Off the main thread, whatever garbage
    # exists at that moment is frozen with litellm's objects and never freed (small).
    if threading.current_thread() is threading.main_thread():
        gc.collect()
    gc.freeze()
    return lm


def _version(lm: ModuleType) -> str:
    try:
        from importlib.metadata import version
        return version("litellm")
    except Exception as exc:    # metadata missing in a frozen app: not worth failing for
        log.debug("litellm version unknown: %s", exc)
        return getattr(lm, "__version__", "?")


def cost_map_source() -> str:
    """"local" when the price map is the one bundled with litellm."""
    from litellm.litellm_core_utils.get_model_cost_map import get_model_cost_map_source_info
    litellm()
    return str(get_model_cost_map_source_info().get("source"))
