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
