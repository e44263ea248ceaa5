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


def two_runs(openai_server, qloop, answers=("42 million", "41 million")) -> list:
    """Two stored runs of SCRIPT whose sub model answers `answers` in turn."""
    from core.store import RunStore
    from tests.support.trust_runs import stored_run
    outcomes = []
    with RunStore.open() as store:
        for answer in answers:
            openai_server.script("root", replies=list(SCRIPT))
            openai_server.script("sub", fn=lambda r, a=answer: a)
            outcomes.append(run_async(qloop, stored_run(openai_server, store)))
    return outcomes


def test_compare_shows_the_first_difference(studio, qloop, openai_server):
    window, controller = studio
    a, b = two_runs(openai_server, qloop)
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
    assert view.windowTitle() == "Compare: Run A · What was Q3 revenue?  /  Run B · What was Q3 revenue?"
    # Each run named by its question, its start time (to the second) and its models.
    left, right = view.comparison.left, view.comparison.right
    assert (left.name, right.name) == ("Run A", "Run B")
    assert left.question == right.question == "What was Q3 revenue?"
    assert left.when.count(":") == right.when.count(":") == 2, (left.when, right.when)   # to the second
    assert left.models == "openai/root (root) · openai/sub (sub)"
    for heading, run in zip(view.headings, (left, right)):
        assert run.when in heading.text() and run.question in heading.text() and run.models in heading.text()
    # The figures, every row in view, in words and units.
    rows = {label: (l, r) for label, l, r in view.row_texts()}
    assert list(rows) == ["Cost", "Time", "Turns", "Sub-calls", "Tokens in", "Tokens out", "Code cells", "Status"]
    assert rows["Turns"] == ("3", "3") and rows["Sub-calls"] == ("1", "1")
    assert rows["Time"][0].endswith(" s") and rows["Cost"][0].startswith("$")
    table = view.table
    assert table.height() >= sum(table.rowHeight(r) for r in range(table.rowCount())) \
        + table.horizontalHeader().height(), "rows of the figures are hidden"
    # The answers side by side, rendered.
    assert {view.left_answer.toPlainText(), view.right_answer.toPlainText()} == {a.answer, b.answer}
    text = view.difference_label.text()
    assert text.startswith("First difference: turn 2, cell 1: the output differs")
    # The code diff waits folded under "Code", headed by run and turn, never by an id.
    assert view.code.isVisibleTo(view) and not view.code.is_open()
    assert not view.diff_text.isVisibleTo(view)
    diff = view.diff_text.toPlainText()
    assert diff.startswith("--- run A, turn 2, cell 1 output\n+++ run B, turn 2, cell 1 output")
    assert "42 million" in diff and "41 million" in diff
    view.code.set_open(True)
    assert view.diff_text.isVisibleTo(view)
    shown = " ".join([view.windowTitle(), text, *(h.text() for h in view.headings), diff,
                      *(c for row in view.row_texts() for c in row)])
    for run_id in (a.run_id, b.run_id):
        assert run_id[:6] not in shown, f"a hex id is shown: {run_id[:6]}"
    same = [r for r in range(view.table.rowCount()) if view.table.item(r, 0).text() == "Turns"][0]
    untinted = view.table.item(same, 1).background()
    for r, (label, left_text, right_text) in enumerate(view.row_texts()):      # tinted where they differ
        assert (view.table.item(r, 1).background() != untinted) == (left_text != right_text), label


def test_an_unpriced_cost_shows_unknown(studio, qloop, openai_server):
    window, controller = studio
    a, b = two_runs(openai_server, qloop, ("42 million", "42 million"))
    unpriced = [controller.history.store().get_run(r.run_id).get("unpriced") for r in (a, b)]
    assert all(unpriced), unpriced                  # openai/root at a test URL: no price is known
    view = controller.trust.actions.compare(a.run_id, b.run_id)
    cost = dict((label, (l, r)) for label, l, r in view.row_texts())["Cost"]
    assert all(c.endswith(" + unknown") for c in cost), cost


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
