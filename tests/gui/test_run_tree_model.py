"""CallTreeModel over the fold: rows, columns, parents, live inserts (no widget)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QAbstractItemModelTester

from core import events as ev
from core.runview import RunView, fold
from tests.support.event_streams import Stream
from tests.support.record_runs import recorded_run


def full_run():
    """A real engine run with every shape the tree shows (tests/support/record_runs.py "panes").
    Hand-typed events (Stream) stay only for calls still in flight, updated one by one."""
    return recorded_run("panes", "run-test")
from ui.call_tree_model import (COL_COST, COL_KIND, COL_LATENCY, COL_STATUS, COL_TOKENS, COLUMNS,
                                COST_ROLE, KIND_ROLE, NODE_ID_ROLE, STATUS_ROLE, TOKENS_ROLE, CallTreeModel)

Fatal = QAbstractItemModelTester.FailureReportingMode.Fatal


def ids_under(model: CallTreeModel, parent: QModelIndex) -> list[str]:
    return [model.index(r, 0, parent).data(NODE_ID_ROLE) for r in range(model.rowCount(parent))]


def walk(model: CallTreeModel, parent: QModelIndex = QModelIndex()) -> list[tuple[str, str | None]]:
    """(node id, parent id) for every row, depth first."""
    out = []
    for r in range(model.rowCount(parent)):
        index = model.index(r, 0, parent)
        out.append((index.data(NODE_ID_ROLE), parent.data(NODE_ID_ROLE) if parent.isValid() else None))
        out.extend(walk(model, index))
    return out


def test_live_inserts_pass_the_model_tester(qapp):
    view = RunView()
    model = CallTreeModel(view)
    tester = QAbstractItemModelTester(model, Fatal)
    resets, inserts = [], []
    model.modelReset.connect(lambda: resets.append(1))
    model.rowsInserted.connect(lambda parent, first, last: inserts.append((parent.data(NODE_ID_ROLE), first, last)))
    for event in full_run():
        model.sync(view.apply(event).updated)
    assert resets == []                                   # never a reset per event
    assert inserts[0] == (None, 0, 0)                     # the RLM row first
    assert ("R.t2.c1", 4, 4) in inserts                   # the fifth sub-call of the cell
    assert walk(model) == [(n.id, n.parent.id if n.parent else None) for n in _depth_first(view)]
    del tester


def _depth_first(view: RunView):
    def visit(node):
        yield node
        for child in node.children:
            yield from visit(child)
    return list(visit(view.root))


def test_bulk_sync_inserts_per_parent_and_matches_the_fold(qapp):
    view = RunView()
    model = CallTreeModel(view)
    tester = QAbstractItemModelTester(model, Fatal)
    events = recorded_run("export", "r")     # a real engine run, nested RLM included (61 events)
    view.apply_many(events[:40])
    model.sync()
    view.apply_many(events[40:])
    inserts = []
    model.rowsInserted.connect(lambda parent, first, last: inserts.append((parent.data(NODE_ID_ROLE), first, last)))
    model.sync()
    assert len(inserts) == len({p for p, _, _ in inserts})  # one insert per parent and batch
    assert walk(model) == walk(_fresh(events))
    del tester


def fold_changes(events) -> list:
    view = RunView()
    return [view.apply(e) for e in events]


def _fresh(events) -> CallTreeModel:
    return CallTreeModel(fold(events))


def test_rows_columns_parents_and_roles(qapp):
    view = fold(full_run())
    model = CallTreeModel(view)
    assert model.columnCount() == len(COLUMNS) == 8
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(8)] == list(COLUMNS)
    root = model.index(0, 0)
    assert model.rowCount() == 1 and root.data(NODE_ID_ROLE) == "R"
    assert ids_under(model, root) == ["R.t1", "R.t2", "R.t3", "R.t4"]
    cell = model.index_for("R.t2.c1")
    assert ids_under(model, cell) == [f"R.s{n}" for n in range(1, 6)]
    assert model.parent(model.index_for("R.s3")).data(NODE_ID_ROLE) == "R.t2.c1"
    nested = model.index_for("R.s6")
    assert ids_under(model, nested) == ["R.s6.t1", "R.s6.t2"]
    assert ids_under(model, model.index_for("R.s6.t1.c1")) == ["R.s6.s1"]
    s2 = model.index_for("R.s2")
    row = {c: model.index(s2.row(), c, s2.parent()) for c in range(8)}
    assert row[COL_STATUS].data() == "error" and row[COL_KIND].data() == "llm"
    assert "429" in row[0].data(Qt.ItemDataRole.ToolTipRole)
    assert s2.data(STATUS_ROLE) == "error" and s2.data(KIND_ROLE) == "llm"
    s1, node = model.index_for("R.s1"), view.nodes["R.s1"]
    row = {c: model.index(s1.row(), c, s1.parent()) for c in range(8)}
    assert row[COL_TOKENS].data() == f"{node.input_tokens} / {node.output_tokens}" and node.input_tokens > 0
    assert tuple(s1.data(TOKENS_ROLE)) == (node.input_tokens, node.output_tokens)
    assert row[COL_COST].data().startswith("$") and s1.data(COST_ROLE) == node.cost_usd > 0
    for index, call in ((row[COL_LATENCY], node), (model.index(model.index_for("R.t1").row(), COL_LATENCY,
                                                              model.index_for("R.t1").parent()),
                                                  view.nodes["R.t1"])):
        number, unit = index.data().split()
        assert unit in ("ms", "s") and abs(float(number) * (1 if unit == "ms" else 1000) - call.duration_ms) <= 50
    assert model.index_for("R.s5").data(STATUS_ROLE) == "refused"
    assert model.index_for("R.t1.c2").data(STATUS_ROLE) == "syntax error"
    assert model.index_for("nope").isValid() is False


def test_in_flight_calls_update_in_place(qapp):
    s = Stream()
    s.start()
    t = s.turn("R", 1, "```repl\nllm_query_batched(['a', 'b'])\n```")
    c = s.cell(t, 1, "llm_query_batched(['a', 'b'])")
    first = s.sub_start("R", 1, c, "a")
    s.sub_start("R", 2, c, "b")
    view = RunView()
    model = CallTreeModel(view)
    for e in s.events:
        model.sync(view.apply(e).updated)
    assert model.index_for(first).data(STATUS_ROLE) == "running"
    changed = []
    model.dataChanged.connect(lambda a, b, roles: changed.append((a.data(NODE_ID_ROLE), a.column(), b.column())))
    model.sync(view.apply(ev.SubCallFinished(run_id="r", seq=99, call_id=first, parent_id=c, kind="llm",
                                             model="m", status="ok", response="A", error=None, input_tokens=5,
                                             output_tokens=1, cost_usd=0.001, duration_ms=300)).updated)
    assert changed == [(first, 0, len(COLUMNS) - 1)]
    assert model.index_for(first).data(STATUS_ROLE) == "ok"


def test_set_view_resets_once(qapp):
    model = _fresh(recorded_run("export", "r"))
    resets = []
    model.modelReset.connect(lambda: resets.append(1))
    model.set_view(RunView())
    assert resets == [1] and model.rowCount() == 0


def test_changed_rows_are_announced_with_one_signal_per_parent(qapp):
    """Many sub-calls finishing under one cell: one dataChanged over their rows, not one
    per row (and the rows show what a fresh model of the same fold shows)."""
    s = Stream()
    s.start()
    t = s.turn("R", 1, "```repl\nllm_query_batched(prompts)\n```")
    c = s.cell(t, 1, "llm_query_batched(prompts)")
    calls = [s.sub_start("R", n, c, f"p{n}") for n in range(1, 41)]
    view = RunView()
    model = CallTreeModel(view)
    tester = QAbstractItemModelTester(model, Fatal)
    for e in s.events:
        view.apply(e)
    model.sync()
    done_from = len(s.events)
    for call_id in calls[::2] + calls[1::2]:                  # out of row order
        s.sub_done(call_id, c)
    updated: list[str] = []
    for e in s.events[done_from:]:
        updated.extend(view.apply(e).updated)
    changes = []
    model.dataChanged.connect(lambda first, last, _roles=None: changes.append(
        (first.parent().data(NODE_ID_ROLE), first.row(), last.row(), first.column(), last.column())))
    model.sync(updated)
    parents = [p for p, *_ in changes]
    assert len(parents) == len(set(parents))                  # one signal per parent
    assert (c, 0, len(calls) - 1, 0, len(COLUMNS) - 1) in changes
    assert len(changes) < len(calls)
    assert [model.index_for(i).data(STATUS_ROLE) for i in calls] == ["ok"] * len(calls)
    fresh = CallTreeModel(fold(s.events))
    for call_id in calls:
        a, b = model.index_for(call_id), fresh.index_for(call_id)
        assert [model.index(a.row(), col, a.parent()).data() for col in range(len(COLUMNS))] == \
            [fresh.index(b.row(), col, b.parent()).data() for col in range(len(COLUMNS))]
    del tester


def test_the_call_column_shows_every_id_whole_and_keeps_its_widths_for_the_next_run(qapp):
    """The top RLM's turns and cells open as they are written. A sub-call three levels down (RLM > turn > cell > llm, deeper in a nested RLM) reads
    "llm R.s3.s1", not "llm …": the Call column widens to its widest label; another run
    (the model's clear) keeps the columns' own widths, not Qt's default 100 px."""
    from ui.call_tree_view import CallTreeView
    view = RunView()
    model = CallTreeModel(view)
    tree = CallTreeView(model)
    tree.resize(260, 300)
    tree.show()
    try:
        events = recorded_run("export", "r")
        for event in events:
            model.sync(view.apply(event).updated)
        # As a live run writes them, the top RLM's turns and cells open; a nested RLM stays closed.
        for node in view.node_list:
            index = model.index_for(node.id)
            if node.kind in ("turn", "cell"):
                assert tree.isExpanded(index) == (node.depth == 0), (node.id, node.depth)
        tree.expandAll()
        qapp.processEvents()
        rows = []

        def visit(parent):
            for r in range(model.rowCount(parent)):
                index = model.index(r, 0, parent)
                rows.append(index)
                visit(index)
        visit(QModelIndex())
        labels = [i.data() for i in rows]
        assert "llm R.s3.s1" in labels and "rlm R.s3" in labels, labels
        metrics = tree.fontMetrics()
        for index in rows:
            rect = tree.visualRect(index)          # the label's cell: indent and branch taken off
            assert metrics.horizontalAdvance(index.data()) <= rect.width(), (index.data(), rect.width())
        assert tree.horizontalScrollBar().maximum() > 0      # narrow: it scrolls, it does not cut

        model.set_view(RunView())                  # the next run
        assert [tree.columnWidth(c) for c in (COL_STATUS, COL_TOKENS, COL_COST)] == [64, 96, 64]
    finally:
        tree.deleteLater()
