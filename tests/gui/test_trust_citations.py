"""Citations in the real window: `[doc:PATH:ADDRESS]` in the answer become links
that open the source viewer at the cited passage, highlighted; a citation that
points to nothing is flagged (struck, red, a warning sign, a tooltip); a replay
resolves them against the run's stored documents."""

from __future__ import annotations

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import code, hrefs, run_in_window, setup_lab

import core.ingest.citations  # noqa: F401,E402 - a missing module must fail, not skip

ANSWER = ("Q3 revenue was 42 million [doc:report.pdf:page 2, line 1]; see also "
          "[doc:notes.txt:line 2] and [doc:notes.txt:line 99] and [doc:missing.txt:line 1].")


@pytest.fixture
def cited_run(studio, qloop, openai_server):
    window, controller = studio
    openai_server.script("root", replies=[
        "I will look at the report.\n```repl\nprint(context[:60])\n```",
        code(f"FINAL({ANSWER!r})")])
    setup_lab(window, controller, openai_server, "What was Q3 revenue?")
    outcome = run_async(qloop, run_in_window(window, controller))
    assert outcome.status == "finished", window.notifier.history
    return window, controller, outcome


def test_citation_link_opens_the_viewer_at_the_passage(cited_run):
    window, controller, _outcome = cited_run
    body = window.run_panes.transcript.answer_card.body
    links = hrefs(body)
    assert len(links) == 4
    body.linkActivated.emit(links[0])                    # what a click on the link does
    viewer = controller.trust.viewer
    assert viewer is not None and viewer.isVisible()
    assert viewer.current_path == "report.pdf"
    assert viewer.selected_text() == "Revenue in Q3 was 42 million dollars."
    start, _end = viewer.passage
    cursor = viewer.text.textCursor()
    assert cursor.position() == start                    # scrolled there
    assert viewer.text.extraSelections()[0].cursor.selectedText() == viewer.selected_text()

    body.linkActivated.emit(links[1])
    assert viewer.current_path == "notes.txt" and viewer.selected_text() == "beta line two"
    # the sources list follows the citation too
    assert window.sources_pane.table.selectionModel().selectedRows()[0].row() == \
        [r.path for r in window.sources_pane.rows()].index("notes.txt")


def test_dangling_citations_are_flagged(cited_run):
    window, controller, _outcome = cited_run
    body = window.run_panes.transcript.answer_card.body
    html = body.text()
    assert html.count("line-through") == 2 and html.count("\u26a0") == 2
    error = "#c53030"
    assert html.count(error) >= 2
    links = hrefs(body)
    tip = controller.trust.citations.tooltip(links[2])
    assert "points to nothing" in tip and "line 99" in tip
    assert "Open" in controller.trust.citations.tooltip(links[0])
    body.linkActivated.emit(links[3])
    viewer = controller.trust.viewer
    assert viewer.passage is None and "points to nothing" in viewer.note.text()
    assert "missing.txt" in viewer.note.text()


def test_replay_resolves_against_the_stored_documents(cited_run, qloop):
    window, controller, outcome = cited_run
    controller.set_documents([])                         # the current sources are gone
    controller.history.refresh()
    window.history_pane.select(outcome.run_id)
    window.history_pane.open_button.click()
    assert controller.history.replaying == outcome.run_id
    body = window.run_panes.transcript.answer_card.body
    links = hrefs(body)
    assert len(links) == 4 and body.text().count("line-through") == 2
    body.linkActivated.emit(links[0])
    assert controller.trust.viewer.selected_text() == "Revenue in Q3 was 42 million dollars."
