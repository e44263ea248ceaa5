"""History pane over a real RunStore file: list, filter, replay, export, re-run, delete."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QFileDialog

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from ui.history_pane import HistoryModel



def store_run(run_id: str, question: str, *, status: str = "finished", t0: float | None = None,
              root_model: str | None = None) -> list:
    """Write one synthetic run (events and its sources) into the store under RLM_STUDIO_HOME."""
    from core.ingest.model import Document
    from core.store import RunStore
    from tests.support.store_events import synthetic_run
    kwargs = {"root_model": root_model} if root_model else {}
    events = synthetic_run(run_id, question=question, status=status, t0=t0, **kwargs)
    docs = [Document(path="sales/2023.csv", source_path="/data/sales/2023.csv", format="csv",
                     text="month,sales\njan,100\n", chars=20, size=20, sha256="a" * 64),
            Document(path="notes.txt", source_path="/data/notes.txt", format="text",
                     text="The board met twice.", chars=20, size=20, sha256="b" * 64)]
    with RunStore.open() as store:
        writer = store.writer()
        for event in events:
            writer(event)
        writer.close()
        store.save_sources(run_id, docs, [])
    return events


@pytest.fixture
def stored(studio_home):
    first = store_run("run-old", "What were the total sales in 2023?", t0=1_700_000_000.0)
    second = store_run("run-new", "Who chaired the board meetings?", status="capped",
                       root_model="openai/other-root")
    return {"run-old": first, "run-new": second}


def rows_of(window) -> dict:
    return {r.id: r for r in window.history_pane.model.rows()}


def test_history_lists_filters_and_exports(stored, studio, qloop, tmp_path, monkeypatch):
    window, controller = studio
    window.history_action.trigger()                              # Ctrl+H
    run_async(qloop, wait_until(lambda: len(rows_of(window)) == 2, what="history rows"))
    rows = rows_of(window)
    assert rows["run-new"].status == "capped"
    assert rows["run-old"].cost_usd > 0 and rows["run-old"].duration_ms is not None
    model = window.history_pane.model
    texts = [model.index(0, c).data() for c in range(model.columnCount())]
    assert texts[HistoryModel.COL_QUESTION].startswith("Who chaired") and texts[HistoryModel.COL_COST].startswith("$")   # newest first

    # Search, status and model filters go to the store.
    window.history_pane.search_edit.setText("board")
    run_async(qloop, wait_until(lambda: set(rows_of(window)) == {"run-new"}, what="search"))
    window.history_pane.search_edit.setText("")
    window.history_pane.status_combo.setCurrentIndex(window.history_pane.status_combo.findData("finished"))
    run_async(qloop, wait_until(lambda: set(rows_of(window)) == {"run-old"}, what="status filter"))
    window.history_pane.status_combo.setCurrentIndex(0)
    window.history_pane.model_edit.setText("other-root")
    run_async(qloop, wait_until(lambda: set(rows_of(window)) == {"run-new"}, what="model filter"))
    window.history_pane.model_edit.setText("")
    window.history_pane.period_combo.setCurrentIndex(2)          # last 7 days: the old run drops out
    run_async(qloop, wait_until(lambda: set(rows_of(window)) == {"run-new"}, what="date filter"))
    window.history_pane.period_combo.setCurrentIndex(0)
    run_async(qloop, wait_until(lambda: len(rows_of(window)) == 2, what="all runs again"))

    # Export through the pane's menu; the save dialog is the OS's, so its answer is given here.
    target = tmp_path / "exported.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    assert window.history_pane.select("run-old")
    window.history_pane.export_actions["json"].trigger()
    data = json.loads(target.read_text(encoding="utf-8"))
    assert "What were the total sales" in json.dumps(data)
    for fmt in ("md", "html"):
        path = controller.history.export_run("run-old", fmt, str(tmp_path / f"run.{fmt}"))
        assert path and (tmp_path / f"run.{fmt}").stat().st_size > 0
    assert "Exported to" in window.notifier.last.message


def test_rerun_loads_sources_question_models_and_caps(stored, studio, qloop):
    window, controller = studio
    controller.history.refresh()
    window.history_pane.select("run-old")
    window.history_pane.rerun_button.click()
    qp = window.question_panel
    assert qp.question() == "What were the total sales in 2023?"
    assert qp.root_model() == "openai/root-model" and qp.sub_model() == "openai/sub-model"
    assert qp.caps() == {"max_depth": 2, "max_cost_usd": 5.0, "max_iterations": 10}
    assert sorted(controller.documents) == ["notes.txt", "sales/2023.csv"]
    assert controller.documents["notes.txt"].text == "The board met twice."
    assert {r.path for r in window.sources_pane.rows()} == {"notes.txt", "sales/2023.csv"}
    assert controller.parent_run_id == "run-old"
    assert "Change models or caps" in window.notifier.last.message


def test_delete_asks_and_removes(stored, studio, qloop, monkeypatch):
    from PySide6.QtWidgets import QMessageBox
    window, controller = studio
    controller.history.refresh()
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    asked = []

    def question(*args, **kwargs):
        asked.append(args[2])
        return answers.pop(0)

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    window.history_pane.select("run-old")
    window.history_pane.delete_button.click()                      # "No": kept
    assert "run-old" in rows_of(window)
    window.history_pane.select("run-old")
    window.history_pane.delete_button.click()                      # "Yes": gone
    assert "run-old" not in rows_of(window)
    assert controller.history.store().get_run("run-old") is None
    assert len(asked) == 2 and "cannot be undone" in asked[0]


def test_open_replays_the_stored_run(stored, studio, qloop):
    window, controller = studio
    controller.history.refresh()
    window.history_pane.select("run-old")
    window.history_pane.open_button.click()
    assert controller.history.replaying == "run-old"
    panes = window.run_panes
    bar = panes.replay_bar
    assert bar.isVisibleTo(window) and bar.position == len(bar.events) > 40   # at the end
    assert "run-old" in window.replay_label.text() and window.live_action.isVisible()
    # The replay is the same fold as a live run: the same tree as feeding the events directly.
    from core.runview import RunView
    live = RunView()
    for event in stored["run-old"]:
        live.apply(event)
    assert sorted(panes.view.nodes) == sorted(live.nodes)
    assert panes.view.status == live.status == "finished"
    bar.seek(3)
    assert len(panes.view.nodes) < len(live.nodes)
    window.live_action.trigger()
    assert controller.history.replaying is None and not bar.isVisibleTo(window)
    assert not window.replay_label.isVisibleTo(window)
