"""The cost tree, end to end: the real engine (priced models, three nested RLMs at once
at depth 2, each with its own sub-calls) into the real store. Every node's subtree
equals the sum of the calls under it, the top equals runs.cost_usd, and the fold,
the results table and the exports say the same."""

import json

import pytest

from core.exports import export
from core.runview import fold
from core.store import RunStore
from core.store import report as rp
from core.trust.results import results_of_run
from tests.integration.engine_helpers import PRICED, Doc, code
from tests.support.openai_server import Delay
from tests.support.trust_runs import stored_run

DOCS = [Doc("notes.txt", "alpha beta gamma delta " * 50)]


def _root(req):
    first = next(m["content"] for m in req.messages if m["role"] == "user")
    turn = sum(m["role"] == "assistant" for m in req.messages) + 1
    if "PART" in first:                           # a nested RLM: a batch of its own, then its answer
        return Delay(0.2, code("r = llm_query_batched(['w1 ' + context[:20], 'w2 ' + context[:20]])\n"
                               "FINAL(str(len(r)))"))
    if turn == 1:
        return code("parts = rlm_query_batched([f'PART {i}: count words' for i in range(3)], context[:200])\n"
                    "one = llm_query('top level ' + context[:30])\nprint(parts, one)")
    return code("FINAL('total ' + ','.join(parts))")


@pytest.fixture
def store():
    with RunStore.open() as s:
        yield s


async def test_every_subtree_is_the_sum_of_its_calls_and_the_top_is_the_run(openai_server, store):
    openai_server.script("root", fn=_root)
    openai_server.script("sub", fn=lambda r: "word " * 7)
    outcome = await stored_run(openai_server, store, docs=DOCS, max_depth=2, max_cost_usd=5.0, prices=PRICED,
                               nested_concurrency=3)
    assert outcome.status == "finished", outcome.error
    assert outcome.totals["nested_peak"] == 3                      # the three ran at once
    run = store.get_run(outcome.run_id)
    calls = {c["id"]: c for c in store.calls(outcome.run_id)}
    own = {i: c["cost_usd"] for i, c in calls.items()}             # cost_usd: every row's own cost
    nested = [c for c in calls.values() if c["kind"] == "rlm"]
    assert len(nested) == 3
    for node in nested:                                            # tally == sum of the calls below
        below = sum(cost for i, cost in own.items() if i.startswith(node["id"] + "."))
        assert node["cost_usd"] == 0.0                             # it makes no call of its own
        assert below > 0 and abs(node["subtree_cost_usd"] - below) < 1e-12, node["id"]
        assert node["subtree_cost_usd"] < run["cost_usd"] / 2      # not the run's spend during its life
    for i, c in calls.items():                                     # a turn's subtree: it and its cells' calls
        if c["kind"] == "root":
            below = sum(d["subtree_cost_usd"] for d in calls.values() if (d["parent_id"] or "").startswith(i + ".c"))
            assert abs(c["subtree_cost_usd"] - c["cost_usd"] - below) < 1e-12, i
    assert abs(sum(own.values()) - run["cost_usd"]) < 1e-12
    assert abs(run["cost_usd"] - outcome.totals["cost_usd"]) < 1e-12

    report = rp.build(store, outcome.run_id)
    nodes = []

    def walk(n):
        nodes.append(n)
        for c in n.children:
            walk(c)
    for top in report.tree:
        walk(top)
    assert abs(sum(t.subtree_cost for t in report.tree) - run["cost_usd"]) < 1e-12
    for n in nodes:
        if n.call["kind"] == "rlm":
            assert n.own_cost == 0.0 and abs(n.subtree_cost - n.call["subtree_cost_usd"]) < 1e-12

    view = fold(list(store.iter_events(outcome.run_id)))
    assert abs(view.root.subtree_cost_usd - run["cost_usd"]) < 1e-12
    for node in nested:
        assert abs(view.nodes[node["id"]].subtree_cost_usd - node["subtree_cost_usd"]) < 1e-12

    rows = {r.call_id: r for r in results_of_run(store, outcome.run_id)}
    for node in nested:
        assert rows[node["id"]].cost_usd == 0.0 and \
            abs(rows[node["id"]].subtree_cost_usd - node["subtree_cost_usd"]) < 1e-12
    assert abs(sum(r.cost_usd for r in rows.values()) + sum(c["cost_usd"] for c in calls.values()
                                                             if c["kind"] == "root") - run["cost_usd"]) < 1e-12

    md = _export(store, outcome.run_id, "md")
    for node in nested:
        assert f"own $0.0000, subtree ${node['subtree_cost_usd']:.4f}" in md
    exported = json.loads(_export(store, outcome.run_id, "json"))
    assert abs(sum(c["cost_usd"] for c in exported["calls"]) - run["cost_usd"]) < 1e-12


def _export(store, run_id, fmt):
    path = store.path.parent / f"run.{fmt}"
    export(store, run_id, fmt, path)
    return path.read_text()
