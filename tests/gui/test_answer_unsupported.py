"""The answer card and History's row say an answer is unsupported (runs stored by the real
engine: tests/integration/test_support_surfaces.py)."""

from core.runview import fold
from tests.integration.test_support_surfaces import LINE, runs  # noqa: F401  (the fixture)


async def test_the_answer_card_and_the_history_row_say_it(runs, qtbot):
    from ui.history_pane import HistoryModel, HistoryRow
    from ui.theme import PALETTES
    from ui.transcript_view import AnswerCard
    store, (made_up, read) = runs
    card = AnswerCard(PALETTES["light"])
    qtbot.addWidget(card)
    card.refresh(fold(list(store.iter_events(made_up.run_id))))
    assert not card.unsupported.isHidden() and card.unsupported.text() == f"Unsupported: {LINE}"
    card.refresh(fold(list(store.iter_events(read.run_id))))
    assert card.unsupported.isHidden()
    model = HistoryModel()
    model.set_rows([HistoryRow.of_run(r) for r in store.list_runs()])
    statuses = {model.data(model.index(i, HistoryModel.COL_STATUS)) for i in range(2)}
    assert statuses == {"finished", "finished · unsupported"}
