"""In the window's process, cyclic garbage is collected on the GUI thread only.

Python's cyclic collector runs in whichever thread allocates when a generation's threshold
passes. In the window that is often not the GUI thread: the engine's event loop thread, the
ingest pool's threads, `run_blocking`'s executor. A collection there that frees a widget or a
model (a Python subclass of a Qt class caught in a reference cycle) runs its C++ destructor on
that thread while the GUI thread is inside `processEvents`: Qt's timer and widget lists change
under it and the process dies with SIGSEGV (seen in the test suite, in pytest-qt's
`_process_events` while an ingest thread ran, and under gdb in QTimerInfoList::activateTimers
while litellm was imported beside a run). So once the QApplication exists, automatic
collection is off and a timer on the GUI thread collects each generation whose threshold has
passed, as the interpreter would, every INTERVAL_MS. Other threads only allocate; their
cyclic garbage waits at most one interval.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 100


class GuiThreadCollector(QObject):
    """Owned by the QApplication; `collect_due()` runs on its thread."""

    def __init__(self, app: QObject) -> None:
        super().__init__(app)
        self.thresholds = gc.get_threshold()
        self.collections = [0, 0, 0]       # per generation, for tests and the log
        self.timer = QTimer(self)
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self.collect_due)
        gc.disable()
        self.timer.start()

    def collect_due(self) -> None:
        gc.disable()                # whoever turned it on again (a `finally: gc.enable()`)
        counts = gc.get_count()
        due = -1
        for generation in range(3):
            if counts[generation] <= self.thresholds[generation]:
                break
            due = generation
        if due >= 0:
            gc.collect(due)
            self.collections[due] += 1


def collect_on_gui_thread(app: QObject) -> GuiThreadCollector:
    """Install the collector on `app` (once; later calls return the same one)."""
    found = app.findChild(GuiThreadCollector)
    return found if found is not None else GuiThreadCollector(app)
