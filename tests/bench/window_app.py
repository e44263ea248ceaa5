"""The real window for a benchmark's inner process: offscreen QApplication, qasync loop,
app.gui.build_window at 1400x900, shown; `scenario(app, window, controller)` runs on the
loop, then the controller shuts down. Returns what the scenario returned."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable


def run_in_window(scenario: Callable[[Any, Any, Any], Awaitable[Any]]) -> Any:
    import qasync
    from PySide6.QtWidgets import QApplication
    app = QApplication(["rlm-studio"])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    from app.gui import build_window
    window, controller = build_window(app)
    window.resize(1400, 900)
    window.show()
    with loop:
        result = loop.run_until_complete(scenario(app, window, controller))
        loop.run_until_complete(controller.shutdown())
    return result
