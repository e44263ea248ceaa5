"""Small words of the window, in a real run against the scripted server: the status line
leaves "Starting…" once the run's events arrive, one document and one iteration are
singular, an unpriced run's cost says so in the status line, and the Add/Replace question
names the folders the sources came from."""

from __future__ import annotations

import asyncio

from tests.gui.test_window_run import KEY, code
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401


def test_words_of_a_one_document_run(studio, qloop, server, tmp_path, answered_questions):
    from app.settings import Endpoint
    window, controller = studio
    controller.settings.endpoints = [Endpoint("lab", server.url, ["root", "sub"], needs_key=True,
                                              runs_here=False)]           # paid, and no price: unknown
    controller.keys().set("lab", KEY)
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "q3.txt").write_text("Revenue in Q3 was 42 million.\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text("ok\n")
    server.script("root", replies=[code("FINAL('42 million')")])
    qp = window.question_panel
    statuses: list[str] = []

    async def body():
        controller.add_paths([str(folder)])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), what="reading")
        assert "Read 1 document in " in window.statusBar().currentMessage(), window.statusBar().currentMessage()
        controller.add_paths([str(logs)])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), what="reading")
        qp.set_models("lab/root", "lab/root")
        qp.set_caps({"max_depth": 0, "max_cost_usd": 0, "max_iterations": 3})
        qp.set_question("What was Q3 revenue?")
        qp.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        while controller.running:
            statuses.append(qp.status_label.text())
            await asyncio.sleep(0.01)
    run_async(qloop, body(), timeout=90)
    assert controller.last_outcome.status == "finished", window.notifier.history
    assert "Running…" in statuses, statuses                      # not "Starting…" for the whole run
    assert qp.status_label.text().startswith("Finished · ") and qp.status_label.text().endswith("cost unknown")
    finished = next(n.message for n in reversed(window.notifier.history) if n.message.startswith("The run"))
    assert finished.endswith(" · cost unknown)."), finished                 # the status bar says it too
    figures = window.run_panes.transcript.answer_card.figures.text()
    assert figures.startswith("1 cell · ") and " 1 iteration · " in figures, figures
    assert " 0 runtime errors · 0 faults · 0 sub-calls (" in figures, figures
    qp.set_caps({"max_iterations": 1})
    assert qp.advanced.summary().endswith(" · 1 iteration"), qp.advanced.summary()

    more = tmp_path / "more"
    more.mkdir()
    (more / "b.txt").write_text("more\n")

    async def offer():
        window.sources_pane.offer_paths([str(more)])              # answered: add to them
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), what="reading")
    run_async(qloop, offer(), timeout=60)
    title, text = answered_questions[-1]
    assert title == "Add to the sources, or replace them?"
    assert text.startswith("2 sources are listed. The next question"), text


def test_an_estimate_with_equal_bounds_says_one_figure():
    from app.trust_shown import describe_preview
    from core.trust.preview import CostPreview

    def preview(low, high):
        return CostPreview("lab/root", "lab/sub", context_chars=28_000, context_tokens=7_000,
                           input_tokens=(low, high), output_tokens=(400, 400), usd_low=0.001, usd_high=0.002,
                           basis="heuristic", similar_runs=0, expected_turns=3)
    text, tip = describe_preview(preview(7_080, 7_120))
    assert "~7.1k tokens in" in text and "7.1k-7.1k" not in text, text
    assert "Output: 400 tokens;" in tip, tip
    text, _tip = describe_preview(preview(7_000, 9_000))
    assert "~7.0k-9.0k tokens in" in text, text


def test_the_add_or_replace_question_names_the_folders(qapp, answered_questions, tmp_path):
    from ui.sources_pane import SourceRow, SourcesPane
    pane = SourcesPane()
    try:
        pane.set_rows([SourceRow(f"2024-Q{i}.md", "read", source_path="/data/reports") for i in range(1, 5)])
        assert pane.offer_paths([str(tmp_path)]) == "add"
        title, text = answered_questions[-1]
        assert text.startswith("4 sources are listed (from the folder “reports”). The next question"), text
        pane.set_rows([*pane.rows(), SourceRow("a.log", "read", source_path="/data/logs")])
        pane.offer_paths([str(tmp_path / "x")])
        assert answered_questions[-1][1].startswith("5 sources are listed (from the folders “reports”, “logs”).")
    finally:
        pane.deleteLater()


def test_the_card_says_a_server_that_is_down_in_words(studio, qloop, tmp_path):
    import socket

    from app.settings import Endpoint
    window, controller = studio
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    controller.settings.endpoints = [Endpoint("lab", f"http://127.0.0.1:{port}/v1", ["root"])]
    controller.settings.caps.update(max_retries=0)
    (tmp_path / "a.txt").write_text("alpha\n")
    qp = window.question_panel

    async def body():
        controller.add_paths([str(tmp_path / "a.txt")])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), what="reading")
        qp.set_models("lab/root", "lab/root")
        qp.set_caps({"max_depth": 0, "max_cost_usd": 0, "max_iterations": 2})
        qp.set_mode("rlm")
        qp.set_question("What is in a.txt?")
        qp.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=90, what="the run to end")
    run_async(qloop, body(), timeout=120)
    window.run_panes.flush()
    view = window.run_panes.view
    assert view.status == "failed" and "Errno 111" in (view.error or ""), view.error
    card = window.run_panes.transcript.answer_card
    card.refresh(view)                                # the failed run's card, from the real run's record
    text = card.error.text()
    assert text.startswith(f"Nothing answers at 127.0.0.1:{port}"), (text, card.error.toolTip(), window.run_panes.view.error)
    assert "Errno" not in text and "Connect call failed" not in text
    assert card.error.toolTip()                       # the raw text is kept for a bug report
    from PySide6.QtWidgets import QLabel
    shown = [w.text() for w in window.run_panes.transcript.findChildren(QLabel) if w.isVisibleTo(window)]
    assert not [t for t in shown if "Errno" in t or "Connect call failed" in t], shown   # nor a warning line
    said = [f"{n.message} {n.advice}" for n in window.notifier.history]    # the detail: the tooltip, the log
    assert not [t for t in said if "Errno" in t], said                                   # nor the banner


def test_the_scorecard_answer_column_reads_as_text(qapp):
    from ui.models_view import ModelsView
    view = ModelsView()
    try:
        view.set_scorecard({"lines": [], "questions": [{"id": "q1", "question": "When did payments fail?"}],
                            "latest_answers": [{"question_id": "q1", "pair": "lab/root:lab/sub", "mode": "rlm",
                                                "correct": True, "status": "finished",
                                                "answer": "## Direct answer\n\nCard payments failed on **14 August**."}]})
        assert view.answers_table.item(0, 4).text() == "Direct answer Card payments failed on 14 August."
    finally:
        view.deleteLater()


def test_no_catalogue_of_a_local_server_that_does_not_run(studio, qloop):
    """litellm knows Ollama's catalogue at $0; while no Ollama answers on this computer it is
    not offered (as free) in the pickers, and the cloud models are."""
    window, controller = studio

    async def body():
        await wait_until(lambda: controller.first_run.started, what="the start")
        controller.want_models()
        await wait_until(lambda: controller.catalog, timeout=60, what="the model list")
    run_async(qloop, body(), timeout=90)
    assert any(e.id.startswith("ollama/") for e in controller.catalog)          # litellm has them
    assert not any(s.found and s.kind == "ollama" for s in controller.first_run.servers)
    listed = window.question_panel.root_picker.choices()
    assert "ollama/deepseek-v3.1:671b-cloud" not in listed and not any(i.startswith("ollama/") for i in listed)
    assert "gpt-4o-mini" in listed


def test_names_show_where_they_differ_and_why_skipped_is_whole(qapp):
    """In a narrow Sources pane, names alike but for a quarter or a day are cut where they
    are alike (each row still says which file it is, with its extension), and the reason
    a file was skipped wraps in a row tall enough for all of it."""
    from PySide6.QtCore import QRect, Qt
    from PySide6.QtWidgets import QStyleOptionViewItem
    from ui.sources_pane import SourceRow, SourcesModel, SourcesPane, text_margin
    reason = "corrupt (the file is not a valid DOCX: bad zip data)"
    names = [f"2024-Q{q}-report-with-a-long-name.md" for q in range(1, 5)] + \
        ["2024-08-14-incident.txt", "2024-08-15-incident.txt"]
    pane = SourcesPane()
    try:
        pane.set_rows([SourceRow(f"r/{n}", "read", size=900, chars=800, source_path="/d/r") for n in names]
                      + [SourceRow("r/board-memo.docx", "skipped", size=53, reason=reason, source_path="/d/r")])
        pane.resize(300, 420)
        pane.show()
        qapp.processEvents()
        table = pane.table

        def shown(row, column):
            option = QStyleOptionViewItem()
            option.initFrom(table)
            index = pane.model.index(row, column)
            option.rect = table.visualRect(index)
            table.itemDelegateForIndex(index).initStyleOption(option, index)
            return option
        texts = [shown(i, SourcesModel.COL_NAME).text for i in range(len(names))]
        assert len(set(texts)) == len(names), texts                      # every row tells its file
        width = table.columnWidth(SourcesModel.COL_NAME) - text_margin(table)
        for text, own, ext in zip(texts, ("Q1", "Q2", "Q3", "Q4", "14", "15"), (".md",) * 4 + (".txt",) * 2):
            assert own in text and text.endswith(ext), texts
            assert table.fontMetrics().horizontalAdvance(text) <= width, (text, width)
        assert texts[0] != names[0]                                      # it was cut: the pane is narrow
        assert pane.model.index(0, SourcesModel.COL_NAME).data(Qt.ItemDataRole.ToolTipRole).startswith(
            f"r/{names[0]}")                                             # the whole name in the tooltip

        row = len(names)
        option = shown(row, SourcesModel.COL_REASON)
        assert option.features & QStyleOptionViewItem.ViewItemFeature.WrapText and option.text == reason
        room = table.columnWidth(SourcesModel.COL_REASON) - text_margin(table)
        needed = table.fontMetrics().boundingRect(QRect(0, 0, room, 10_000), int(Qt.TextFlag.TextWordWrap),
                                                  reason).height()
        assert needed > table.verticalHeader().defaultSectionSize()     # more than one line at this width
        assert table.rowHeight(row) >= needed and table.rowHeight(0) == table.verticalHeader().defaultSectionSize()
        pane.resize(250, 420)             # the left column on a 1024 px screen: columns give way, none scroll
        qapp.processEvents()
        texts = [shown(i, SourcesModel.COL_NAME).text for i in range(len(names))]
        assert len(set(texts)) == len(names) and all(own in t for t, own in zip(texts, ("Q1", "Q2", "Q3", "Q4"))), texts
        header = table.horizontalHeader()
        assert sum(header.sectionSize(c) for c in range(header.count()) if not table.isColumnHidden(c)) \
            <= table.viewport().width() and table.horizontalScrollBar().value() == 0
        pane.resize(700, 420)                                            # wide: the names whole
        qapp.processEvents()
        assert [shown(i, SourcesModel.COL_NAME).text for i in range(len(names))] == names
    finally:
        pane.deleteLater()
