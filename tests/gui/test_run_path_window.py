"""The window on the one run path, where it used to drift from the CLI:
- an edited fork's new sub-calls go live to the sub model, within the fork's cap
  (the window used to answer them with ReplayDivergence errors, unsaid);
- keys are routed by the URL a call goes to: a model typed for a key-less local
  endpoint never carries the OpenAI key from the keychain;
- the window's engine process is marked non-dumpable when a run starts."""

from __future__ import annotations

import pytest

from tests.gui.test_trust_fork import SCRIPT, parent, until_idle  # noqa: F401
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import KEY, code

import core.engine.prepare  # noqa: F401,E402 - a missing module must fail, not skip


def test_an_edited_fork_gets_live_budgeted_sub_calls(parent, qloop, openai_server):
    window, controller, outcome = parent
    actions = controller.trust.actions
    dialog = actions.fork_dialog_for(outcome.run_id, 2, show=False)
    dialog.edit_check.setChecked(True)
    dialog.code_edit.setPlainText("fresh = llm_query('A question never asked: ' + lines[0])\nprint(fresh)")
    choice = dialog.values()
    openai_server.script("sub", fn=lambda r: "LIVE " + r.prompt.split(": ", 1)[-1])
    openai_server.script("root", replies=[code("FINAL(fresh)")])
    subs_before = len(openai_server.requests_for("sub"))

    async def body():
        actions.start_fork(outcome.run_id, choice, dialog.original_models)
        await until_idle(controller)
    run_async(qloop, body(), timeout=120)
    fork = controller.last_outcome
    assert fork.status == "finished", window.notifier.history
    live = openai_server.requests_for("sub")[subs_before:]
    assert [r.prompt for r in live] == ["A question never asked: === notes.txt ==="]
    assert live[0].api_key == KEY                                 # routed like every other call
    assert fork.answer == "LIVE === notes.txt ==="                    # not a ReplayDivergence string
    assert "LIVE === notes.txt ===" in str(openai_server.requests_for("root")[-1].body)
    assert not any("ReplayDivergence" in n.message for n in window.notifier.history)


def test_a_key_goes_only_to_its_own_url(studio, qloop, openai_server):
    from app.settings import Endpoint
    from core.repl.sandbox import is_dumpable
    from tests.support.trust_runs import DOCS
    window, controller = studio
    controller.settings.endpoints = [Endpoint("lab", openai_server.url, ["root"], needs_key=False)]
    controller.settings.caps["cell_timeout_s"] = 30
    controller.keys().set("openai", "sk-cloud-key-0123456789")
    controller.set_documents(list(DOCS))
    qp = window.question_panel
    qp.set_models("lab/other", "lab/other")                  # typed: not among the endpoint's models
    qp.set_caps({"max_depth": 1, "max_cost_usd": 0, "max_iterations": 3})
    qp.set_question("Which key do you get?")
    openai_server.script("other", replies=[code("FINAL(llm_query('hi'))"), "fine"])

    async def body():
        qp.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=60, what="the run to end")
    run_async(qloop, body(), timeout=90)
    assert controller.last_outcome.status == "finished", window.notifier.history
    sent = openai_server.requests_for("other")
    assert len(sent) == 2 and not any("sk-cloud" in str(r.headers) for r in sent), [r.headers for r in sent]
    assert is_dumpable() in (False, None)                     # the window's engine process is hardened
