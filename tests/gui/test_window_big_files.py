"""The window and one big file: no limit on its size by default; set in Settings > Documents
the limit skips a larger file with words that say how to raise it; Stop while a big file is
read leaves no reading worker and no half-written text."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from tests.gui.test_window_sources import drop_paths
from tests.support.big_files import write_log
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def _read(controller, pane, qloop, path):
    async def body():
        before = controller.ingest_task
        drop_paths(pane.drop_zone, [path])
        await wait_until(lambda: controller.ingest_task is not before, what="reading to start")
        await wait_until(lambda: controller.ingest_task.done(), timeout=120, what="reading to end")
    run_async(qloop, body(), timeout=180)
    return {r.name: r for r in pane.rows()}


def test_the_largest_file_is_a_setting_and_its_skip_says_how_to_raise_it(studio, qloop, tmp_path):
    from app.settings import load_settings
    window, controller = studio
    pane = window.sources_pane
    big = tmp_path / "server.log"
    write_log(big, 3 << 20)

    dialog = controller.open_settings("documents")
    assert dialog.tabs.currentWidget() is dialog.documents_page
    assert dialog.documents_page.largest.value() == 0
    assert dialog.documents_page.largest.text() == "any size"
    dialog.documents_page.largest.setValue(1)
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    assert load_settings().extra["ingest"]["max_file_mb"] == 1

    rows = _read(controller, pane, qloop, big)
    assert rows["server.log"].status == "skipped"
    reason = rows["server.log"].reason
    assert "over the 1,048,576 byte limit" in reason and "Settings > Documents > Largest file" in reason

    dialog = controller.open_settings("documents")
    assert dialog.documents_page.largest.value() == 1                  # what was saved
    dialog.documents_page.largest.setValue(0)
    dialog.button_box.button(QDialogButtonBox.StandardButton.Save).click()
    rows = _read(controller, pane, qloop, big)
    assert rows["server.log"].status == "read"


def test_a_stop_while_a_big_file_is_read_leaves_no_worker_and_no_half_text(studio, qloop, tmp_path):
    import os
    import time

    from tests.support.big_files import write_mbox
    window, controller = studio
    pane = window.sources_pane
    path = tmp_path / "export.mbox"
    write_mbox(path, 48 << 20)
    size = path.stat().st_size
    from core.ingest.bigfile import spool_dir
    spool = spool_dir()                            # texts/ in the test's data folder

    def partial_size() -> int:
        names = os.listdir(spool) if os.path.isdir(spool) else []
        return max((os.path.getsize(os.path.join(spool, n)) for n in names if n.startswith(".partial-")),
                   default=0)

    async def body():
        drop_paths(pane.drop_zone, [path])
        await wait_until(lambda: partial_size() > size // 4, timeout=120, what="the read to get going")
        pane.cancel_button.click()
        await wait_until(lambda: controller.ingest_task.done(), timeout=10, what="reading to stop")

    run_async(qloop, body(), timeout=180)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (partial_size() or _readers()):
        time.sleep(0.1)
    assert partial_size() == 0 and not [n for n in os.listdir(spool) if n.startswith(".partial-")]
    assert _readers() == [], "a reading worker is still running"
    assert "export.mbox" not in {r.name for r in pane.rows()}


def _readers() -> list[int]:
    """Reading workers of this process: the fork server's children."""
    import os

    from tests.support.proc_tree import tree_pids
    found = []
    for pid in tree_pids(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"multiprocessing.forkserver" in f.read():
                    found.extend(p for p in tree_pids(pid) if p != pid)
        except OSError:
            pass
    return found


def _memory_kb() -> dict[str, int]:
    with open("/proc/self/status") as f:
        return {k: int(v.split()[0]) for k, v in (line.split(":", 1) for line in f) if k in ("VmRSS", "VmHWM")}


def test_a_big_non_ascii_file_is_cited_shown_and_covered_by_offsets(studio, qloop, openai_server, tmp_path):
    """Read from Sources, asked about, then its citation opened and its coverage shown: the
    window reads only the ranges it shows (its text as a str would take 4 bytes a character:
    accents, CJK and emoji), and highlights the passage by Qt's positions."""
    from tests.support.big_files import log_line
    from tests.support.trust_gui import code, hrefs, run_in_window, setup_lab
    from ui.source_viewer import EXCERPT
    window, controller = studio
    log = tmp_path / "server.log"
    write_log(log, 60 << 20, intl=True)
    size = log.stat().st_size
    rows = _read(controller, window.sources_pane, qloop, log)
    assert rows["server.log"].status == "read"
    [doc] = controller.sources.documents.values()
    assert not doc.held                                    # read back from its file
    printed, cited = 100_000, 300_000                      # log lines i: line i + 1
    answer = f"The trace is TR{cited:07d}X [doc:server.log:line {cited + 1}]."
    openai_server.script("root", replies=[
        code(f"i = context.find(' request {printed} ')\nprint(context[context.rfind(chr(10), 0, i) + 1:i + 1500])"),
        code(f"FINAL({answer!r})")])
    setup_lab(window, controller, openai_server, "Which trace?", docs=[doc])
    outcome = run_async(qloop, run_in_window(window, controller), timeout=300)
    assert outcome.status == "finished" and outcome.answer == answer, window.notifier.history

    with open("/proc/self/clear_refs", "w") as f:          # the peak from here on
        f.write("5")
    before = _memory_kb()["VmRSS"]
    controller.history.refresh()                           # the run opened again: coverage built anew
    window.history_pane.select(outcome.run_id)
    window.history_pane.open_button.click()
    assert controller.history.replaying == outcome.run_id
    trust = controller.trust
    trust.refresh()
    run_async(qloop, wait_until(lambda: trust._job is None and trust.observer.coverage is not None,
                                timeout=120, what="coverage"), timeout=150)
    report = trust.observer.coverage.report()
    assert type(trust.observer.coverage.matcher.context).__name__ == "JoinedText"      # not joined whole
    body = window.run_panes.transcript.answer_card.body
    [link] = hrefs(body)
    body.linkActivated.emit(link)
    viewer = trust.viewer
    line = log_line(cited, intl=True)
    assert viewer.current_path == "server.log" and viewer.selected_text() == line
    assert viewer.text.extraSelections()[0].cursor.selectedText() == line      # Qt's positions (emoji: 2)
    assert type(viewer._window).__name__ == "TextWindow" and viewer._window.marks is not None
    assert viewer.shown_from > 0 and len(viewer.text.toPlainText()) <= EXCERPT
    assert "Showing characters" in viewer.note.text()
    grew = (_memory_kb()["VmHWM"] - before) * 1024
    print(f"the window's peak grew {grew / (1 << 20):,.1f} MB for a {size / (1 << 20):,.0f} MB file")
    assert grew < 0.5 * size, f"the window grew {grew / size:.2f}x the file: its text was read whole"
    start = log.read_text(encoding="utf-8").index(log_line(printed, intl=True))
    assert any(a <= start < b for a, b in report.documents[0].read), report.documents[0].read
