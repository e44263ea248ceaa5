"""More of issue 16 in the real window: during a replay of a real run with concurrent
sub-calls the meter's in-flight count is the call tree's; a click on the replay
track jumps there; the call detail and the tree's figures use the room of a large
screen; Tab reaches "Ask a follow-up" inside the left column; a long model name
fits the drop-down; a skipped file's full reason shows under the Sources list."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtTest import QTest

from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from ui.call_tree_model import COL_COST, COL_LATENCY, COL_TOKENS, KIND_ROLE, NODE_ID_ROLE, STATUS_ROLE


def running_rows(model, parent: QModelIndex = QModelIndex()) -> list[str]:
    """Model calls shown as running in the tree: every row but the run's own and cells."""
    found = []
    for r in range(model.rowCount(parent)):
        index = model.index(r, 0, parent)
        if parent.isValid() and index.data(STATUS_ROLE) == "running" and index.data(KIND_ROLE) != "cell":
            found.append(index.data(NODE_ID_ROLE))
        found.extend(running_rows(model, index))
    return found


def in_chain(start, stop, limit=80):
    chain, widget = [], start
    for _ in range(limit):
        chain.append(widget)
        if widget is stop:
            return chain
        widget = widget.nextInFocusChain()
    raise AssertionError(f"{type(stop).__name__} is not reached by Tab from {type(start).__name__}")


def batched_run(window, controller, server, tmp_path, qloop):
    server.script("sub", fn=lambda r: r.prompt.upper(), latency_s=1.0)     # the three overlap
    server.script("root", replies=[code(
        "out = llm_query_batched(['one', 'two', 'three'])\nprint(out)\nFINAL(', '.join(out))")])
    prepare(window, controller, server, tmp_path, qloop)

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=60, what="the run to end")
    run_async(qloop, body(), timeout=90)
    assert controller.last_outcome.status == "finished", window.notifier.history


def test_replay_meter_agrees_with_the_tree_and_the_track_jumps(studio, qloop, qapp, qtbot, server, tmp_path):
    window, controller = studio
    controller.first_run.hide_welcome()
    window.resize(1920, 1080)
    batched_run(window, controller, server, tmp_path, qloop)

    # Tab: the follow-up button glue added after the run is reached from Run without
    # leaving the left column (sources, question panel), as are the thresholds.
    window.question_panel.advanced.set_open(True)        # the thresholds fold away
    qapp.processEvents()
    bar = controller.sessions.bar
    assert bar.state == "live" and bar.button.isVisibleTo(window)
    sp, qp = window.sources_pane, window.question_panel
    chain = in_chain(sp.add_files_button, bar.button)
    outside = [type(w).__name__ for w in chain if not (sp.isAncestorOf(w) or qp.isAncestorOf(w))]
    assert not outside, f"Tab leaves the left column before 'Ask a follow-up': {outside}"
    for widget in (sp.add_folder_button, sp.clear_button, controller.trust.thresholds.calls_spin,
                   controller.trust.thresholds.usd_spin, qp.run_button):
        assert widget in chain, type(widget).__name__

    # Replay the stored run: at every slider position the meter says what the tree shows.
    run_id = controller.last_outcome.run_id
    controller.history.open_run(run_id)
    qapp.processEvents()
    panes = window.run_panes
    replay = panes.replay_bar
    slider = replay.slider
    assert slider.isVisibleTo(window) and slider.maximum() > 10
    seen, disagreed = set(), 0
    for k in range(slider.maximum() + 1):
        slider.setValue(k)                 # as a drag does: the bar seeks a moment later
        qtbot.waitUntil(lambda: replay.position == k, timeout=2000)
        panes.flush()
        tree = running_rows(panes.tree_model)
        assert panes.meter.in_flight.text() == f"{len(tree)} in flight", (k, tree)
        seen.add(len(tree))
        disagreed += panes.view.budget.in_flight != len(tree)
    assert 3 in seen, seen                 # the three sub-calls were in flight together
    assert disagreed, "the recorded count never differs from the tree: the check proves nothing"

    # A click on the track 3/4 of the way along moves there, not a page towards it.
    replay.seek(0)
    point = QPoint(slider.width() * 3 // 4, slider.height() // 2)
    QTest.mouseClick(slider, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    top = slider.maximum()
    assert abs(slider.value() - top * 3 // 4) <= max(2, top // 10), (slider.value(), top)
    qtbot.waitUntil(lambda: replay.position == slider.value(), timeout=2000)

    # The call detail and the tree's figures at 1920x1080.
    replay.seek(top)
    panes.flush()
    sub = next(n.id for n in panes.view.node_list if n.kind == "llm")
    assert panes.tree.select_node(sub)
    panes.flush()
    qapp.processEvents()
    editor, detail = panes.detail.tabs.currentWidget(), panes.detail
    lines = editor.height() / editor.fontMetrics().lineSpacing()
    assert lines >= 12, f"the prompt/response box shows {lines:.1f} lines"
    assert editor.height() >= 0.7 * detail.height(), "the box leaves its pane empty"
    below = panes.side_splitter.widget(2)          # the trust tabs under the detail
    assert detail.height() >= below.height(), \
        f"the detail gets {detail.height()} px, the tabs below it {below.height()} px"
    tree = panes.tree
    assert tree.horizontalScrollBar().value() == 0
    header = tree.header()
    for col in (COL_TOKENS, COL_COST, COL_LATENCY):
        right = header.sectionViewportPosition(col) + header.sectionSize(col)
        assert right <= tree.viewport().width(), f"column {col} ends at {right} of {tree.viewport().width()}"


def test_a_long_model_name_fits_the_drop_down(studio, qloop, qapp):
    window, controller = studio
    controller.first_run.hide_welcome()
    from ui.question_panel import ModelChoice
    picker = window.question_panel.root_picker
    long_name = "openrouter/meta-llama/llama-3.1-405b-instruct:free"
    price = "$0.80 / $0.80 per M"
    picker.set_choices([ModelChoice(id="lab/root", price="free"), ModelChoice(id=long_name, price=price)])
    picker.set_model_id(long_name)
    for size in ((1024, 700), (1920, 1080)):
        window.resize(*size)
        qapp.processEvents()
        edit = picker.lineEdit()
        need = edit.fontMetrics().horizontalAdvance(long_name)
        assert edit.width() >= need or edit.toolTip() == long_name, \
            f"the picker shows {edit.width()} px of a {need} px name, without the name as tooltip at {size}"
    picker.set_model_id("lab/root")
    assert picker.lineEdit().toolTip() == ""            # a short name: the role's tooltip shows
    # The list that drops down shows the whole name and its price, without scrolling sideways.
    picker.showPopup()
    try:
        view = picker.view()
        qapp.processEvents()
        metrics = view.fontMetrics()
        assert view.columnWidth(0) >= metrics.horizontalAdvance(long_name)
        assert view.columnWidth(1) >= metrics.horizontalAdvance(price)
        assert view.columnWidth(0) + view.columnWidth(1) <= view.viewport().width(), \
            (view.columnWidth(0), view.columnWidth(1), view.viewport().width())
    finally:
        picker.hidePopup()


def test_a_skipped_file_shows_its_full_reason_under_the_list(studio, qloop, qapp, tmp_path):
    window, controller = studio
    controller.first_run.hide_welcome()
    window.resize(1024, 700)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("apples\n")
    (folder / "junk.bin").write_bytes(b"\x00\x01\x02binary\x00" * 300)

    async def read():
        controller.add_paths([str(folder)])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), timeout=60,
                         what="reading")
    run_async(qloop, read(), timeout=90)
    sp = window.sources_pane
    rows = sp.rows()
    junk = next(i for i, r in enumerate(rows) if r.name == "junk.bin")
    reason = rows[junk].reason
    assert reason and rows[junk].status == "skipped"
    sp.table.selectRow(junk)
    qapp.processEvents()
    assert sp.reason_label.isVisibleTo(window)
    assert reason in sp.reason_label.text() and "junk.bin" in sp.reason_label.text()
    read_row = next(i for i, r in enumerate(rows) if r.name == "a.txt")
    sp.table.selectRow(read_row)
    qapp.processEvents()
    assert not sp.reason_label.isVisibleTo(window)
