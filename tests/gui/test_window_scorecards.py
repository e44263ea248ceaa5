"""Issue 27 part C item 4 in the real window against the scripted server: Models >
Scorecards > New evaluation… starts an evaluation over Sources' documents, shows each
question's progress live, compares modes in the scorecard, names questions by their text,
tags its runs and keeps them out of History; Stop ends it, the run in flight stopped."""

from __future__ import annotations

import json

from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.openai_actions import Delay
from tests.support.openai_server import Reply

DIRECT = "You answer questions about the documents"
SET = [{"id": "files", "question": "How many files are there?", "expected": 2, "checker": "number"},
       {"id": "fruit", "question": "Which fruit is counted 4 times?", "expected": "pears", "checker": "contains"}]


def write_set(tmp_path, questions=SET):
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in questions))
    return path


def root_fn(req):
    text = json.dumps(req.messages)
    if req.messages[0]["content"].startswith(DIRECT):
        return Reply("There are 2 files; pears: 4.", usage=(200, 8))
    if "How many files" in text:
        return Reply(code("FINAL(str(len(documents)))"), usage=(100, 10))
    return Reply(code("FINAL('apples')"), usage=(100, 10))


def open_dialog(controller):
    view = controller.models.open_view()
    view.tabs.setCurrentIndex(1)
    assert "New evaluation" in view.card_hint.text() and "command line" not in view.card_hint.text()
    view.evaluate_button.click()
    return view, controller.models.scorecards.dialog


def test_evaluation_from_the_window_compares_modes_and_stays_out_of_history(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", fn=root_fn)
    prepare(window, controller, server, tmp_path, qloop)
    view, dialog = open_dialog(controller)
    assert dialog.isVisible() and dialog.set_edit.text().endswith("eval_questions.jsonl")   # the samples' set
    assert dialog.pair_at(0) == ("lab/root", "lab/sub")                       # as the question panel has it
    dialog.set_edit.setText(str(write_set(tmp_path)))
    dialog.documents_box.setCurrentIndex(dialog.documents_box.findData("sources"))
    dialog.mode_checks["direct"].setChecked(True)
    seen_running = []

    async def body():
        dialog.start_button.click()
        glue = controller.models.scorecards
        assert glue.task is not None and not dialog.start_button.isEnabled()
        await wait_until(lambda: dialog.progress_table.rowCount() == 4, timeout=60, what="the jobs")
        await wait_until(lambda: "running" in dialog.states().values() or glue.task.done(), timeout=60,
                         what="a question running")
        seen_running.append(dict(dialog.states()))
        return await glue.task
    evaluation_id = run_async(qloop, body(), timeout=180)
    assert evaluation_id
    progress = {(dialog.progress_table.item(r, 0).text(), dialog.progress_table.item(r, 2).text()):
                dialog.progress_table.item(r, 4).text() for r in range(4)}
    assert progress == {("How many files are there?", "rlm"): "right",
                        ("Which fruit is counted 4 times?", "rlm"): "wrong",
                        ("How many files are there?", "direct"): "right",
                        ("Which fruit is counted 4 times?", "direct"): "right"}
    assert any(v == "running" for v in seen_running[0].values())
    assert dialog.status_label.text().startswith("Done: 4 answers scored")

    # The scorecard is shown, one line per mode, the answers by question text.
    assert view.current_evaluation() == evaluation_id
    lines = {view.card_table.item(r, 1).text(): view.card_table.item(r, 3).text()
             for r in range(view.card_table.rowCount())}
    assert lines == {"rlm": "50%", "direct": "100%"}
    asked = {view.answers_table.item(r, 0).text() for r in range(view.answers_table.rowCount())}
    assert asked == {"How many files are there?", "Which fruit is counted 4 times?"}

    # Its runs are tagged and out of History unless asked for.
    store = controller.history.store()
    tagged = {r[0] for r in store.db.execute("SELECT id FROM runs WHERE evaluation_id = ?", [evaluation_id])}
    assert len(tagged) == 4
    hp = window.history_pane
    controller.history.refresh()
    assert not tagged & {r.id for r in hp.model.rows()}
    hp.evaluations_check.setChecked(True)
    shown = {r.id: r for r in hp.model.rows()}
    assert tagged <= set(shown)
    row = [r for r in range(hp.model.rowCount()) if hp.model.rows()[r].id in tagged][0]
    assert "evaluation" in hp.model.index(row, hp.model.COL_STATUS).data()


def test_bad_input_is_said_in_the_dialog_and_nothing_runs(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", fn=root_fn)
    prepare(window, controller, server, tmp_path, qloop)
    _view, dialog = open_dialog(controller)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "question": "Q?", "expected": 1, "checker": "fuzzy"}\n')
    dialog.set_edit.setText(str(bad))
    dialog.start_button.click()
    assert dialog.error_label.isVisibleTo(dialog)
    assert "bad.jsonl line 1" in dialog.error_label.text() and "fuzzy" in dialog.error_label.text()
    dialog.set_edit.setText(str(write_set(tmp_path)))
    for check in dialog.mode_checks.values():
        check.setChecked(False)
    dialog.start_button.click()
    assert "Tick at least one mode" in dialog.error_label.text()
    assert dialog.set_edit.text().endswith("set.jsonl")                    # what was typed is kept
    assert controller.models.scorecards.task is None and not server.requests_for("root")


def test_stop_ends_the_evaluation_and_stops_the_run_in_flight(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", fn=lambda req: Delay(60, code("FINAL('2')")))
    prepare(window, controller, server, tmp_path, qloop)
    _view, dialog = open_dialog(controller)
    dialog.set_edit.setText(str(write_set(tmp_path)))
    dialog.parallel_spin.setValue(1)

    async def body():
        dialog.start_button.click()
        glue = controller.models.scorecards
        await wait_until(lambda: len(server.requests_for("root")) == 1, timeout=60, what="the first model call")
        dialog.stop_button.click()
        return await glue.task
    evaluation_id = run_async(qloop, body(), timeout=60)
    states = sorted(dialog.states().values())
    assert states == ["not started", "stopped"]
    assert dialog.status_label.text().startswith("Stopped: 0 answers scored, 1 stopped")
    assert len(server.requests_for("root")) == 1                             # the second never started
    store = controller.history.store()
    runs = store.db.execute("SELECT status FROM runs WHERE evaluation_id = ?", [evaluation_id]).fetchall()
    assert runs == [("cancelled",)]
    card = controller.models.scorecard(evaluation_id)
    assert card["stopped"] == 1 and card["lines"] == []                       # a stop is nobody's failure


def test_two_scorecards_side_by_side(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", fn=root_fn)
    prepare(window, controller, server, tmp_path, qloop)
    view, dialog = open_dialog(controller)
    ids = []
    for name, questions in (("first", SET), ("second", SET[:1])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(q) + "\n" for q in questions))
        dialog.set_edit.setText(str(path))

        async def body():
            dialog.start_button.click()
            return await controller.models.scorecards.task
        ids.append(run_async(qloop, body(), timeout=120))
    assert ids[0] != ids[1] and view.current_evaluation() == ids[1]
    assert view.card_table.rowCount() == 1
    view.beside_box.setCurrentIndex(view.beside_box.findData(ids[0]))
    pairs = [view.card_table.item(r, 0).text() for r in range(view.card_table.rowCount())]
    assert pairs[0] == "lab/root:lab/sub" and pairs[1].startswith("lab/root:lab/sub · first · ")
    accuracy = [view.card_table.item(r, 3).text() for r in range(view.card_table.rowCount())]
    assert accuracy == ["100%", "50%"]
    view.beside_box.setCurrentIndex(0)                                          # nothing beside
    assert view.card_table.rowCount() == 1


def test_closing_the_window_stops_a_running_evaluation(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", fn=lambda req: Delay(60, code("FINAL('2')")))
    prepare(window, controller, server, tmp_path, qloop)
    _view, dialog = open_dialog(controller)
    dialog.set_edit.setText(str(write_set(tmp_path)))

    async def body():
        dialog.start_button.click()
        await wait_until(lambda: len(server.requests_for("root")) == 2, timeout=60, what="both model calls")
        await controller.shutdown(timeout=20)                              # the window closes
    run_async(qloop, body(), timeout=60)
    assert controller.models.scorecards.task.done()
    from core.store import RunStore
    with RunStore.open() as store:
        statuses = [r[0] for r in store.db.execute("SELECT status FROM runs WHERE evaluation_id IS NOT NULL")]
    assert statuses == ["cancelled", "cancelled"]                      # none left "running"
    assert dialog.status_label.text().startswith("Stopped: 0 answers scored, 2 stopped"), dialog.status_label.text()
