"""Sources pane in the real window: a real drop of a folder, progress, rows, remove, clear."""

from __future__ import annotations


from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from ui import confirm
from ui.sources_pane import SourceRow, SourcesModel, human_count, human_size



def drop_paths(widget, paths) -> None:
    """What the OS file manager does: drag enter, then drop, with file URLs."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    center = widget.rect().center()
    enter = QDragEnterEvent(center, Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted(), "the drop zone refused file URLs"
    drop = QDropEvent(QPointF(center), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, drop)
    assert drop.isAccepted()


def make_folder(root, n_text: int = 40):
    folder = root / "reports"
    folder.mkdir()
    for i in range(n_text):
        (folder / f"report-{i:03d}.txt").write_text(f"Quarter {i}: revenue grew by {i} percent.\n" * 30)
    (folder / "notes.md").write_text("# Notes\n\nThe **board** met twice.\n")
    (folder / "empty.txt").write_text("")
    (folder / "blob.bin").write_bytes(bytes(range(256)) * 64)
    return folder


def test_model_rows_and_totals_without_a_window(qapp):
    model = SourcesModel()
    model.add_rows([SourceRow("a.txt", "read", "text", 2048, 4000),
                    SourceRow("b.bin", "skipped", "bin", reason="binary")])
    model.add_rows([SourceRow("a.txt", "read", "text", 2048, 8000)])   # same path: replaced
    assert model.rowCount() == 2
    assert model.index(0, SourcesModel.COL_TOKENS).data() == "2.0k"
    assert model.index(1, SourcesModel.COL_STATUS).data() == "skipped"
    assert model.index(1, SourcesModel.COL_REASON).data() == "binary"
    model.remove_paths({"a.txt"})
    assert [r.path for r in model.rows()] == ["b.bin"]
    assert human_size(3 * 1024 * 1024) == "3.0 MB" and human_count(1_500_000) == "1.5M"


def test_drop_zone_refuses_drags_without_files(qapp, qtbot):
    from ui.sources_pane import DropZone
    zone = DropZone()
    qtbot.addWidget(zone)
    mime = QMimeData()
    mime.setText("just text")
    enter = QDragEnterEvent(QPoint(5, 5), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(zone, enter)
    assert not enter.isAccepted()


def test_drop_a_folder_fills_the_list(studio, qloop, tmp_path, monkeypatch):
    window, controller = studio
    pane = window.sources_pane
    folder = make_folder(tmp_path)
    seen_progress = []
    pane.progress.valueChanged.connect(seen_progress.append)

    async def body():
        drop_paths(pane.drop_zone, [folder])
        await wait_until(lambda: controller.ingest_task is not None, what="reading to start")
        assert pane.progress.isVisibleTo(window), "no progress bar while reading"
        await wait_until(lambda: controller.ingest_task.done(), timeout=60, what="reading to end")

    run_async(qloop, body(), timeout=90)
    rows = {r.name: r for r in pane.rows()}
    assert rows["report-000.txt"].status == "read"
    assert rows["report-000.txt"].format == "text"
    assert rows["notes.md"].status == "read"
    assert rows["empty.txt"].status == "skipped" and "empty" in rows["empty.txt"].reason
    assert rows["blob.bin"].status == "skipped"
    assert len(controller.documents) == 41
    assert not pane.progress.isVisibleTo(window)
    assert seen_progress and max(seen_progress) == pane.progress.maximum()
    totals = pane.totals_label.text()
    assert "41 read" in totals and "2 skipped" in totals and "tokens" in totals
    assert "skipped" in window.banner.text.text()          # the skip is told, with what to do
    assert str(folder) in controller.settings.recent_folders

    # Remove two rows, then clear.
    pane.table.selectRow(0)
    pane.table.selectionModel().select(
        pane.model.index(1, 0), pane.table.selectionModel().SelectionFlag.Select
        | pane.table.selectionModel().SelectionFlag.Rows)
    first_two = pane.selected_paths()
    assert len(first_two) == 2
    pane.remove_button.click()
    assert not set(first_two) & {r.path for r in pane.rows()}
    assert not set(first_two) & set(controller.documents)
    asked = []
    answers = iter(["cancel", "clear"])
    monkeypatch.setattr(confirm, "ask", lambda *a, **k: asked.append(a[1]) or next(answers))
    pane.clear_button.click()                        # the bin button asks first: Cancel keeps all
    assert asked == ["Clear all sources?"] and pane.rows()
    pane.clear_button.click()
    assert pane.rows() == [] and controller.documents == {}
    assert pane.totals_label.text() == "No sources yet."


def test_reading_can_be_stopped(studio, qloop, tmp_path):
    window, controller = studio
    pane = window.sources_pane
    folder = make_folder(tmp_path, n_text=400)

    async def body():
        drop_paths(pane.drop_zone, [folder])
        await wait_until(lambda: controller.ingest_task is not None, what="reading to start")
        pane.cancel_button.click()
        await wait_until(lambda: controller.ingest_task.done(), timeout=30, what="reading to stop")

    run_async(qloop, body(), timeout=60)
    assert not pane.progress.isVisibleTo(window)
    assert controller.ingest_task.cancelled() or controller.ingest_task.done()
    notes = [n.message for n in window.notifier.history]
    assert any("Reading stopped" in m or m.startswith("Read ") for m in notes)


def test_sources_and_the_source_viewer_show_text_the_documents_read_back(studio, qloop, tmp_path):
    window, controller = studio
    pane = window.sources_pane
    folder = make_folder(tmp_path, n_text=3)
    notes = folder / "notes.md"

    async def body():
        drop_paths(pane.drop_zone, [folder])
        await wait_until(lambda: controller.ingest_task is not None and controller.ingest_task.done(),
                         timeout=60, what="reading to end")

    run_async(qloop, body(), timeout=90)
    docs = list(controller.documents.values())
    assert docs and not any(d.held for d in docs)          # the window keeps no text of its own
    rows = {r.name: r for r in pane.rows()}
    assert rows["report-001.txt"].tokens == controller.documents["report-001.txt"].tokens > 0   # kept by ingestion
    viewer = controller.trust.open_citation("doc:notes.md:line 3")
    assert viewer.current_path == "notes.md" and viewer.selected_text() == "The **board** met twice."
    assert viewer.text.toPlainText() == notes.read_text()
    notes.write_text("# Notes\n\nChanged.\n")
    viewer.set_documents(docs)
    assert not viewer.show_passage("notes.md", 0, 3)          # the file changed since it was read
    assert "notes.md changed on disk since it was read" in viewer.note.text()
    assert viewer.current_path is None and viewer.text.toPlainText() == ""
    viewer.close()
