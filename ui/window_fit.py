"""The main window and the screen: its first size, kept inside the screen's free area,
and never grown by a banner."""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, QSize, QTimer
from PySide6.QtWidgets import QApplication, QSplitter, QWidget

log = logging.getLogger(__name__)


def fitting_size() -> QSize:
    """The first window size: 1400x860, or the screen's free area when it is smaller
    (a 1366x768 laptop must see Run and Settings without moving the window)."""
    screen = QApplication.primaryScreen()
    want = QSize(1400, 860)
    if screen is None:
        return want
    free = screen.availableGeometry().size()
    return QSize(min(want.width(), free.width()), min(want.height(), free.height() - 30))


# The side panes' largest shares of the main splitter's width (left column, History): the
# run panes keep the rest, whatever a larger screen or a wide accessory left behind.
SIDE_SHARES = {0: 0.40, 2: 0.30}


def fit_side_panes(splitter: QSplitter) -> bool:
    """Cut a side pane wider than its share back to it, the run panes taking the room;
    returns whether anything moved (a drag within the shares is left as it is)."""
    sizes = splitter.sizes()
    total = sum(sizes)
    if len(sizes) != 3 or total <= 0:
        return False
    moved = False
    for index, share in SIDE_SHARES.items():
        widget = splitter.widget(index)
        cap = max(widget.minimumSizeHint().width(), int(total * share))
        if sizes[index] > cap:
            sizes[1] += sizes[index] - cap
            sizes[index] = cap
            moved = True
    if moved:
        splitter.setSizes(sizes)
    return moved


def keep_on_screen(window: QWidget) -> None:
    """The window's frame inside the free area of the screen it is on: a size remembered
    from a larger screen never puts its bottom off-screen (QScreen.availableGeometry)."""
    screen = window.screen() or QApplication.primaryScreen()
    if screen is None:
        return
    free = screen.availableGeometry()
    frame = window.frameGeometry()
    dw, dh = frame.width() - window.width(), frame.height() - window.height()
    width = min(window.width(), free.width() - dw)
    height = min(window.height(), free.height() - dh)
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
    frame = window.frameGeometry()
    x = min(max(frame.x(), free.left()), free.right() + 1 - frame.width())
    y = min(max(frame.y(), free.top()), free.bottom() + 1 - frame.height())
    if (x, y) != (frame.x(), frame.y()):
        window.move(x, y)


class BannerGuard(QObject):
    """A banner takes its room from the panes: the window is as tall while it shows
    as before it, and after it closes. (The panes' minimum heights leave the room;
    this sets the window back should a minimum still grow it.)"""

    def __init__(self, window: QWidget, banner: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._before: int | None = None
        banner.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if event.type() in (QEvent.Type.Show, QEvent.Type.Hide):
            shown = event.type() == QEvent.Type.Show
            if shown and self._before is None:
                self._before = self._window.height()
            QTimer.singleShot(0, self, lambda: self._undo_growth(shown))
        return super().eventFilter(obj, event)

    def _undo_growth(self, shown: bool) -> None:
        window, before = self._window, self._before
        if before is not None and window.height() > before:
            log.info("the window grew from %d to %d px with a banner: set back", before, window.height())
            window.resize(window.width(), before)
        if not shown:
            self._before = None


def sized_to_screen(widget: QWidget, width: int, height: int) -> None:
    """A dialog's first size: `width` x `height`, or less on a smaller screen (its free area,
    less room for a title bar), so no dialog opens wider or taller than the screen."""
    screen = widget.screen() or QApplication.primaryScreen()
    if screen is not None:
        free = screen.availableGeometry()
        width, height = min(width, free.width() - 16), min(height, free.height() - 40)
    widget.resize(width, height)
