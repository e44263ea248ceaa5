"""Compare two stored runs in the real window: select both in History, press
Compare: answers, cost, turns and sub-calls side by side, and the first point
where they differ."""

from __future__ import annotations

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home  # noqa: F401
from tests.support.trust_gui import code

import core.trust.compare  # noqa: F401,E402 - a missing module must fail, not skip

SCRIPT = [
    code("lines = context.splitlines()\nprint(len(lines), 'lines')"),
    code("rev = [l for l in lines if 'Revenue in Q3' in l]\n"
         "answers = llm_query_batched(['Extract the number: ' + r for r in rev])\nprint(answers)"),
    code("FINAL('Q3: ' + answers[0])"),
]


def test_compare_shows_the_first_difference(studio, qloop, openai_server):
    from core.store import RunStore
    from tests.support.trust_runs import stored_run
    window, controller = studio
    outcomes = []
    with RunStore.open() as store:
        for answer in ("42 million", "41 million"):
            openai_server.script("root", replies=list(SCRIPT))
            openai_server.script("sub", fn=lambda r, a=answer: a)
            outcomes.append(run_async(qloop, stored_run(openai_server, store)))
    a, b = outcomes
    assert a.answer == "Q3: 42 million" and b.answer == "Q3: 41 million"

    controller.history.refresh()
    hp = window.history_pane
    actions = controller.trust.actions
    hp.select(a.run_id)
    actions.bar.compare_button.click()                              # mark the first run
    assert actions.compare_first == a.run_id and actions.compare_view is None
    assert "is marked: select the run to compare" in window.statusBar().currentMessage()
    hp.select(b.run_id)
    assert actions.bar.compare_button.text() == "Compare with “What was Q3 revenue?”"
    actions.bar.compare_button.click()                              # compare with the second
    assert actions.compare_first is None
    assert window.statusBar().currentMessage() == ""             # the hint is not left standing
    view = actions.compare_view
    assert view is not None and view.isVisible()
    assert view.windowTitle().startswith("Compare: What was Q3 revenue? · ")      # named, not by id
    assert a.run_id[:8] not in view.windowTitle()
    rows = {label: (left, right) for label, left, right in view.row_texts()}
    assert set(rows["Answer"]) == {"Q3: 42 million", "Q3: 41 million"}
    assert rows["Turns"] == ("3", "3") and rows["Sub-calls (failed)"] == ("1 (0)", "1 (0)")
    assert rows["Question"][0] == rows["Question"][1]
    text = view.difference_label.text()
    assert text.startswith("First difference: turn 2, cell 1: the output differs")
    assert "42 million" in text and "41 million" in text
    assert {view.left_answer.toPlainText(), view.right_answer.toPlainText()} == {a.answer, b.answer}
    same = [r for r in range(view.table.rowCount()) if view.table.item(r, 0).text() == "Turns"][0]
    differ = [r for r in range(view.table.rowCount()) if view.table.item(r, 0).text() == "Answer"][0]
    assert view.table.item(differ, 1).background() != view.table.item(same, 1).background()


def test_compare_of_a_run_with_itself_finds_no_difference(studio, qloop, openai_server):
    from core.store import RunStore
    from tests.support.trust_runs import stored_run
    window, controller = studio
    openai_server.script("root", replies=list(SCRIPT))
    openai_server.script("sub", fn=lambda r: "42 million")
    with RunStore.open() as store:
        a = run_async(qloop, stored_run(openai_server, store))
    view = controller.trust.actions.compare(a.run_id, a.run_id)
    assert view.difference_label.text().startswith("No difference")
