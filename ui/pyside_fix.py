"""Work around a reference-count bug of PySide6 6.12.0 on CPython < 3.12.

`SignalInstance.emit()` and `SignalInstance.disconnect()` return True/False
without taking a reference. Each call from Python then drops one reference to
`True` (or `False`); after about a thousand emits the interpreter aborts with
"Fatal Python error: bool_dealloc" (on 3.12+ the bools are immortal and nothing
happens). `install()` probes for the bug once and, only if it is there, wraps
both methods to give back the missing reference. Idempotent; a no-op on a
fixed PySide6.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from typing import Any

from PySide6.QtCore import QObject, Signal, SignalInstance

log = logging.getLogger(__name__)
_installed = False


class _Probe(QObject):
    ping = Signal()


def _leaks(call: Any) -> bool:
    before = sys.getrefcount(True) + sys.getrefcount(False)
    for _ in range(8):
        call()
    return sys.getrefcount(True) + sys.getrefcount(False) < before - 4


def install() -> bool:
    """Patch SignalInstance if this PySide6 has the bug; True if patched."""
    global _installed
    if _installed:
        return True
    probe = _Probe()
    slot = lambda: None  # noqa: E731
    emit_leaks = _leaks(probe.ping.emit)
    probe.ping.connect(slot)

    def connect_disconnect() -> None:
        probe.ping.disconnect(slot)
        probe.ping.connect(slot)
    disconnect_leaks = _leaks(connect_disconnect)
    incref = ctypes.pythonapi.Py_IncRef
    incref.argtypes = [ctypes.py_object]
    incref.restype = None
    if emit_leaks:
        original_emit = SignalInstance.emit

        def emit(self: SignalInstance, *args: Any) -> Any:
            result = original_emit(self, *args)
            if result is True or result is False:
                incref(result)
            return result
        SignalInstance.emit = emit  # type: ignore[method-assign]
    if disconnect_leaks:
        original_disconnect = SignalInstance.disconnect

        def disconnect(self: SignalInstance, *args: Any) -> Any:
            result = original_disconnect(self, *args)
            if result is True or result is False:
                incref(result)
            return result
        SignalInstance.disconnect = disconnect  # type: ignore[method-assign]
    _installed = emit_leaks or disconnect_leaks
    if _installed:
        log.info("PySide6 bool refcount workaround installed (emit=%s, disconnect=%s)",
                 emit_leaks, disconnect_leaks)
    return _installed


install()
