"""Tab goes through a pane as it reads: left to right, top to bottom.

Widgets that glue in app/ adds to a pane later (the batch thresholds, the cost
line, "Ask a follow-up") would otherwise come last in the focus chain, after
every other pane: `order_by_position` puts them where they are on screen.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QWidget

ROW_PX = 10        # widgets whose tops are this close count as one row


def focusable(container: QWidget) -> list[QWidget]:
    found = []
    for w in container.findChildren(QWidget):
        if not (w.focusPolicy() & Qt.FocusPolicy.TabFocus) or w.focusProxy() is not None:
            continue
        if not w.isVisibleTo(container):
            continue
        parent = w.parentWidget()
        if isinstance(parent, (QAbstractSpinBox, QComboBox)):     # their line edits: the box counts
            continue
        found.append(w)
    return found


def order_by_position(container: QWidget) -> list[QWidget]:
    """Chain the container's focusable widgets in reading order; returns them in that order."""
    def key(w: QWidget) -> tuple[int, int]:
        pos = w.mapTo(container, QPoint(0, 0))
        return (pos.y() // ROW_PX, pos.x())
    widgets = sorted(focusable(container), key=key)
    for a, b in zip(widgets, widgets[1:]):
        QWidget.setTabOrder(a, b)
    return widgets
