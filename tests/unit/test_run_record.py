"""The one fold of the record (core/run_record.py): parent and child links by typed call ids,
own and subtree costs, events missing or out of order, cancelled calls, a fork's calls
answered from the record, and the same tree without texts (the store's writer)."""

from __future__ import annotations

import math

from core import events as ev
from core.run_record import ROOT_ID, RunRecord, fold_record
from core.runview import fold

RUN = "r"


class Stream:
    def __init__(self) -> None:
        self.events: list[ev.Event] = []

    def add(self, cls, call_id=None, parent_id=None, **fields):
        self.events.append(cls(run_id=RUN, seq=len(self.events) + 1, ts=1000.0 + len(self.events),
                               call_id=call_id, parent_id=parent_id, **fields))
        return self

    def start(self):
        return self.add(ev.RunStarted, "R", question="q?", root_model="root/m", sub_model="sub/m",
                        config={"model_labels": {"sub/m": "my-sub"}}, documents=[], total_chars=0)

    def turn(self, turn_id, parent, usd, depth=0, text="reply"):
        n = int(turn_id.rsplit(".t", 1)[1])
        self.add(ev.RootTurnStarted, turn_id, parent, iteration=n, depth=depth, model="root/m",
                 new_messages=[{"role": "user", "content": f"ask {turn_id}"}])
        return self.add(ev.RootReplied, turn_id, parent, text=text, input_tokens=10, output_tokens=5,
                        cost_usd=usd, duration_ms=3, model="root/m")

    def cell(self, cell_id, turn_id, code="print(1)"):
        index = int(cell_id.rsplit(".c", 1)[1])
        self.add(ev.CellStarted, cell_id, turn_id, index=index, code=code)
        return self

    def cell_done(self, cell_id, turn_id, code="print(1)", stdout="1\n"):
        index = int(cell_id.rsplit(".c", 1)[1])
        return self.add(ev.CellExecuted, cell_id, turn_id, index=index, code=code, stdout=stdout, stderr="",
                        error=None, is_syntax_error=False, duration_ms=4, output_for_model=stdout)

    def sub(self, call_id, parent, usd, kind="llm", status="ok", depth=0, subtree=None, **extra):
        self.add(ev.SubCallStarted, call_id, parent, kind=kind, model="sub/m", prompt=f"p {call_id}", depth=depth)
        return self.finish(call_id, parent, usd, kind=kind, status=status, subtree=subtree, **extra)

    def finish(self, call_id, parent, usd, kind="llm", status="ok", subtree=None, **extra):
        return self.add(ev.SubCallFinished, call_id, parent, kind=kind, model="sub/m", status=status,
                        response="a" if status == "ok" else None, error=None if status == "ok" else status,
                        input_tokens=7, output_tokens=2, cost_usd=usd, duration_ms=5,
                        subtree_cost_usd=subtree, **extra)


def nested_run() -> Stream:
    """R.t1 runs cell R.t1.c1: a plain call R.s1 and a nested RLM R.s2, whose turn R.s2.t1
    runs cell R.s2.t1.c1 with its own call R.s2.s1; then R.t2."""
    s = Stream().start().turn("R.t1", "R", 0.25).cell("R.t1.c1", "R.t1")
    s.sub("R.s1", "R.t1.c1", 0.125)
    s.add(ev.SubCallStarted, "R.s2", "R.t1.c1", kind="rlm", model="root/m", prompt="nested", depth=0)
    s.turn("R.s2.t1", "R.s2", 0.0625, depth=1).cell("R.s2.t1.c1", "R.s2.t1")
    s.sub("R.s2.s1", "R.s2.t1.c1", 0.03125, depth=1)
    s.cell_done("R.s2.t1.c1", "R.s2.t1")
    s.finish("R.s2", "R.t1.c1", 0.0, kind="rlm", subtree=0.09375)
    s.cell_done("R.t1.c1", "R.t1")
    return s.turn("R.t2", "R", 0.5)


def test_nodes_link_parents_and_children_by_typed_call_ids():
    record = fold_record(nested_run().events)
    n = record.nodes
    assert [c.id for c in n[ROOT_ID].children] == ["R.t1", "R.t2"]
    assert [c.id for c in n["R.t1"].children] == ["R.t1.c1"]
    assert [c.id for c in n["R.t1.c1"].children] == ["R.s1", "R.s2"]
    assert [c.id for c in n["R.s2"].children] == ["R.s2.t1"]
    assert n["R.s2.s1"].parent is n["R.s2.t1.c1"] and n["R.s2.t1.c1"].parent is n["R.s2.t1"]
    assert [c.row for c in n["R.t1.c1"].children] == [0, 1]
    call = n["R.s2.s1"].call
    assert (call.kind, call.owner, call.sub, call.depth) == ("sub", "R.s2", 1, 1)
    assert n["R.s2.t1.c1"].call.turn_id == "R.s2.t1"
    assert (n["R.s2"].kind, n["R.s2"].depth, n["R.s2.s1"].depth) == ("rlm", 1, 1)
    assert [t.id for t in record.top_turns()] == ["R.t1", "R.t2"]
    assert [c.id for c in record.cells["R.t1.c1"].sub_calls()] == ["R.s1", "R.s2"]
    assert [s.id for s in record.sub_calls()] == ["R.s1", "R.s2", "R.s2.s1"]
    assert n["R.s1"].model == "my-sub" and n["R.s1"].routed_model == "sub/m"
    assert record.turns["R.t1"].new_messages == [{"role": "user", "content": "ask R.t1"}]
    assert (record.figures.iterations, record.figures.cells, record.figures.sub_calls) == (2, 2, 3)


def test_every_cost_is_own_and_every_subtree_adds_each_call_below_once():
    record = fold_record(nested_run().events)
    n = record.nodes
    # binary fractions: float sums of these are exact, so equality is the test
    assert (n["R.s2"].cost_usd, n["R.s2"].subtree_cost_usd) == (0.0, 0.0625 + 0.03125)
    assert n["R.s2.t1"].subtree_cost_usd == 0.0625 + 0.03125
    assert n["R.t1.c1"].subtree_cost_usd == 0.125 + 0.09375
    assert (n["R.t1"].cost_usd, n["R.t1"].subtree_cost_usd) == (0.25, 0.25 + 0.125 + 0.09375)
    own = [node.cost_usd for node in record.node_list]
    assert n[ROOT_ID].subtree_cost_usd == math.fsum(own) == 0.96875
    for node in record.node_list:            # each subtree: its own cost and its children's subtrees
        assert node.subtree_cost_usd == node.cost_usd + sum(c.subtree_cost_usd for c in node.children)


def test_a_call_reported_twice_counts_once_and_prices_that_do_not_add_exactly_stay_close():
    s = Stream().start().turn("R.t1", "R", 0.1).cell("R.t1.c1", "R.t1")
    for i in range(1, 31):
        s.sub(f"R.s{i}", "R.t1.c1", 0.1 + i * 1e-7)
    s.finish("R.s3", "R.t1.c1", 0.1 + 3e-7)             # the same call again: no second count
    record = fold_record(s.events)
    want = math.fsum([0.1] + [0.1 + i * 1e-7 for i in range(1, 31)])
    assert abs(record.root.subtree_cost_usd - want) < 1e-13
    assert record.figures.sub_calls == 30


def test_events_out_of_order_or_missing_still_make_one_tree():
    s = Stream().start()
    s.add(ev.RootReplied, "R.t1", "R", text="no start seen", input_tokens=1, output_tokens=1, cost_usd=0.5,
          duration_ms=1, model="root/m")                            # its RootTurnStarted is missing
    s.finish("R.s1", "R.t1.c1", 0.25)                              # finished before it started, cell unseen
    s.add(ev.SubCallStarted, "R.s1", "R.t1.c1", kind="llm", model="sub/m", prompt="late", depth=0)
    s.sub("R.s2", "R.t9.c1", 0.125)                                # a parent nobody knows
    record = fold_record(s.events)
    n = record.nodes
    assert n["R.t1"].parent is n[ROOT_ID] and record.turns["R.t1"].replied
    assert n["R.t1.c1"].parent is n["R.t1"] and n["R.s1"].parent is n["R.t1.c1"]   # the cell made up
    assert n["R.s1"].status == "running" and n["R.s1"].cost_usd == 0.25            # started again after
    assert record.figures.sub_calls == 2
    assert n["R.s2"].parent is n[ROOT_ID] and "R.t9.c1" not in n                   # hangs under the RLM
    assert record.root.subtree_cost_usd == 0.5 + 0.25 + 0.125


def test_a_cancelled_call_and_one_that_never_finished():
    s = Stream().start().turn("R.t1", "R", 0.5).cell("R.t1.c1", "R.t1")
    s.sub("R.s1", "R.t1.c1", 0.25, status="cancelled", error_type="Cancelled")
    s.add(ev.SubCallStarted, "R.s2", "R.t1.c1", kind="llm", model="sub/m", prompt="never", depth=0)
    s.add(ev.RunFailed, "R", status="cancelled", error="stopped", answer=None, totals={"cost_usd": 0.75})
    record = fold_record(s.events)
    assert (record.nodes["R.s1"].status, record.nodes["R.s1"].error_type) == ("cancelled", "Cancelled")
    assert record.nodes["R.s1"].cost_usd == 0.25 and record.root.subtree_cost_usd == 0.75
    assert record.nodes["R.s2"].status == "running"          # the record says what happened: no end
    assert fold(s.events).nodes["R.s2"].status == "cancelled"  # the window shows it ended with the run
    assert record.status == "cancelled" and record.budget.spent_usd == 0.75


def test_a_forks_calls_answered_from_the_record_cost_nothing():
    s = Stream().start().turn("R.t1", "R", 0.0).cell("R.t1.c1", "R.t1")
    s.sub("R.s1", "R.t1.c1", 0.0, from_record=True)
    s.sub("R.s2", "R.t1.c1", 0.25)                           # a new prompt: asked live
    record = fold_record(s.events)
    assert record.nodes["R.s1"].from_record and not record.nodes["R.s2"].from_record
    assert record.nodes["R.t1"].subtree_cost_usd == 0.25


def test_a_nested_rlm_recorded_before_subtree_cost_is_not_counted_twice():
    """Stored runs from before the field put the tally in cost_usd; read back (from_dict),
    the nested RLM's own cost is 0 and its subtree the tally."""
    s = nested_run()
    old = [ev.from_dict({k: v for k, v in e.to_dict().items() if k != "subtree_cost_usd"}
                        | ({"cost_usd": 0.09375} if e.call_id == "R.s2" and e.type == "SubCallFinished" else {}))
           for e in s.events]
    record = fold_record(old)
    assert record.nodes["R.s2"].cost_usd == 0.0
    assert record.root.subtree_cost_usd == fold_record(s.events).root.subtree_cost_usd == 0.96875


def test_without_texts_the_tree_and_costs_are_the_same():
    events = nested_run().events
    full, bare = fold_record(events), RunRecord(keep_texts=False)
    for e in events:
        bare.apply(e)
    assert [(x.id, x.parent.id if x.parent else None, x.cost_usd, x.subtree_cost_usd, x.status)
            for x in bare.node_list] == \
        [(x.id, x.parent.id if x.parent else None, x.cost_usd, x.subtree_cost_usd, x.status) for x in full.node_list]
    assert full.nodes["R.s1"].prompt and not bare.nodes["R.s1"].prompt
    assert full.turns["R.t1"].text == "reply" and bare.turns["R.t1"].text == ""
    assert not bare.cells["R.t1.c1"].code and not bare.turns["R.t1"].new_messages


def test_the_cost_projection_reads_a_record_folded_elsewhere_and_counts_top_level_turns_only():
    from core.trust.preview import CostProjection
    s = nested_run()
    s.add(ev.BudgetChanged, spent_usd=0.96875, reserved_usd=0.0, cap_usd=None, input_tokens=0, output_tokens=0,
          sub_calls=3, in_flight=0)
    view = fold(s.events)                     # the window's view, folded once
    p = CostProjection(record=view, expected_turns=4).projection()
    assert p["turns"] == 2                    # R.t1, R.t2; not the nested RLM's R.s2.t1
    assert p["spent_usd"] == 0.96875 and p["projected_usd"] == 0.96875 / 2 * 4
