"""What the window shows and writes of model, cell and file-name text (issue 24), in the real
window offscreen over a real run (scripted server on 127.0.0.1, real engine and worker):

- its own CSV of the sub-call table flags unresolvable citations as the other exports do;
- text that looks like HTML is shown as the literal text, never rendered as rich text."""

from __future__ import annotations

import csv

from PySide6.QtWidgets import QFileDialog

from tests.gui.conftest import answered_questions  # noqa: F401 - no modal question offscreen
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import code, doc, run_in_window, setup_lab

BAD = "doc:ledger.txt:page 99"
LEDGER = "Entry 01: the alpha account received 100 dollars in March.\n"


def test_the_windows_csv_flags_unresolvable_citations(studio, qloop, openai_server, tmp_path, monkeypatch):
    window, controller = studio
    openai_server.script("sub", fn=lambda r: f"100 dollars [{BAD}]")
    openai_server.script("root", replies=[code(
        "out = llm_query('Amount? ' + documents[0]['text'])\n"
        f"FINAL('100 [doc:' + where(0) + '] and 7 plums [{BAD}]')")])
    setup_lab(window, controller, openai_server, "How much?", [doc("ledger.txt", LEDGER)])
    outcome = run_async(qloop, run_in_window(window, controller))
    assert outcome.status == "finished", window.notifier.history
    trust = controller.trust
    trust.tabs.setCurrentWidget(trust.results_table)
    trust.refresh()
    assert len(trust.results_table.model.rows()) == 1
    target = tmp_path / "subcalls.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    trust.results_table.export_button.click()
    with open(target, newline="", encoding="utf-8") as f:
        data = list(csv.DictReader(f))
    assert [d["kind"] for d in data] == ["llm", "answer"]
    flagged = {d["kind"]: d["unresolved_citations"] for d in data}
    for kind in ("llm", "answer"):
        assert f"[{BAD}] points to nothing: ledger.txt has no 'page 99'" in flagged[kind], flagged
    assert "line 1" not in flagged["answer"]           # the good citation is not flagged


# Text Qt takes for HTML (Qt.mightBeRichText): a link around an image of a local file.
HOSTILE = '<a href="https://evil.example/x"><img src="file:///etc/hostname">click</a>'
HOSTILE_NAME = "<a href=x><img src=y>ledger.txt"          # a file name cannot hold "/"


def _rendered(text: str, fmt=None) -> str:
    """What Qt draws for `text` where it guesses the format (tooltips, AutoText labels), or in
    the label format `fmt`: the literal text, or what its HTML or Markdown comes to."""
    from PySide6.QtGui import QTextDocument, Qt     # (Qt.mightBeRichText is QtGui's)
    fmt = Qt.TextFormat.AutoText if fmt is None else fmt
    doc = QTextDocument()
    if fmt == Qt.TextFormat.MarkdownText:
        doc.setMarkdown(text)
    elif fmt == Qt.TextFormat.RichText or (fmt == Qt.TextFormat.AutoText and Qt.mightBeRichText(text)):
        doc.setHtml(text)
    else:
        return text
    return doc.toPlainText().replace("\u2029", "\n").replace("\xa0", " ")


def test_html_looking_text_is_shown_as_literal_text(studio, qloop, openai_server):
    from PySide6.QtCore import Qt
    window, controller = studio
    openai_server.script("sub", fn=lambda r: HOSTILE)
    openai_server.script("root", replies=[
        "Looking.\n" + code(f"print({HOSTILE!r}, 100)\nout = llm_query('Amount? ' + context[:80])"),
        HOSTILE + "\n\n" + code(f"FINAL({HOSTILE!r} + ' 100 dollars')")])
    setup_lab(window, controller, openai_server, HOSTILE + " How much?", [doc(HOSTILE_NAME, LEDGER)])
    outcome = run_async(qloop, run_in_window(window, controller))
    assert outcome.status == "finished", window.notifier.history
    tip = Qt.ItemDataRole.ToolTipRole
    shown = {}
    sources = window.sources_pane.model
    shown["source tooltip"] = _rendered(sources.data(sources.index(0, 0), tip))
    trust = controller.trust
    trust.tabs.setCurrentWidget(trust.results_table)
    trust.refresh()
    results = trust.results_table.model
    shown["sub-call answer tooltip"] = _rendered(results.data(results.index(0, 5), tip))
    shown["sub-call source tooltip"] = _rendered(results.data(results.index(0, 3), tip))
    tree = window.run_panes.tree_model
    sub = next(n for n in window.run_panes.view.nodes.values() if n.kind == "llm")
    shown["call tree tooltip"] = _rendered(tree.data(tree.index_for(sub.id), tip))
    controller.history.refresh()
    history = window.history_pane.model
    shown["history tooltip"] = _rendered(history.data(history.index(0, 1), tip))
    transcript = window.run_panes.transcript
    answer = transcript.answer_card.body
    shown["answer"] = _rendered(answer.text(), answer.textFormat())
    cards = list(transcript._cards.values())
    turn = cards[1].prose
    shown["root's reply"] = _rendered(turn.text(), turn.textFormat())
    output = cards[0].blocks[0].output
    shown["cell output"] = _rendered(output.text(), output.textFormat())
    trust.tabs.setCurrentWidget(trust.coverage_view)
    trust.refresh()
    name = trust.coverage_view._labels[HOSTILE_NAME][0]
    shown["coverage name"] = _rendered(name.text(), name.textFormat())
    shown["coverage tooltip"] = _rendered(name.toolTip())
    expected = {k: HOSTILE_NAME if ("source" in k or "coverage" in k or "tree" in k) else HOSTILE for k in shown}
    missing = {k: v for k, v in shown.items() if expected[k] not in v}
    assert sorted(missing) == [], missing
