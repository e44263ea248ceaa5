"""The per-run sub-call table in the real window: one row per sub-call with the
source span its prompt came from, filterable, exported as CSV; a replay fills
the same rows."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtWidgets import QFileDialog

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import code, doc, run_in_window, setup_lab

import core.trust.results  # noqa: F401,E402 - a missing module must fail, not skip

LEDGER = "".join(f"Entry {i:02d}: the {name} account received {i * 100} dollars in March.\n"
                 for i, name in enumerate(["alpha", "beta", "gamma", "delta", "epsilon"]))
DOCS = [doc("ledger.txt", LEDGER)]


def test_results_rows_filter_and_csv(studio, qloop, openai_server, tmp_path, monkeypatch):
    window, controller = studio
    openai_server.script("sub", fn=lambda r: "ERROR" if "gamma" in r.prompt else f"ok {len(r.prompt)}")
    openai_server.script("root", replies=[code(
        "rows = documents[0]['text'].splitlines()[:3]\n"
        "out = llm_query_batched(['Amount?\\n' + r for r in rows])\nprint(out)\nFINAL(', '.join(out))")])
    setup_lab(window, controller, openai_server, "How much did each account get?", DOCS)
    outcome = run_async(qloop, run_in_window(window, controller))
    assert outcome.status == "finished", window.notifier.history
    trust = controller.trust
    table = trust.results_table
    trust.tabs.setCurrentWidget(table)
    trust.refresh()
    rows = table.model.rows()
    assert len(rows) == 3 == window.run_panes.view.figures.sub_calls
    assert {r.call_id for r in rows} == {n.id for n in window.run_panes.view.nodes.values() if n.kind == "llm"}
    by_prompt = {r.prompt: r for r in rows}
    alpha = by_prompt[f"Amount?\n{LEDGER.splitlines()[0]}"]
    assert alpha.source == "ledger.txt:line 1" and alpha.status == "ok"
    assert alpha.answer.startswith("ok ") and alpha.input_tokens > 0 and alpha.duration_ms is not None
    assert by_prompt[f"Amount?\n{LEDGER.splitlines()[2]}"].source == "ledger.txt:line 3"

    table.filter_edit.setText("gamma")
    assert [r.answer for r in table.visible_rows()] == ["ERROR"]
    assert table.count_label.text() == "1 of 3 sub-calls"

    target = tmp_path / "subcalls.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    table.export_button.click()                                  # exports what the filter shows
    with open(target, newline="", encoding="utf-8") as f:
        data = list(csv.DictReader(f))
    assert data[-1]["kind"] == "answer"                          # then the answer (its citations flagged)
    data = data[:-1]
    assert len(data) == 1 and data[0]["response"] == "ERROR" and data[0]["source"] == "ledger.txt:line 3"
    assert "Exported 1 sub-calls" in window.notifier.last.message
    table.filter_edit.setText("")
    table.export_button.click()
    with open(target, newline="", encoding="utf-8") as f:
        data = [d for d in csv.DictReader(f) if d["kind"] != "answer"]
    assert [d["call_id"] for d in data] == [r.call_id for r in rows]
    assert {"prompt", "response", "input_tokens", "cost_usd", "duration_ms", "source"} <= set(data[0])

    # A replay shows the same rows.
    controller.history.refresh()
    window.history_pane.select(outcome.run_id)
    window.history_pane.open_button.click()
    trust.refresh()
    assert [(r.call_id, r.source) for r in table.model.rows()] == [(r.call_id, r.source) for r in rows]
