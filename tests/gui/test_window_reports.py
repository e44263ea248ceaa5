"""A real run in the window, then what it leaves: the model name the user chose in
the store, History, the panes and the exports (the routed name as a detail); the
exports as reports (the answer rendered, citations linked to the quoted passage);
the transcript ending on the answer; a follow-up showing the earlier exchange."""

from __future__ import annotations

from html.parser import HTMLParser

from tests.gui.test_window_analyst import run_and_wait
from tests.gui.test_window_run import code, prepare
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401

ANSWER = ("# Fruit count\\n\\nThere are **3 apples** [doc:one.txt:line 1] and *4 pears* "
          "[doc:sub/two.md:line 2].\\n\\n- apples\\n- pears\\n\\n| fruit | n |\\n|---|---|\\n"
          "| apples | 3 |\\n| pears | 4 |\\n\\nA bad one [doc:one.txt:line 99].")


class Page(HTMLParser):
    """Tags (with attributes) and text, in order, of the answer block and the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.ids: dict[str, int] = {}
        self.text: list[str] = []
        self._in_answer = 0
        self.answer_tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if attrs.get("id"):
            self.ids[attrs["id"]] = len(self.tags)
        if tag == "div" and attrs.get("class") == "answer":
            self._in_answer = 1
        elif self._in_answer:
            self.answer_tags.append(tag)
            if tag == "div":
                self._in_answer += 1

    def handle_endtag(self, tag):
        if self._in_answer and tag == "div":
            self._in_answer -= 1

    def handle_data(self, data):
        self.text.append(data)


def test_chosen_name_in_store_history_panes_and_reports(studio, qloop, server, tmp_path):
    window, controller = studio
    server.script("sub", fn=lambda r: "fine")
    server.script("root", replies=[code(f"x = llm_query('hello')\nFINAL(\"{ANSWER}\")")])
    prepare(window, controller, server, tmp_path, qloop)
    transcript = window.run_panes.transcript
    run_and_wait(window, controller, qloop)
    outcome = controller.last_outcome
    assert outcome.status == "finished", window.notifier.history

    # The store keeps both names: the chosen one to show, the routed one as a detail.
    store = controller.history.store()
    run = store.get_run(outcome.run_id)
    assert (run["root_model_label"], run["sub_model_label"]) == ("lab/root", "lab/sub")
    assert (run["root_model"], run["sub_model"]) == ("openai/root", "openai/sub")
    assert run["config"]["model_labels"] == {"openai/root": "lab/root", "openai/sub": "lab/sub"}
    assert store.list_runs(model="lab/root")[0]["id"] == outcome.run_id
    row = next(r for r in window.history_pane.model.rows() if r.id == outcome.run_id)
    assert (row.root_model, row.sub_model) == ("lab/root", "lab/sub")
    view = window.run_panes.view
    assert {n.model for n in view.nodes.values() if n.model} == {"lab/root", "lab/sub"}
    card = next(iter(transcript._cards.values()))
    assert "lab/root" in card.header.text() and "openai/" not in card.header.text()

    # Markdown: the answer as Markdown (headings below the report's), citations kept as written.
    md_path = tmp_path / "run.md"
    controller.history.export_run(outcome.run_id, "md", str(md_path))
    md = md_path.read_text(encoding="utf-8")
    assert "root model: lab/root (sent as openai/root to http://127.0.0.1:" in md
    assert "### Fruit count" in md and "**3 apples** [doc:one.txt:line 1]" in md
    assert "| apples | 3 |" in md and "```\n# Fruit count" not in md

    # HTML: headings, emphasis, list and table rendered; citations link to the quoted passage.
    html_path = tmp_path / "run.html"
    controller.history.export_run(outcome.run_id, "html", str(html_path))
    page = Page()
    page.feed(html_path.read_text(encoding="utf-8"))
    for tag in ("h3", "strong", "em", "ul", "li", "table", "th", "td", "a"):
        assert tag in page.answer_tags, (tag, page.answer_tags)
    links = [a for t, a in page.tags if t == "a" and "cite" in a.get("class", "")]
    assert [a["href"] for a in links] == ["#cite-1", "#cite-2"]
    for a in links:
        assert a["href"][1:] in page.ids                    # the passage it points to is there
    text = "".join(page.text)
    assert "apples: 3" in text and "pears: 4" in text       # the quoted passages
    assert "one.txt, line 99 ⚠" in text                     # a dangling one is flagged, not linked
    assert "lab/root (sent as openai/root" in text and "## Fruit" not in text


def test_transcript_ends_on_the_answer_and_a_follow_up_shows_the_first_exchange(studio, qloop, server,
                                                                                tmp_path, qapp):
    window, controller = studio
    long_turn = code("for i in range(300):\n    print('line', i)")
    server.script("root", replies=[long_turn, code("FINAL('There are 2 files.')"),
                                   code("FINAL('Pears: 4.')")])
    prepare(window, controller, server, tmp_path, qloop)
    window.resize(1280, 720)
    transcript = window.run_panes.transcript
    run_and_wait(window, controller, qloop)
    assert controller.last_outcome.answer == "There are 2 files."

    async def settle():
        await wait_until(lambda: transcript.answer_card is not None and transcript.answer_card.isVisible(),
                         what="the answer card")
        for _ in range(5):
            qapp.processEvents()
    run_async(qloop, settle())
    card = transcript.answer_card
    top = card.mapTo(transcript.viewport(), card.rect().topLeft()).y()
    assert 0 <= top < transcript.viewport().height(), top          # the answer is in view
    # A follow-up in the live REPL: the earlier question and answer stand above its turns.
    window.question_panel.set_question("And how many pears?")
    assert controller.sessions.ask_follow_up() == "started"

    async def wait_end():
        await wait_until(lambda: not controller.running, timeout=60, what="the follow-up to end")
    run_async(qloop, wait_end(), timeout=90)
    assert controller.last_outcome.answer == "Pears: 4."
    earlier = transcript.earlier_text()
    assert "Which files are there?" in earlier and "There are 2 files." in earlier
