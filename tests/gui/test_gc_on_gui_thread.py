"""Cyclic garbage holding Qt objects is freed on the GUI thread only (app/gui_gc.py).

A widget or model that is a Python subclass of a Qt class and sits in a reference cycle is
freed by whichever thread runs the collection; off the GUI thread its C++ destructor races
the GUI thread's event processing (the suite's SIGSEGV in pytest-qt's processEvents while an
ingest thread ran). The control shows that without the collector a collection on another
thread destroys such a widget on that thread."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.gui_gc import GuiThreadCollector, collect_on_gui_thread

REPO = Path(__file__).resolve().parents[2]


class _Pane(QWidget):
    def __init__(self) -> None:
        super().__init__()
        QVBoxLayout(self).addWidget(QLabel("pane", self))
        self.me = self                   # a cycle: only the cyclic collector frees it


class _Model(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.me = self

    def rowCount(self, parent=None) -> int:
        return 0

    def columnCount(self, parent=None) -> int:
        return 0

    def data(self, index, role=0):
        return None


def _garbage(freed_on: list[bool]) -> None:
    """Three panes and three models in cycles, unreachable once this returns; each records
    whether it was destroyed on the GUI thread."""
    gui = threading.get_ident()
    for make in (_Pane, _Model) * 3:
        obj = make()
        obj.destroyed.connect(lambda *_: freed_on.append(threading.get_ident() == gui),
                              Qt.ConnectionType.DirectConnection)


def _allocate_a_lot(kept: list) -> None:
    kept.extend([] for _ in range(1_000_000))     # a million tracked objects: a thousand gen-0 thresholds


def test_another_threads_allocations_never_free_qt_objects_off_the_gui_thread(qapp, qtbot):
    collector = collect_on_gui_thread(qapp)
    assert isinstance(collector, GuiThreadCollector) and collect_on_gui_thread(qapp) is collector
    assert not gc.isenabled()
    collected_on: list[bool] = []
    watch = lambda phase, info: phase == "start" and collected_on.append(threading.current_thread() is threading.main_thread())  # noqa: E731
    freed_on: list[bool] = []
    kept: list = []
    gc.callbacks.append(watch)
    try:
        _garbage(freed_on)
        worker = threading.Thread(target=_allocate_a_lot, args=(kept,))
        worker.start()
        worker.join()
        assert False not in collected_on and freed_on == []    # the thread allocated, collected nothing
        before = sum(collector.collections)
        qtbot.waitUntil(lambda: len(freed_on) == 6, timeout=5000)
    finally:
        gc.callbacks.remove(watch)
        del kept
    assert freed_on == [True] * 6 and sum(collector.collections) > before


def test_collection_turned_on_again_elsewhere_is_turned_off_at_the_next_tick(qapp, qtbot):
    collect_on_gui_thread(qapp)
    gc.enable()                          # e.g. a `finally: gc.enable()` around an import
    qtbot.waitUntil(lambda: not gc.isenabled(), timeout=5000)


def test_control_without_the_collector_another_thread_frees_the_widget():
    script = textwrap.dedent("""
        import gc, threading
        from PySide6.QtWidgets import QApplication
        from tests.gui.test_gc_on_gui_thread import _garbage
        app = QApplication([])
        freed_on = []
        _garbage(freed_on)
        other = threading.Thread(target=gc.collect)
        other.start()
        other.join()
        print("off the GUI thread:", freed_on.count(False), "of", len(freed_on))
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "off the GUI thread: 6 of 6" in proc.stdout, proc.stdout + proc.stderr[-2000:]
