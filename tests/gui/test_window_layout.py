"""The window on the screens analysts have: 1024x700, 1280x720, 1366x768, 1920x1080.

After a real run against the scripted server (two folders, a skipped file, History
open, a replay with "Back to live" showing): no two visible panes overlap, every
pane and its widgets lie inside the window, the key columns are at least as wide
as their headers, the meter's figures do not run into each other, and the window
does not resize itself when History or the replay bar come and go.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import (
    QAbstractButton, QAbstractSpinBox, QComboBox, QLineEdit, QPlainTextEdit, QWidget,
)

from tests.gui.test_window_run import KEY, code
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from ui.history_pane import HistoryModel
from ui.sources_pane import SourcesModel

SIZES = [(1024, 700), (1280, 720), (1366, 768), (1920, 1080)]
ANALYST_SIZES = [(1024, 700), (1366, 768), (1920, 1080)]


def rect_in(widget: QWidget, window: QWidget) -> QRect:
    return QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())


def panes(window) -> dict[str, QWidget]:
    rp = window.run_panes
    found = {"sources": window.sources_pane, "question": window.question_panel,
             "meter": rp.meter, "transcript": rp.transcript, "tree": rp.tree, "detail": rp.detail,
             "history": window.history_pane, "toolbar": window.toolbar, "replay": rp.replay_bar}
    tabs = window.findChild(QWidget, "trustTabs")
    if tabs is not None:
        found["trust"] = tabs
    return {k: w for k, w in found.items() if w.isVisibleTo(window)}


def run_two_folders(window, controller, server, tmp_path, qloop):
    from app.settings import Endpoint
    controller.settings.endpoints = [Endpoint("lab", server.url, ["root", "sub"], needs_key=True)]
    controller.settings.caps["cell_timeout_s"] = 30
    controller.keys().set("lab", KEY)
    one, two = tmp_path / "quarterly-reports", tmp_path / "web-shop-logs"
    one.mkdir()
    two.mkdir()
    (one / "2024-Q3.md").write_text("# Q3\nCard payments failed for three hours.\n")
    (two / "webshop.log").write_text("09:42 card payment failed\n" * 40)
    (two / "junk.bin").write_bytes(b"\x00\x01\x02binary\x00" * 300)
    server.script("sub", fn=lambda r: "yes")
    server.script("root", replies=[code("out = llm_query_batched([d['text'][:50] for d in documents])\n"
                                        "FINAL('## Outage\\n\\n**Card payments failed** [doc:webshop.log:line 1]')")])

    async def body():
        controller.add_paths([str(one), str(two)])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), timeout=60,
                         what="reading")
        qp = window.question_panel
        qp.set_models("lab/root", "lab/sub")
        qp.set_caps({"max_depth": 1, "max_cost_usd": 0, "max_iterations": 3})
        qp.set_question("When did card payments fail, and which report mentions it?")
        qp.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=90, what="the run to end")
    run_async(qloop, body(), timeout=150)
    assert controller.last_outcome.status == "finished", window.notifier.history


def check_layout(window, qapp, size) -> None:
    qapp.processEvents()
    assert (window.width(), window.height()) == size, "the window resized itself"
    shown = panes(window)
    for name in ("sources", "question", "meter", "transcript", "tree", "history"):
        assert name in shown, f"{name} is not visible at {size}"
    frame = window.rect()
    rects = {k: rect_in(w, window) for k, w in shown.items()}
    for name, r in rects.items():
        assert frame.contains(r), f"{name} {r} is outside the window {frame} at {size}"
        assert r.width() > 40 and r.height() > 10, f"{name} is squashed to {r} at {size}"
    names = list(rects)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if shown[a].isAncestorOf(shown[b]) or shown[b].isAncestorOf(shown[a]):
                continue
            overlap = rects[a].intersected(rects[b])
            assert overlap.isEmpty(), f"{a} and {b} overlap by {overlap} at {size}"
    # Nothing of a pane's own layout is drawn outside it (buttons, fields, tables).
    for name in ("sources", "question", "history"):
        pane = shown[name]
        for child in pane.findChildren(QWidget):
            if child.isVisibleTo(pane) and child.parentWidget() is pane:
                assert pane.rect().contains(QRect(child.pos(), child.size())), \
                    f"{child.objectName() or type(child).__name__} of {name} is outside it at {size}"
    # The things one clicks are on screen: Run, Stop, Settings, History.
    for widget in (window.question_panel.run_button, window.question_panel.stop_button,
                   window.toolbar.widgetForAction(window.settings_action),
                   window.toolbar.widgetForAction(window.history_action)):
        assert widget.isVisibleTo(window) and frame.contains(rect_in(widget, window)), \
            f"{widget.text()} is off screen at {size}"
    # The meter's figures never run into each other.
    meter = window.run_panes.meter
    labels = [w for w in (meter.cost, meter.tokens, meter.in_flight, meter.elapsed, meter.iteration,
                          meter.cells, meter.status) if w.isVisibleTo(meter) and w.text()]
    for a, b in zip(labels, labels[1:]):
        assert a.geometry().right() < b.geometry().left(), f"{a.text()!r} runs into {b.text()!r} at {size}"
        assert a.width() >= a.sizeHint().width() - 1, f"{a.text()!r} is cut at {size} (meter {meter.width()}: {[(w.text(), w.geometry().getRect()) for w in labels]} {meter.layout().geometry()})"
    # Key columns are at least as wide as their header text.
    for table, columns in ((window.history_pane.table, (HistoryModel.COL_QUESTION, HistoryModel.COL_STATUS)),
                           (window.sources_pane.table, (SourcesModel.COL_STATUS, SourcesModel.COL_REASON))):
        header = table.horizontalHeader()
        for col in columns:
            if table.isColumnHidden(col):
                continue
            text = table.model().headerData(col, header.orientation())
            need = header.fontMetrics().horizontalAdvance(text)
            assert header.sectionSize(col) >= need, f"column {text!r} is {header.sectionSize(col)} px at {size}"


def test_panes_fit_every_common_screen(studio, qloop, qapp, server, tmp_path):
    window, controller = studio
    run_two_folders(window, controller, server, tmp_path, qloop)
    sources = window.sources_pane
    assert not sources.table.isColumnHidden(SourcesModel.COL_FOLDER)           # two folders: a column
    assert {r.folder for r in sources.rows()} == {"quarterly-reports", "web-shop-logs"}
    junk = next(r for r in sources.rows() if r.name == "junk.bin")
    assert junk.status == "skipped" and junk.size == 3000                       # its real size, not 0 B
    for size in SIZES:
        window.resize(*size)
        window.show_history(True)
        check_layout(window, qapp, size)
        # History and the replay bar come and go: the window keeps its size.
        controller.history.open_run(controller.last_outcome.run_id)
        qapp.processEvents()
        assert window.live_action.isVisible()
        check_layout(window, qapp, size)
        window.leave_replay_requested.emit()
        window.show_history(False)
        qapp.processEvents()
        assert (window.width(), window.height()) == size
        window.show_history(True)


@pytest.mark.parametrize("size", [(1366, 768)])
def test_first_start_on_a_laptop_screen_shows_run_and_settings(qapp, qloop, studio_home, size):
    """The first window is as large as the screen's free area allows, never larger."""
    from ui.main_window import fitting_size
    screen = qapp.primaryScreen().availableGeometry().size()
    first = fitting_size()
    assert first.width() <= screen.width() and first.height() <= screen.height()
    from app.gui import build_window
    window, controller = build_window(qapp)
    window.show()
    window.resize(*size)
    qapp.processEvents()
    try:
        frame = window.rect()
        for widget in (window.question_panel.run_button,
                       window.toolbar.widgetForAction(window.settings_action)):
            assert frame.contains(rect_in(widget, window)), widget.text()
    finally:
        qloop.run_until_complete(controller.shutdown(timeout=5))
        window.close()
        window.deleteLater()


def started(controller, qloop) -> None:
    """The window's start-up work (the server look-up, the keychain check) done: none of
    its threads still imports a module while a later test parses source."""
    glue = controller.first_run
    run_async(qloop, wait_until(lambda: glue.started and glue.discovery_task is not None
                                and glue.discovery_task.done() and glue.keys_task is not None
                                and glue.keys_task.done(), timeout=30, what="the start-up checks"))


def crushed_fields(window) -> list[str]:
    """Every control of the left column shorter than its size hint (a sliver), by name."""
    crushed = []
    for pane in (window.sources_pane, window.question_panel):
        for w in pane.findChildren(QWidget):
            if not w.isVisibleTo(window) or isinstance(w.parentWidget(), (QComboBox, QAbstractSpinBox)):
                continue
            if isinstance(w, QPlainTextEdit):
                need = w.minimumHeight() or w.fontMetrics().lineSpacing() * 3
            elif isinstance(w, (QComboBox, QAbstractSpinBox, QAbstractButton, QLineEdit)):
                need = w.sizeHint().height()
            else:
                continue
            if w.height() < need:
                crushed.append(f"{w.accessibleName() or w.objectName() or type(w).__name__}"
                               f" {w.height()} < {need}")
    return crushed


def test_fields_keep_their_height_in_every_state(studio, qloop, qapp, server, tmp_path):
    """After a run, during replay, while reading, with a banner and with Run blocked,
    at the three sizes: no field is squeezed below its size hint, Run is on screen,
    and the window keeps its size (a banner takes its room from the panes)."""
    window, controller = studio
    run_two_folders(window, controller, server, tmp_path, qloop)
    qp = window.question_panel
    qp.advanced.set_open(True)                      # the folded fields too
    for size in ANALYST_SIZES:
        window.resize(*size)
        window.show_history(True)
        states = []
        check_layout(window, qapp, size)
        states.append(("after a run", crushed_fields(window)))
        controller.history.open_run(controller.last_outcome.run_id)
        check_layout(window, qapp, size)
        states.append(("during replay", crushed_fields(window)))
        window.sources_pane.set_reading(True)
        window.sources_pane.set_progress(3, 40, 12_000, 900_000, "reports/2024-Q3.md")
        check_layout(window, qapp, size)
        states.append(("while reading", crushed_fields(window)))
        window.notifier.warning("1 file was skipped (corrupt).",
                                "The Sources list shows the reason for each; the other files were read.")
        check_layout(window, qapp, size)
        states.append(("with a banner", crushed_fields(window)))
        qp.set_blocked("lab/sub has no price, and a dollar cap is set: the cap cannot be kept.",
                       [("a", "Mark lab/sub free"), ("b", "Set a price…"), ("c", "Run without a cap")])
        check_layout(window, qapp, size)
        states.append(("with Run blocked", crushed_fields(window)))
        for state, crushed in states:
            assert not crushed, f"{state} at {size}: {crushed}"
        qp.set_blocked("")
        window.banner.dismiss()
        window.sources_pane.set_reading(False)
        window.leave_replay_requested.emit()
        qapp.processEvents()
        assert (window.width(), window.height()) == size, "closing the banner resized the window"


def test_a_banner_never_grows_the_window(studio, qloop, qapp):
    """The window is as tall with a two-line banner as without it, at 1024x700 and on
    the smallest height it may be given; after the banner closes, too."""
    window, controller = studio
    started(controller, qloop)
    window.question_panel.advanced.set_open(True)
    window.resize(1024, 700)
    qapp.processEvents()
    for _ in range(2):
        window.notifier.warning("The server at http://127.0.0.1:8011/v1 does not answer.",
                                "Check that it runs, or fix its address in Settings > Endpoints.",
                                action="settings", action_label="Open Endpoints")
        for _ in range(3):
            qapp.processEvents()
        assert window.banner.isVisible()
        assert window.height() == 700, f"a banner grew the window to {window.height()} px"
        assert window.minimumSizeHint().height() <= 700 - window.banner.height(), \
            window.minimumSizeHint()
        window.banner.dismiss()
        for _ in range(3):
            qapp.processEvents()
        assert window.height() == 700, f"closing the banner left the window {window.height()} px tall"


def test_a_remembered_size_larger_than_the_screen_opens_inside_it(studio, qloop, qapp):
    """A height remembered from a larger screen (or grown by a banner) is cut to the free
    area of the screen the window opens on (QScreen.availableGeometry)."""
    window, controller = studio
    started(controller, qloop)
    free = window.screen().availableGeometry()
    window.resize(free.width() + 200, free.height() + 120)      # the 780 px on a 700 px screen
    state = window.save_state()
    window.resize(640, 480)
    window.restore_state(state)
    qapp.processEvents()
    frame = window.frameGeometry()
    assert free.contains(frame), f"{frame} is not inside the screen's free area {free}"
    assert window.question_panel.advanced.is_open() is False


def test_the_limits_section_folds_and_is_remembered(studio, qloop, qapp):
    window, controller = studio
    started(controller, qloop)
    qp = window.question_panel
    assert not qp.depth_spin.isVisibleTo(window)              # folded at first
    assert "depth 1" in qp.advanced.header.text() and "20 iterations" in qp.advanced.header.text()
    qp.cost_spin.setValue(0.05)
    assert "$0.05 cap" in qp.advanced.header.text()
    qp.advanced.header.click()
    assert qp.depth_spin.isVisibleTo(window)
    state = window.save_state()
    qp.advanced.set_open(False)
    window.restore_state(state)
    assert qp.advanced.is_open() and qp.depth_spin.isVisibleTo(window)
