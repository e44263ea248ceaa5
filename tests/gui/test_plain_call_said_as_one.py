"""A plain call is described as one (core/plain_call.py): stored by the real engine over the
scripted server in a real SQLite file, its coverage is what its prompt carried (100% when it
carried every document), and the answer card, History and the exports say "one plain call:
N tokens in, M out" instead of cells, syntax errors and iterations."""

import pytest

from app.runner import QuestionRun
from core.exports import export_html, export_md
from core.runview import fold
from core.store import RunStore
from core.trust.coverage import coverage_of_run
from tests.integration.engine_helpers import KEY, Doc, code, config

DOCS = [Doc("notes/a.txt", "short\n" * 30 + "The ferry leaves at dawn.\n"), Doc("b.log", "ok\n" * 800)]


@pytest.fixture
async def plain_and_rlm(server):
    server.script("root", replies=["The ferry leaves at dawn.",
                                   code("print(documents[0]['text'][:20])"), code("FINAL('dawn')")])
    store = RunStore.open()
    plain = await QuestionRun("Answer from the notes.", documents=DOCS, config=config(server, mode="direct"),
                              key_for=lambda m: KEY, store=store).execute()
    rlm = await QuestionRun("Answer from the notes.", documents=DOCS, config=config(server, mode="rlm"),
                            key_for=lambda m: KEY, store=store).execute()
    yield store, plain, rlm
    store.close()


async def test_a_plain_call_covers_what_its_prompt_carried_and_is_said_as_one_call(plain_and_rlm, qtbot, tmp_path):
    from ui.history_pane import HistoryModel, HistoryRow
    from ui.theme import PALETTES
    from ui.transcript_view import AnswerCard
    store, plain, rlm = plain_and_rlm
    assert plain.totals["mode"] == "direct" and rlm.totals["mode"] == "rlm"
    tokens_in, tokens_out = plain.totals["input_tokens"], plain.totals["output_tokens"]
    assert tokens_in > 0 and tokens_out > 0
    line = f"one plain call: {tokens_in:,} tokens in, {tokens_out:,} out"

    report = coverage_of_run(store, plain.run_id)
    assert report.percent == 100.0 and all(d.percent == 100.0 for d in report.documents)
    assert coverage_of_run(store, rlm.run_id).percent < 100.0     # the RLM saw a prefix and 20 characters

    card = AnswerCard(PALETTES["light"])
    qtbot.addWidget(card)
    card.refresh(fold(list(store.iter_events(plain.run_id))))
    assert card.figures.text().startswith("One plain call: ") and line[1:] in card.figures.text()
    assert "cells" not in card.figures.text() and "iterations" not in card.figures.text()
    card.refresh(fold(list(store.iter_events(rlm.run_id))))
    assert "cells" in card.figures.text() and "plain call" not in card.figures.text()

    rows = {r["id"]: HistoryRow.of_run(r) for r in store.list_runs()}
    model = HistoryModel()
    model.set_rows([rows[plain.run_id], rows[rlm.run_id]])
    assert model.data(model.index(0, HistoryModel.COL_STATUS)) == "finished · one plain call"
    assert model.data(model.index(1, HistoryModel.COL_STATUS)) == "finished"
    from PySide6.QtCore import Qt
    assert line[1:] in model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole)

    export_md.write(store, plain.run_id, tmp_path / "p.md")
    export_html.write(store, plain.run_id, tmp_path / "p.html")
    md, page = (tmp_path / "p.md").read_text(), (tmp_path / "p.html").read_text()
    assert f"| Work | {line} |" in md and "| Code cells |" not in md and "| Root turns |" not in md
    assert f"<tr><th>Work</th><td>{line}</td></tr>" in page and "Syntax errors" not in page
    export_md.write(store, rlm.run_id, tmp_path / "r.md")
    assert "| Code cells |" in (tmp_path / "r.md").read_text()
