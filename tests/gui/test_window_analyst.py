"""What a new analyst tripped over (issue 16), each checked in the real window:
caps kept across Settings, stale messages taken down, a stopped server named as
such with ways forward, sources that change only after asking, menus and keys."""

from __future__ import annotations

import socket

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QKeySequence, QMouseEvent
from PySide6.QtWidgets import QApplication

from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.openai_server import Status


def run_and_wait(window, controller, qloop, timeout=90):
    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=timeout, what="the run to end")
    run_async(qloop, body(), timeout=timeout + 30)


def test_settings_round_trip_keeps_the_caps(studio, qloop):
    window, controller = studio
    qp = window.question_panel
    qp.set_caps({"max_depth": 2, "max_cost_usd": 2.5, "max_iterations": 7})
    dialog = controller.open_settings()
    dialog.accept()                                   # Save, nothing changed
    assert qp.caps() == {"max_depth": 2, "max_cost_usd": 2.5, "max_iterations": 7}
    assert "Settings saved." in [n.message for n in window.notifier.history]
    # A default changed in the dialog does reach the panel; the others stay.
    dialog = controller.open_settings("caps")
    values = dialog.values()
    values["caps"] = {**values.get("caps", {}), "max_iterations": 12}
    controller.settings_glue.apply_values(values)
    assert qp.caps() == {"max_depth": 2, "max_cost_usd": 2.5, "max_iterations": 12}
    dialog.reject()


def test_a_stale_banner_is_gone_when_the_next_run_starts(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", replies=[Status(401, message="Incorrect API key provided")] * 6)
    prepare(window, controller, server, tmp_path, qloop)
    run_and_wait(window, controller, qloop)
    assert window.banner.isVisibleTo(window) and window.banner.note.level == "error"
    server.script("root", replies=[code("import time\ntime.sleep(1)\nFINAL('ok')")])

    async def again():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the second run to start")
        assert not window.banner.isVisibleTo(window), window.banner.note   # gone as soon as it starts
        await wait_until(lambda: not controller.running, timeout=60, what="the second run to end")
    run_async(qloop, again(), timeout=90)
    assert controller.last_outcome.status == "finished"
    assert not window.banner.isVisibleTo(window)


def test_messages_about_sources_and_the_question_go_when_those_change(studio, qloop, tmp_path):
    window, controller = studio
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("apples\n")
    (folder / "empty.txt").write_text("")

    async def read():
        controller.add_paths([str(folder)])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), timeout=60,
                         what="reading")
    run_async(qloop, read(), timeout=90)
    assert window.banner.isVisibleTo(window) and "skipped" in window.banner.note.message
    window.sources_pane.ask_clear()                   # answered "Clear" by the test fixture
    assert not window.banner.isVisibleTo(window)      # "1 file was skipped" is about nothing now
    window.notifier.warning("Type the follow-up question first.", topic="question")
    assert window.banner.isVisibleTo(window)
    window.question_panel.question_box.setPlainText("Which fruit is there?")
    assert not window.banner.isVisibleTo(window)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_stopped_local_server_is_named_with_ways_forward(studio, qloop, server, tmp_path):
    window, controller = studio
    prepare(window, controller, server, tmp_path, qloop)
    port = free_port()                                # nothing listens there: a stopped server
    controller.settings.endpoints[0].base_url = f"http://127.0.0.1:{port}/v1"
    controller.settings.caps["max_retries"] = 2
    run_and_wait(window, controller, qloop)
    assert controller.last_outcome.status == "failed"
    note = window.banner.note
    assert note is not None and f"127.0.0.1:{port}" in note.message and "lab/root" in note.message
    assert "OpenAI" not in note.message and "OpenAI" not in (controller.last_outcome.error or "")
    actions = [note.action] + [a for a, _ in note.more_actions]
    assert actions == ["look_again", "endpoints", "pick_model"]
    assert all(b.isVisibleTo(window) for b in window.banner.more_buttons[:2])
    # The retries are one line per call, not a box per attempt.
    panes = window.run_panes
    panes.flush()
    shown = [w for w in panes.transcript.findChildren(type(window.banner.text), "notice")
             if w.isVisibleTo(window) and "Retrying" in w.text()]
    assert len(shown) == 1, [w.text() for w in shown]
    assert "OpenAI" not in shown[0].text()
    turn = next(iter(panes.transcript._cards.values()))
    assert "streaming" not in turn.header.text() and "cut off" in turn.header.text()
    window.banner.more_buttons[1].click()             # "Pick another model": the picker has focus
    QApplication.processEvents()
    assert window.question_panel.root_picker.hasFocus() or window.question_panel.root_picker.view().isVisible()


def test_rerun_asks_before_replacing_and_a_second_folder_asks_too(studio, qloop, server, tmp_path,
                                                                  answered_questions, monkeypatch):
    window, controller = studio
    server.script("root", replies=[code("FINAL('done')")])
    prepare(window, controller, server, tmp_path, qloop)
    run_and_wait(window, controller, qloop)
    first = controller.last_outcome.run_id
    from ui import confirm
    monkeypatch.setattr(confirm, "ask", lambda *a, **k: answered_questions.append(a[1:3]) or "cancel")
    window.history_pane.select(first)
    asked = len(answered_questions)
    assert window.history_pane.ask_rerun()            # the run's own documents: nothing to ask
    assert len(answered_questions) == asked
    loaded = window.notifier.last.message             # the run named by its question, not a hex id
    assert loaded.startswith("Loaded the sources (") and "of “Which files are there?" in loaded, loaded
    assert first[:8] not in loaded
    before = [r.path for r in window.sources_pane.rows()]
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.txt").write_text("bananas\n")
    assert window.sources_pane.offer_paths([str(other)]) == "cancel"
    assert answered_questions[-1][0] == "Add to the sources, or replace them?"
    assert [r.path for r in window.sources_pane.rows()] == before
    monkeypatch.setattr(confirm, "ask", lambda *a, **k: "replace")

    async def replace():
        window.sources_pane.offer_paths([str(other)])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), timeout=60,
                         what="reading")
    run_async(qloop, replace(), timeout=90)
    assert [r.name for r in window.sources_pane.rows()] == ["b.txt"]
    monkeypatch.setattr(confirm, "ask", lambda *a, **k: answered_questions.append(a[1:3]) or "cancel")
    window.history_pane.select(first)
    assert not window.history_pane.ask_rerun()        # other sources listed: asked; Cancel keeps them
    title, text = answered_questions[-1]
    assert title == "Replace the sources?" and "of “Which files are there?”" in text, text
    assert [r.name for r in window.sources_pane.rows()] == ["b.txt"]


def test_menu_bar_and_shortcuts(studio, qloop):
    window, _controller = studio
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert titles == ["File", "Edit", "View", "Run", "Help"]
    keys = {a.text(): a.shortcut().toString() for a in window.actions() if not a.shortcut().isEmpty()}
    assert keys["Quit"] == "Ctrl+Q" and keys["Open folder…"] == "Ctrl+O"
    assert keys["Find in history…"] == QKeySequence(QKeySequence.StandardKey.Find).toString() == "Ctrl+F"
    window.find_action.trigger()
    assert window.history_pane.isVisibleTo(window) and window.history_pane.search_edit.hasFocus()
    about = [a.text() for a in window.menus["help"].actions()]
    assert "About RLM Studio" in about


def test_tab_reaches_sources_buttons_thresholds_and_run_in_reading_order(studio, qloop):
    window, controller = studio
    controller.first_run.hide_welcome()
    window.question_panel.advanced.set_open(True)        # the cap and thresholds fold away
    QApplication.processEvents()
    window.order_tabs()
    sp, qp = window.sources_pane, window.question_panel
    thresholds = controller.trust.thresholds
    chain, widget = [], sp.add_files_button
    for _ in range(60):
        chain.append(widget)
        widget = widget.nextInFocusChain()
        if widget is sp.add_files_button:
            break
    wanted = [sp.add_files_button, sp.add_folder_button, sp.clear_button, qp.question_box,
              qp.root_picker, qp.cost_spin, thresholds.calls_spin, thresholds.usd_spin, qp.run_button]
    positions = [chain.index(w) for w in wanted]
    assert positions == sorted(positions), [type(w).__name__ for w in wanted]


def test_sub_calls_sort_as_numbers_and_the_replay_slider_jumps(qapp, qtbot):
    from ui.replay_bar import JumpSlider
    from ui.results_table import ResultShown, ResultsTable
    table = ResultsTable()
    qtbot.addWidget(table)
    rows = [ResultShown(i, "ok", "lab/sub", "", "p", "a", 1, 1, 0.0, 10) for i in ("R.s30", "R.s3", "R.s4")]
    table.set_rows(rows)
    table.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    assert [r.call_id for r in table.visible_rows()] == ["R.s3", "R.s4", "R.s30"]
    slider = JumpSlider(Qt.Orientation.Horizontal)
    qtbot.addWidget(slider)
    slider.resize(400, 24)
    slider.setRange(0, 1000)
    slider.show()
    point = QPointF(300, 12)
    press = QMouseEvent(QMouseEvent.Type.MouseButtonPress, point, slider.mapToGlobal(QPoint(300, 12)).toPointF(),
                        Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    slider.mousePressEvent(press)
    assert 700 <= slider.value() <= 800, slider.value()          # to the point, not one page (100)


def test_focus_ring_on_run_is_drawn_and_look_again_opens_the_server_check(studio, qloop, qapp):
    window, controller = studio
    controller.first_run.hide_welcome()
    run = window.question_panel.run_button
    window.activateWindow()
    window.question_panel.question_box.setFocus()
    qapp.processEvents()
    unfocused = run.grab().toImage()
    run.setFocus(Qt.FocusReason.TabFocusReason)
    qapp.processEvents()
    assert run.hasFocus()
    focused = run.grab().toImage()
    edge = [(x, 1) for x in range(4, run.width() - 4, 7)]
    changed = sum(1 for x, y in edge if focused.pixel(x, y) != unfocused.pixel(x, y))
    assert changed > len(edge) // 2, "no visible focus ring on Run"
    window.notifier.action_requested.emit("look_again")
    assert controller.first_run.welcome_visible


def test_the_question_panel_does_not_jump_when_the_estimate_line_comes(studio, qloop, qapp):
    window, controller = studio
    controller.first_run.hide_welcome()
    qp, preview = window.question_panel, controller.trust.preview
    preview.clear()
    qapp.processEvents()
    before = qp.run_button.mapTo(window, qp.run_button.rect().topLeft()).y()
    preview.set_estimate("Estimate: ~6.8k tokens in · $0.0052 to $0.0078")
    qapp.processEvents()
    assert preview.isVisibleTo(window)
    assert qp.run_button.mapTo(window, qp.run_button.rect().topLeft()).y() == before
    preview.clear()
    qapp.processEvents()
    assert qp.run_button.mapTo(window, qp.run_button.rect().topLeft()).y() == before
