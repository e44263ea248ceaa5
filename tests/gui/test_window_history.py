"""History pane over a real RunStore file: list, filter, replay, export, re-run, delete."""

from __future__ import annotations

import json
import time

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from ui.history_pane import HistoryModel



def store_run(run_id: str, recording: str, *, t0: float) -> list:
    """Write a recording of a real engine run (tests/support/record_runs.py) as run `run_id`
    starting at `t0`, with the documents it was recorded over, into the store under RLMSTUDIO_DESKTOP_HOME."""
    from core.store import RunStore
    from tests.support.record_runs import recorded_run
    from tests.unit.store.test_sources import docs
    events = recorded_run(recording, run_id, t0=t0)
    with RunStore.open() as store:
        writer = store.writer()
        for event in events:
            writer(event)
        writer.close()
        store.save_sources(run_id, docs(), [])
    return events


@pytest.fixture
def stored(studio_home):
    first = store_run("run-old", "sales", t0=1_700_000_000.0)                 # finished, long ago
    second = store_run("run-new", "supplier", t0=time.time())               # capped, root openai/claude-x, now
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
    assert texts[HistoryModel.COL_QUESTION] == stored["run-new"][0].question and texts[HistoryModel.COL_COST].startswith("$")   # newest first

    # Search, status and model filters go to the store.
    window.history_pane.search_edit.setText("supplier")
    run_async(qloop, wait_until(lambda: set(rows_of(window)) == {"run-new"}, what="search"))
    window.history_pane.search_edit.setText("")
    window.history_pane.status_combo.setCurrentIndex(window.history_pane.status_combo.findData("finished"))
    run_async(qloop, wait_until(lambda: set(rows_of(window)) == {"run-old"}, what="status filter"))
    window.history_pane.status_combo.setCurrentIndex(0)
    assert stored["run-new"][0].root_model == "openai/claude-x" != stored["run-old"][0].root_model
    window.history_pane.model_edit.setText("claude")
    run_async(qloop, wait_until(lambda: set(rows_of(window)) == {"run-new"}, what="model filter"))
    window.history_pane.model_edit.setText("")
    window.history_pane.period_combo.setCurrentIndex(2)          # last 7 days: the old run drops out
    run_async(qloop, wait_until(lambda: set(rows_of(window)) == {"run-new"}, what="date filter"))
    window.history_pane.period_combo.setCurrentIndex(0)
    run_async(qloop, wait_until(lambda: len(rows_of(window)) == 2, what="all runs again"))

    # Export through the pane's menu: the save dialog (ui/export_dialog.py) is answered here.
    from tests.gui.test_export_dialog import press_save, when_the_dialog_shows
    target = tmp_path / "exported.json"

    def save_as_target(dialog):
        dialog.setDirectory(str(tmp_path))
        dialog.name_edit().setText(target.name)
        press_save(dialog)
    seen = when_the_dialog_shows(save_as_target)
    assert window.history_pane.select("run-old")
    window.history_pane.export_actions["json"].trigger()
    # Offered under the question's words and the time, not the hex id; then Open is offered.
    offered = [name for _type, name in seen]
    assert offered and offered[0].endswith(".json") and "run-old" not in offered[0]
    assert seen[0][0].startswith("JSON")                     # the JSON menu entry: the JSON type
    assert "what-were-the-total-sales" in offered[0], offered
    import ui.main_window as main_window_module
    opened = []
    monkeypatch.setattr(main_window_module, "open_url", lambda url: opened.append(url.toLocalFile()))
    assert window.open_file_button.isVisibleTo(window)
    window.open_file_button.click()
    assert opened == [str(target)]
    data = json.loads(target.read_text(encoding="utf-8"))
    assert "What were the total sales" in json.dumps(data)
    for fmt in ("md", "html"):
        path = controller.history.export_run("run-old", fmt, str(tmp_path / f"run.{fmt}"))
        assert path and (tmp_path / f"run.{fmt}").stat().st_size > 0
    assert "Exported to" in window.notifier.last.message


def test_rerun_loads_sources_question_models_and_caps(stored, studio, qloop):
    from tests.unit.store.test_sources import docs
    window, controller = studio
    started = stored["run-old"][0]
    controller.history.refresh()
    window.history_pane.select("run-old")
    window.history_pane.rerun_button.click()
    qp = window.question_panel
    assert qp.question() == "What were the total sales in 2023?"
    assert qp.root_model() == started.root_model == "openai/root-model"
    assert qp.sub_model() == started.sub_model == "openai/sub-model"
    assert qp.caps() == {k: started.config[k] for k in ("max_depth", "max_cost_usd", "max_iterations")}
    assert sorted(controller.documents) == sorted(d["path"] for d in started.documents) == [
        "notes.txt", "sales/2023.csv"]
    assert controller.documents["notes.txt"].text == docs()[1].text
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
    kept = list(controller.history.store().iter_events("run-old"))
    assert bar.isVisibleTo(window) and bar.position == len(bar.events) == len(kept)   # at the end
    tokens = [e for e in stored["run-old"] if e.type == "RootTokens"]
    streamed = {e.call_id for e in tokens}                                # the store keeps one row per turn
    assert kept[-1].type == "RunFinished" and len(kept) == len(stored["run-old"]) - len(tokens) + len(streamed)
    assert window.replay_label.text().startswith("Replay of “What were the total sales in 2023? · ")   # by name
    assert window.live_action.isVisible()
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


def test_rerun_of_an_imported_run_uses_the_users_endpoints_not_the_files(stored, studio, qloop, tmp_path):
    """A run file is hostile input: Re-run of an imported run routes its models through the
    user's own endpoints by the names the run showed, and says where calls will go."""
    from app.settings import Endpoint
    from core.exports import export
    from core.store import RunStore
    window, controller = studio
    own, evil = "http://127.0.0.1:1/own/v1", "http://127.0.0.1:2/evil/v1"
    with RunStore.open() as store:
        export(store, "run-old", "json", tmp_path / "run.json", include_texts=True)
        data = json.loads((tmp_path / "run.json").read_text())
        data["config"].update(api_base=evil, api_key_from="openai",
                              model_labels={"openai/root-model": "lab/root-model",
                                            "openai/sub-model": "lab/sub-model"})
        (tmp_path / "run.json").write_text(json.dumps(data))
        store.delete_run("run-old")
        assert store.import_json(tmp_path / "run.json") == "run-old"
    controller.settings.endpoints = [Endpoint("lab", own, ["root-model", "sub-model"], needs_key=True)]
    controller.history.refresh()
    window.history_pane.select("run-old")
    window.history_pane.rerun_button.click()
    qp = window.question_panel
    assert qp.root_model() == "lab/root-model"
    message = window.notifier.last.message
    assert f"root lab/root-model -> {own} (key of lab)" in message and evil not in message
    request = controller.compose("re-run", parent_run_id="run-old")
    assert request.config.api_base == own and request.config.api_key_from is None
