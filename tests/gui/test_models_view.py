"""The Models window (fitness and scorecards, with bars and exports) and "Also ask
directly" in the real window, against the scripted server and a real store."""

from __future__ import annotations

import json

from tests.gui.test_window_run import prepare
from tests.support.gui_app import run_with_direct_call, qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.openai_server import Reply

DIRECT = "You answer questions about the documents"


def root_fn(req):
    if req.messages[0]["content"].startswith(DIRECT):
        return Reply("two files, plainly", usage=(300, 4))
    turns = sum(1 for m in req.messages if m["role"] == "assistant")
    if turns == 0:
        return Reply("```repl\nprint(len(documents)\n```", usage=(100, 10))          # a syntax error
    return Reply("```repl\nFINAL(str(len(documents)) + ' files')\n```", usage=(100, 10))


def test_also_ask_directly_shows_both_answers_side_by_side(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", fn=root_fn)
    prepare(window, controller, server, tmp_path, qloop)
    shown = run_with_direct_call(window, controller, qloop)
    view = controller.models.compare
    assert view.isVisible()
    assert view.texts() == ("2 files", "two files, plainly")
    assert "about" in shown["note"] and "tokens" in shown["note"]
    direct = [r for r in server.requests_for("root") if r.messages[0]["content"].startswith(DIRECT)]
    assert len(direct) == 1 and "apples: 3" in direct[0].messages[-1]["content"]
    assert "finished" in shown["rlm"]["figures"] and "2 turns" in shown["rlm"]["figures"]


def test_models_window_shows_fitness_and_scorecards_and_exports_them(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("root", fn=root_fn)
    prepare(window, controller, server, tmp_path, qloop)
    qset_path = tmp_path / "set.jsonl"
    qset_path.write_text(json.dumps({"id": "files", "question": "How many files?", "expected": 2,
                                     "checker": "number"}) + "\n")

    async def evaluate():
        from app.eval_runs import EvaluationRuns
        from app.run_service import RunService
        from app.settings import build_run_config
        from core.evaluation import load_question_set
        from core.evaluation.runner import Evaluation, parse_pair
        store = controller.history.store()
        docs = list(controller.documents.values())
        runs = EvaluationRuns(RunService(store=store, keys=controller.keys, settings=lambda: controller.settings),
                              docs)

        def config_for(pair):
            return build_run_config(controller.settings, root=pair.root, sub=pair.sub,
                                    overrides={"max_iterations": 3, "max_depth": 0})

        evaluation = Evaluation(load_question_set(qset_path), docs, [parse_pair("lab/root:lab/root")],
                                config_for=config_for, run_rlm=runs.run_rlm, direct=True, llm_for=runs.llm_for)
        return await evaluation.run(store.db)
    evaluation_id, card = run_async(qloop, evaluate(), timeout=90)

    view = controller.models.open_view()
    assert view.isVisible()
    assert view.root_table.rowCount() == 1
    headers = [view.root_table.horizontalHeaderItem(c).text() for c in range(view.root_table.columnCount())]
    row = {h: view.root_table.item(0, c).text() for c, h in enumerate(headers)}
    assert (row["Runs"], row["Finished"], row["Cells"], row["Syntax errors"]) == ("1", "1", "2", "50%")
    assert row["Turns to answer"] == "2"
    model = row["Model"]
    assert sorted(view.root_chart.bars()) == sorted([(model, "syntax errors per cell", 0.5),
                                                     (model, "answered", 1.0)])
    view.tabs.setCurrentIndex(1)
    assert view.current_evaluation() == evaluation_id
    assert view.card_table.rowCount() == 2                         # the RLM line and the direct line
    modes = {view.card_table.item(r, 1).text(): view.card_table.item(r, 3).text() for r in range(2)}
    assert modes == {"rlm": "100%", "direct": "0%"}           # "two files" is not the number 2
    assert ("lab/root:lab/root (rlm)", "accuracy", 1.0) in view.card_chart.bars()
    assert view.answers_table.rowCount() == 2
    out = tmp_path / "card.csv"
    controller.models.export(evaluation_id, "csv", out)
    assert out.read_text().splitlines()[1].startswith("lab/root:lab/root,rlm,1,1,1.0")
    controller.models.export(evaluation_id, "md", tmp_path / "card.md")
    assert "| `lab/root:lab/root` | rlm | 1 | 100% |" in (tmp_path / "card.md").read_text()
    view.grab()                                                    # the bars paint without error
