"""Fork in the real window: "Fork from here…" on turn 2 of a replayed run opens
the fork dialog; accepting it rebuilds the REPL up to that turn (no cost) and
continues live as a new run linked to its parent; History shows the family.
With edited code, the edited cell runs first and the root goes on after it."""

from __future__ import annotations

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import code, setup_lab

import core.engine.prepare  # noqa: F401,E402 - a missing module must fail, not skip

SCRIPT = [
    code("lines = context.splitlines()\nprint(len(lines), 'lines')"),
    code("rev = [l for l in lines if 'Revenue in Q3' in l]\n"
         "answers = llm_query_batched(['Extract the number: ' + r for r in rev])\nprint(answers)"),
    code("FINAL('Q3: ' + answers[0])"),
]


@pytest.fixture
def parent(studio, qloop, openai_server):
    from core.store import RunStore
    from tests.support.trust_runs import stored_run
    window, controller = studio
    setup_lab(window, controller, openai_server, "What was Q3 revenue?")     # the endpoint and its key
    openai_server.script("root", replies=list(SCRIPT))
    openai_server.script("sub", fn=lambda r: "42 million")
    with RunStore.open() as store:
        outcome = run_async(qloop, stored_run(openai_server, store))
    assert outcome.status == "finished"
    return window, controller, outcome


async def until_idle(controller):
    await wait_until(lambda: controller.running, what="the fork to start")
    await wait_until(lambda: not controller.running, timeout=90, what="the fork to end")


def test_fork_from_turn_2_makes_a_linked_run(parent, qloop, openai_server):
    window, controller, outcome = parent
    controller.history.refresh()
    window.history_pane.select(outcome.run_id)
    window.history_pane.open_button.click()                      # replay it
    actions = controller.trust.actions
    menu = actions.turn_menu("R.t2")
    assert actions.turn_menu("R.t2.c1") is None                  # only turns fork
    fork_action = menu.actions()[0]
    assert fork_action.text() == "Fork from here…" and fork_action.isEnabled()
    fork_action.trigger()
    dialog = actions.fork_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.turn_combo.currentData() == 2 and "Revenue in Q3" in dialog.code_edit.toPlainText()
    assert dialog.root_picker.model_id() == "lab/root" and dialog.sub_picker.model_id() == "lab/sub"
    dialog.iter_spin.setValue(4)
    from app.settings import ModelSettings
    from core.config import Price
    controller.settings.models["lab/root"] = ModelSettings(price=Price(1.0, 2.0))   # priced since the parent ran
    openai_server.price("root", 1.0, 2.0)
    asked_before = len(openai_server.history)
    openai_server.script("root", replies=[code("FINAL('forked after ' + str(len(lines)) + ' lines')")])
    asked_root = len(openai_server.requests_for("root"))

    async def body():
        dialog.accept()                                          # "Fork and run"
        await until_idle(controller)
    run_async(qloop, body(), timeout=120)
    fork = controller.last_outcome
    assert fork.run_id != outcome.run_id and fork.status == "finished", window.notifier.history
    assert fork.answer == "forked after 15 lines"                 # `lines` came from the rebuilt turn 1
    assert len(openai_server.requests_for("root")) == asked_root + 1      # turn 1 was not asked again
    stored = controller.history.store().get_run(fork.run_id)
    assert stored["parent_run_id"] == outcome.run_id and stored["max_iterations"] == 4
    # billed at today's price of lab/root, which the fork's config keeps
    billed = openai_server.billed_usd(openai_server.history[asked_before:])
    assert outcome.totals["cost_usd"] == 0.0 and fork.totals["cost_usd"] > 0
    assert abs(fork.totals["cost_usd"] - billed) < 1e-9
    assert stored["config"]["prices"]["lab/root"] == [1.0, 2.0] and stored["fork_turn"] == 2
    said = "Forked from turn 2 of What was Q3 revenue?"
    transcript = window.run_panes.transcript
    assert transcript.fork_label.isVisibleTo(window) and transcript.fork_label.text().startswith(said)
    assert transcript.fork_label.text().endswith("; turn 1 rebuilt from the record.")
    # The panes show the fork live; History shows the family, the fork under its parent.
    assert window.run_panes.view.meta.run_id == fork.run_id
    window.history_pane.select(fork.run_id)
    actions.bar.family_button.click()
    rows = window.history_pane.model.rows()
    assert [r.id for r in rows] == [outcome.run_id, fork.run_id]
    assert rows[1].question.startswith("    \u21b3 ") and not rows[0].question.startswith(" ")
    actions.bar.family_button.click()                                 # back to every run
    assert actions.family_of is None
    pane = window.history_pane
    pane.select(fork.run_id)
    row = pane.model.row_of(fork.run_id)
    assert "fork of turn 2" in pane.model.index(row, pane.model.COL_STATUS).data()
    assert not pane.fork_label.isHidden() and pane.fork_label.text().startswith(said), pane.fork_label.text()
    opened = []
    pane.open_requested.connect(opened.append)
    pane.fork_label.linkActivated.emit(outcome.run_id)           # "Replay the parent run"
    assert opened == [outcome.run_id] and f'href="{outcome.run_id}"' in pane.fork_label.text()


def test_fork_with_edited_code_runs_the_edit_first(parent, qloop, openai_server):
    window, controller, outcome = parent
    actions = controller.trust.actions
    dialog = actions.fork_dialog_for(outcome.run_id, 2, show=False)
    dialog.edit_check.setChecked(True)
    dialog.code_edit.setPlainText("print('edited sees', len(lines), 'lines')")
    choice = dialog.values()
    assert choice.turn == 2 and choice.code.startswith("print('edited")
    openai_server.script("root", replies=[code("FINAL('after the edit')")])

    async def body():
        actions.start_fork(outcome.run_id, choice, dialog.original_models)
        await until_idle(controller)
    run_async(qloop, body(), timeout=120)
    fork = controller.last_outcome
    assert fork.status == "finished" and fork.answer == "after the edit", window.notifier.history
    last = openai_server.requests_for("root")[-1]
    assert "edited sees 15 lines" in str(last.body)             # the root was shown the edited cell's output
    assert controller.history.store().get_run(fork.run_id)["parent_run_id"] == outcome.run_id


def test_turn_header_in_the_transcript_offers_the_fork(parent, qloop, monkeypatch):
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QMenu
    window, controller, outcome = parent
    controller.history.open_run(outcome.run_id)
    window.run_panes.flush()
    popped = []
    monkeypatch.setattr(QMenu, "popup", lambda self, pos, *a: popped.append([x.text() for x in self.actions()]))
    header = window.run_panes.transcript.card("R.t2").header
    header.customContextMenuRequested.emit(QPoint(2, 2))          # a right-click on "Turn 2 · ..."
    assert popped == [["Fork from here…"]]
