"""Sources at 1366x768 after a run over two folders with a corrupt file and a copy in
a subfolder: five rows or more in view, every column inside the table (no sideways
scroll), the top-level file read and its subfolder copy the duplicate with its own
size, and one count in the banner, the totals and the status bar, in the same words."""

from __future__ import annotations

from tests.gui.test_window_run import KEY, code
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from ui.sources_pane import SourcesModel


def read_and_run(window, controller, server, tmp_path, qloop):
    from app.settings import Endpoint
    controller.settings.endpoints = [Endpoint("lab", server.url, ["root", "sub"], needs_key=True)]
    controller.keys().set("lab", KEY)
    shop, reports = tmp_path / "web-shop-logs", tmp_path / "quarterly-reports"
    (shop / "archive").mkdir(parents=True)
    reports.mkdir()
    (shop / "webshop.log").write_text("09:42 card payment failed\n" * 40)
    (shop / "archive" / "webshop.log").write_text("09:42 card payment failed\n" * 40)     # the copy
    (shop / "junk.bin").write_bytes(b"\x00\x01\x02binary\x00" * 300)
    for q in range(1, 9):
        (reports / f"2024-Q{q}-report-with-a-long-name.md").write_text(f"# Q{q}\nRevenue {q}.\n")
    server.script("root", replies=[code("FINAL('done')")])

    async def body():
        controller.add_paths([str(shop), str(reports)])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), timeout=60,
                         what="reading")
        qp = window.question_panel
        qp.set_models("lab/root", "lab/sub")
        qp.set_caps({"max_depth": 1, "max_cost_usd": 0, "max_iterations": 3})
        qp.set_question("Which quarter had the most revenue?")
        qp.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=90, what="the run to end")
    run_async(qloop, body(), timeout=150)


def test_sources_fit_and_count_once(studio, qloop, qapp, server, tmp_path):
    window, controller = studio
    controller.first_run.hide_welcome()
    window.resize(1366, 768)
    status_texts = []
    window.notifier.posted.connect(status_texts.append)
    read_and_run(window, controller, server, tmp_path, qloop)
    for _ in range(3):
        qapp.processEvents()
    sp, table = window.sources_pane, window.sources_pane.table

    # The top-level file is read; its copy in a subfolder is the duplicate, at its own size.
    rows = {r.path: r for r in sp.rows()}
    assert rows["web-shop-logs/webshop.log"].status == "read"
    copy = rows["web-shop-logs/archive/webshop.log"]
    assert copy.status == "skipped" and copy.reason == "duplicate of web-shop-logs/webshop.log"
    assert copy.size == len("09:42 card payment failed\n") * 40

    # One count, the same words: banner, totals, status bar.
    assert sp.totals()["skipped"] == 1 and sp.totals()["duplicates"] == 1
    assert sp.totals_label.text().endswith("· 1 skipped · 1 duplicate (read once)"), sp.totals_label.text()
    banner = next(n for n in status_texts if n.level == "warning")          # shown until the run began
    assert banner.message.startswith("1 file was skipped"), banner.message
    read_note = next(n.message for n in status_texts if n.message.startswith("Read "))
    assert "· 1 skipped · 1 duplicate (read once)" in read_note, read_note

    # Five rows or more in view beside the question panel.
    row_h = table.verticalHeader().defaultSectionSize()
    in_view = (table.viewport().height()) // row_h
    assert in_view >= 5, f"{in_view} rows in view ({table.viewport().height()} px)"

    # Every shown column inside the table: Folder and Why skipped need no sideways scroll.
    header = table.horizontalHeader()
    for col in (SourcesModel.COL_FOLDER, SourcesModel.COL_REASON):
        assert not table.isColumnHidden(col)
    shown = [c for c in range(header.count()) if not table.isColumnHidden(c)]
    assert sum(header.sectionSize(c) for c in shown) <= table.viewport().width(), \
        ([header.sectionSize(c) for c in shown], table.viewport().width())
    assert table.horizontalScrollBar().maximum() == 0
    # What is cut is whole in the tooltip.
    m = table.model()
    i = next(r for r in range(m.rowCount()) if m.index(r, 0).data().startswith("2024-Q1"))
    tip = m.index(i, SourcesModel.COL_NAME).data(0x3)        # ToolTipRole
    assert "2024-Q1-report-with-a-long-name.md" in tip and "folder: quarterly-reports" in tip

    # Widened, the left column gives the columns room; narrowed, they still fit.
    for delta in (160, -60):
        splitter = window.main_splitter
        splitter.moveSplitter(splitter.sizes()[0] + delta, 1)
        qapp.processEvents()
        assert sum(header.sectionSize(c) for c in shown) <= table.viewport().width()


def test_try_the_samples_asks_before_replacing_the_users_sources(studio, qloop, qapp, tmp_path,
                                                                  answered_questions, monkeypatch):
    window, controller = studio
    glue = controller.first_run
    if glue.samples is None:
        glue._fill_samples()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my own notes\n")
    from ui import confirm
    answers = iter(["cancel", "add"])
    asked = []
    monkeypatch.setattr(confirm, "ask", lambda _p, title, text, choices, destructive=False:
                        asked.append((title, [c[0] for c in choices])) or next(answers))

    async def body():
        controller.add_paths([str(mine)])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), timeout=60,
                         what="reading mine")
        glue.view.samples_button.click()                            # asked: Cancel
        assert [r.name for r in window.sources_pane.rows()] == ["notes.txt"]
        glue.view.samples_button.click()                            # asked: Add beside them
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done()
                         and len(controller.documents) > 1, timeout=60, what="the samples")
    run_async(qloop, body(), timeout=90)
    assert len(asked) == 2 and asked[0][1] == ["add", "replace", "cancel"]
    names = {r.name for r in window.sources_pane.rows()}
    assert "notes.txt" in names and "webshop.log" in names


def test_the_splitter_between_sources_and_question_drags(studio, qapp):
    """window-2 finding 82: dragging the handle between Sources and the question panel did not
    move it at 1366x768 (the panel's fields made its minimum height 356 px: the handle moved
    9 px for a 150 px drag). The panel now scrolls, so the handle follows the mouse."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    window, _controller = studio
    window.resize(1366, 768)
    qapp.processEvents()
    splitter = window.left_splitter
    before = splitter.sizes()
    handle = splitter.handle(1)
    start = handle.rect().center()
    QTest.mousePress(handle, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for _ in range(15):                           # 150 px down, as a hand drags it
        QTest.mouseMove(handle, start + QPoint(0, 10))
        qapp.processEvents()
    QTest.mouseRelease(handle, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start + QPoint(0, 10))
    qapp.processEvents()
    after = splitter.sizes()
    assert after[0] - before[0] >= 100, (before, after)     # Sources grew by most of the drag
    assert window.question_panel.run_button.isVisible()
