"""A nested RLM makes no call of its own (cost_usd 0): the call tree and the detail panel
show what it and the calls below it cost, from the fold's subtree_cost_usd. Over the
recording of a real engine run with a nested RLM (tests/fixtures/recorded/export.json)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.runview import fold
from tests.support.record_runs import recorded_run
from ui.call_tree_model import COL_COST, CallTreeModel
from ui.node_detail import NodeDetail

NESTED = "R.s3"


def test_a_nested_rlm_shows_its_subtree_cost_in_the_tree_and_the_detail(qtbot):
    view = fold(recorded_run("export", "x"))
    node = view.nodes[NESTED]
    assert node.kind == "rlm" and node.cost_usd == 0.0 and round(node.subtree_cost_usd, 7) == 0.0013175
    model = CallTreeModel(view)
    at = model.index_for(NESTED)
    cost = model.index(at.row(), COL_COST, at.parent())
    assert cost.data() == "$0.0013"
    assert cost.data(Qt.ItemDataRole.ToolTipRole) == "own $0.0000 · subtree $0.0013"
    detail = NodeDetail()
    qtbot.addWidget(detail)
    detail.show_node(view, NESTED)
    assert "$0.0000 own, $0.0013 with the calls below" in detail.header.text()
    detail.show_node(view, "R.s3.s1")          # a plain call: its own cost, once
    assert "own" not in detail.header.text() and "$0." in detail.header.text()
