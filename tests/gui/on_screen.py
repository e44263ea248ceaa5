"""The window on a screen of a given size (run by tests/gui/test_window_screens.py, which
starts pytest on this file with the offscreen platform's screen set to 1024x700, 1366x768
or 1920x1080 through `offscreen:configfile=`; the file is not collected on its own).

Asserted against QScreen.availableGeometry(): the first window, the window after a real
run with History open, with Run blocked by a long reason and three fixes, with History
toggled, after the main splitter is dragged both ways, and after a restart over a layout
saved on a larger screen."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QWidget

from tests.gui.test_window_layout import run_two_folders, started
from tests.support.gui_app import flush_qt, qloop, run_async, studio, studio_home, wait_until  # noqa: F401

REASON = ("No price is known for lab/sub, so a dollar cap cannot be kept: if it runs on this "
          "computer, mark it free; if it is paid, give it a price, or run without a cap.")
FIXES = [("a", "Mark lab/sub free"), ("b", "Set a price…"), ("c", "Run without a cap")]
CAUTION = ("The dollar cap $0.10 leaves room for 2 sub-calls in flight at once (each reserves up to "
           "$0.0312: a reply of up to 4,096 tokens), so the other sub-calls wait for them.")


@pytest.fixture
def screen(qapp) -> QRect:
    wanted = os.environ.get("RLM_TEST_SCREEN", "")
    assert wanted, "run through tests/gui/test_window_screens.py (it sets the screen's size)"
    free = qapp.primaryScreen().availableGeometry()
    assert f"{free.width()}x{free.height()}" == wanted, f"the screen is {free}, not {wanted}"
    return free


def on_screen(widget: QWidget) -> QRect:
    return QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())


def assert_fits(window, qapp, free: QRect, what: str) -> None:
    for _ in range(3):
        qapp.processEvents()
    frame = window.frameGeometry()
    assert window.width() <= free.width() and window.height() <= free.height(), \
        f"{what}: the window is {window.width()}x{window.height()} on a {free.width()}x{free.height()} screen"
    assert free.contains(frame), f"{what}: {frame} is not inside the screen {free}"
    for name, pane in (("sources", window.sources_pane), ("question", window.question_panel),
                       ("centre", window.center), ("history", window.history_pane)):
        if pane.isVisibleTo(window):
            r = on_screen(pane)
            assert free.contains(r), f"{what}: {name} {r} is off the screen {free}"
            assert r.width() >= 150, f"{what}: {name} is squashed to {r.width()} px"
    qp = window.question_panel
    # The question panel never scrolls sideways: its content fits its viewport.
    assert qp.content.minimumSizeHint().width() <= qp.scroll.viewport().width(), \
        f"{what}: the question's fields need {qp.content.minimumSizeHint().width()} px of " \
        f"{qp.scroll.viewport().width()}"
    assert qp.content.width() <= qp.scroll.viewport().width()
    for button in (qp.run_button, qp.stop_button, *qp.fix_buttons):
        assert button.isVisibleTo(window), f"{what}: {button.text()} is hidden"
        r = on_screen(button)
        assert on_screen(qp).contains(r) and free.contains(r), \
            f"{what}: {button.text()} {r} is cut (panel {on_screen(qp)})"
        assert button.width() >= button.sizeHint().width(), f"{what}: {button.text()!r} is cut"
    if qp.blocked() or qp.caution:
        reason = qp.blocked_label
        assert reason.isVisibleTo(window) and on_screen(qp).contains(on_screen(reason))
        assert reason.height() >= reason.heightForWidth(reason.width()), \
            f"{what}: the reason is cut (left {window.left_splitter.sizes()}, panel needs {qp.required_height()}, " \
            f"sources at least {window.sources_pane.minimumSizeHint().height()}, footer {qp.footer.height()}: " \
            f"{[(type(c).__name__, c.height()) for c in qp.footer.children() if isinstance(c, QWidget) and c.isVisible()]} " \
            f"sources: {[(type(c).__name__, c.minimumSizeHint().height()) for c in window.sources_pane.children() if isinstance(c, QWidget) and c.isVisible()]})"


def assert_dialogs_fit(window, controller, free: QRect) -> None:
    """Every dialog opens inside the screen (with no window manager to move it)."""
    from ui.compare_view import CompareView
    from ui.direct_compare import DirectCompareView
    from ui.guide import GuideDialog
    from ui.models_view import ModelsView
    from ui.source_viewer import SourceViewer
    from ui.verify_view import VerifyView
    dialogs = [cls(window) for cls in (CompareView, DirectCompareView, ModelsView, SourceViewer, VerifyView)]
    dialogs += [GuideDialog(parent=window), controller.open_settings()]
    try:
        for dialog in dialogs:
            assert dialog.width() <= free.width() and dialog.height() <= free.height(), \
                f"{type(dialog).__name__} opens at {dialog.width()}x{dialog.height()} on {free.width()}x{free.height()}"
    finally:
        for dialog in dialogs:
            dialog.close()
            dialog.deleteLater()


def drag(qtbot, splitter, index: int, dx: int) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    handle = splitter.handle(index)
    start = handle.mapToParent(handle.rect().center())      # in the splitter: the handle moves
    QTest.mousePress(handle, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     handle.mapFromParent(start))
    for step in range(1, 6):
        QTest.mouseMove(handle, handle.mapFromParent(start + QPoint(dx * step // 5, 0)))
    QTest.mouseRelease(handle, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       handle.mapFromParent(start + QPoint(dx, 0)))


def test_the_window_gives_way_to_the_screen(screen, studio, qloop, qapp, qtbot, server, tmp_path):
    window, controller = studio
    assert_fits(window, qapp, screen, "the first window")
    window.showMaximized()
    assert_fits(window, qapp, screen, "maximised")
    run_two_folders(window, controller, server, tmp_path, qloop)
    window.show_history(True)
    assert_fits(window, qapp, screen, "after a run, History open")
    trust = controller.trust                       # the Sub-calls tab shows five rows at least
    trust.tabs.setCurrentWidget(trust.results_table)
    qapp.processEvents()
    table = trust.results_table.table
    assert table.viewport().height() >= 5 * table.verticalHeader().defaultSectionSize(), \
        f"the Sub-calls tab shows {table.viewport().height()} px of rows"
    trust.tabs.setCurrentIndex(0)
    tree = window.run_panes.tree                   # the call tree is no two-row sliver
    assert tree.viewport().height() >= 6 * tree.sizeHintForRow(0), \
        f"the call tree shows {tree.viewport().height()} px ({window.run_panes.side_splitter.sizes()})"
    assert_dialogs_fit(window, controller, screen)
    qp = window.question_panel
    qp.set_caution(CAUTION, [("d", "Set the cap to $0.27")], "Run: 2 sub-calls at a time")
    assert qp.run_button.isEnabled()
    assert_fits(window, qapp, screen, "Run with a caution, History open")
    qp.set_caution("")
    qp.set_blocked(REASON, FIXES)
    assert not qp.run_button.isEnabled()
    assert_fits(window, qapp, screen, "Run blocked, History open")
    window.show_history(False)
    assert_fits(window, qapp, screen, "Run blocked, History closed")
    window.show_history(True)
    assert_fits(window, qapp, screen, "History open again")
    # The main splitter moves both ways, and History's handle too.
    splitter = window.main_splitter
    before = splitter.sizes()
    drag(qtbot, splitter, 1, -40)
    narrower = splitter.sizes()
    assert narrower[0] < before[0], f"the left column did not get narrower: {before} -> {narrower} " \
        f"(it needs {window.left_splitter.minimumSizeHint().width()}: sources " \
        f"{window.sources_pane.minimumSizeHint().width()}, question {qp.minimumSizeHint().width()}, " \
        f"{[(type(w).__name__, w.minimumSizeHint().width()) for w in qp.footer.findChildren(QWidget) if w.isVisible()]})"
    drag(qtbot, splitter, 1, 90)
    wider = splitter.sizes()
    assert wider[0] > narrower[0], f"the left column did not get wider: {narrower} -> {wider}"
    drag(qtbot, splitter, 2, -50)
    assert splitter.sizes()[2] > wider[2], f"History did not get wider: {wider} -> {splitter.sizes()}"
    history = splitter.sizes()[2]
    drag(qtbot, splitter, 2, 30)
    assert splitter.sizes()[2] < history, f"History did not get narrower: {splitter.sizes()}"
    assert_fits(window, qapp, screen, "after dragging the splitters")
    qp.set_blocked("")


def test_a_layout_saved_on_a_larger_screen_is_restored_within_this_one(screen, studio, qloop, qapp):
    window, controller = studio
    started(controller, qloop)
    window.show_history(True)
    # The layout an earlier start left: a left column of 58% (grown by wide content) in a
    # window wider than this screen.
    from PySide6.QtWidgets import QSplitter
    from ui.main_window import _b64
    big = QSplitter()
    for _ in range(3):
        big.addWidget(QWidget())
    width = window.main_splitter.width()
    big.resize(width, 500)
    big.setSizes([int(width * 0.58), int(width * 0.17), int(width * 0.25)])
    window.resize(screen.width() + 900, screen.height() + 300)
    state = {**window.save_state(), "history_visible": False,
             "splitters": {**window.save_state()["splitters"], "main": _b64(big.saveState())}}
    from app.gui import build_window
    again, other = build_window(qapp)
    try:
        again.restore_state(state)
        again.show()
        started(other, qloop)
        assert_fits(again, qapp, screen, "restored from a larger screen")
        sizes = again.main_splitter.sizes()
        assert sizes[0] <= again.width() * 0.41, f"the left column came back at {sizes} of {again.width()}"
        assert sizes[1] >= again.width() * 0.3, f"the run panes came back at {sizes} of {again.width()}"
    finally:
        qloop.run_until_complete(other.shutdown(timeout=5))
        again.close()
        again.deleteLater()
        flush_qt(qapp)
