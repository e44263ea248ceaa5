"""Issue 27, part C, items 1-3 in the real window against the scripted server: the
comparison views and Fitness name the models as the user picked them (`lab/root`, not
the routed `openai/root`), show answers as rendered Markdown, name runs by question and
time, and one question's documents have one token estimate in every place."""

from __future__ import annotations

import re

from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import run_with_direct_call, qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.openai_server import Reply

DIRECT = "You answer questions about the documents"
MARKDOWN = "## Fruit\\n\\n**apples** and *pears*\\n\\n| what | n |\\n|---|---|\\n| apples | 3 |"


def root_fn(req):
    if req.messages[0]["content"].startswith(DIRECT):
        return Reply("## Plainly\n\n**two** files", usage=(321, 4))
    return Reply(code(f"FINAL('{MARKDOWN}')"), usage=(100, 10))


def run_once(window, controller, qloop):
    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(lambda: not controller.running, timeout=90, what="the run to end")
    run_async(qloop, body(), timeout=120)
    assert controller.last_outcome.status == "finished", window.notifier.history
    return controller.last_outcome


def test_direct_compare_names_markdown_and_one_token_estimate(studio, qloop, server, tmp_path):
    from core.token_count import about_tokens, documents_tokens
    window, controller = studio
    server.script("root", fn=root_fn)
    prepare(window, controller, server, tmp_path, qloop)
    shown = run_with_direct_call(window, controller, qloop)
    view = controller.models.compare
    assert view.titles[0].text() == "RLM · lab/root → lab/sub"
    assert view.titles[1].text() == "Direct call · lab/root"
    assert "openai/" not in shown["note"] + view.titles[0].text() + view.titles[1].text()
    rendered = view.answers[0].toPlainText()
    assert "Fruit" in rendered and "apples" in rendered and "##" not in rendered and "**" not in rendered
    assert "|---|" not in rendered                                 # the table is a table
    assert view.answers[1].toPlainText().startswith("Plainly") and "**" not in view.answers[1].toPlainText()

    # One estimate: Sources' totals and the dialog's note say the same words for the same
    # documents; the direct call's tokens are the provider's count, said so.
    estimate = about_tokens(documents_tokens(controller.documents.values()))
    assert estimate in window.sources_pane.totals_label.text()
    assert f"The documents are {estimate}" in shown["note"]
    assert "321 tokens (counted by the provider) in" in shown["direct"]["figures"]
    assert not re.search(r"~\d", window.sources_pane.totals_label.text())


def test_compare_and_fitness_show_picked_names_and_run_titles(studio, qloop, server, tmp_path):
    from core.fitness import model_fitness
    from core.run_names import run_title
    window, controller = studio
    server.script("root", fn=root_fn)
    server.script("sub", fn=lambda r: "x")
    prepare(window, controller, server, tmp_path, qloop)
    a = run_once(window, controller, qloop)
    b = run_once(window, controller, qloop)
    store = controller.history.store()
    assert store.get_run(a.run_id)["root_model"] == "openai/root"       # the route, as litellm is given it
    bar = controller.sessions.bar.text()                          # the follow-up bar names it too
    assert bar.startswith("The REPL of “Which files are there? · ") and b.run_id[:8] not in bar

    view = controller.trust.actions.compare(a.run_id, b.run_id)
    left, right = view.comparison.left, view.comparison.right
    assert left.models == right.models == "lab/root (root) · lab/sub (sub)"    # as picked, not routed
    assert view.left_answer.toPlainText().startswith("Fruit\napples and pears")        # rendered: a heading
    title = run_title(store.get_run(a.run_id))
    assert title.startswith("Which files are there? · ")
    assert left.question == "Which files are there?" and left.when and left.name != right.name  # two runs, two names (the same second: Run A and Run B)
    assert view.table.horizontalHeaderItem(1).text() == "Run A"
    assert "lab/root (root)" in view.headings[0].text() and left.when in view.headings[0].text()
    assert a.run_id[:8] not in view.windowTitle() and "Which files are there?" in view.windowTitle()
    plain = view.left_answer.toPlainText()
    assert "Fruit" in plain and "##" not in plain and "**" not in plain

    stats = model_fitness(store.db)
    assert [m["model"] for m in stats["roots"]] == ["lab/root"]
    controller.models.open_view()
    shown = [controller.models.view.root_table.item(r, 0).text()
             for r in range(controller.models.view.root_table.rowCount())]
    assert shown == ["lab/root"]


def test_fitness_sub_models_by_picked_name(studio, qloop, server, tmp_path):
    from core.fitness import model_fitness
    window, controller = studio
    server.script("root", replies=[code("print(llm_query('hi'))\nFINAL('done')")])
    server.script("sub", fn=lambda r: "x")
    prepare(window, controller, server, tmp_path, qloop)
    run_once(window, controller, qloop)
    stats = model_fitness(controller.history.store().db)
    assert [m["model"] for m in stats["subs"]] == ["lab/sub"]
    assert stats["subs"][0]["calls"] == 1
