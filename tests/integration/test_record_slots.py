"""Every slot the engine hands out is in the record with its error type, so Verify
serves exactly what the REPL saw: a run with a denied batch, a switched-off depth 0
and a refusal by the cap all verify as the same."""

import json

import pytest

from core.store import RunStore
from core.trust.verify import verify_run
from tests.integration.engine_helpers import PRICED, Doc, code
from tests.support.trust_runs import stored_run

DOCS = [Doc("a.txt", "one two three")]
BATCH = code("out = llm_query_batched([f'p{i}' for i in range(3)])\nprint(out)\n"
             "one = llm_query('single')\nprint(one)\nFINAL(json.dumps(out + [one]))")


@pytest.fixture
def store():
    with RunStore.open() as s:
        yield s


def _subs(store, run_id):
    return [e for e in store.iter_events(run_id) if e.type == "SubCallFinished"]


async def test_a_run_with_a_denied_batch_verifies(openai_server, store):
    openai_server.script("sub", fn=lambda r: r.prompt.upper())
    openai_server.script("root", replies=[code("import json"), BATCH])

    async def deny(info):
        return False

    outcome = await stored_run(openai_server, store, docs=DOCS, approve_batch_calls=2, approver=deny)
    answer = json.loads(outcome.answer)
    assert all(a.startswith("[error: ApprovalDenied: ") for a in answer[:3]) and answer[3] == "SINGLE"
    finished = _subs(store, outcome.run_id)
    assert [(e.status, e.error_type) for e in finished] == [("refused", "ApprovalDenied")] * 3 + [("ok", None)]
    started = [e for e in store.iter_events(outcome.run_id) if e.type == "SubCallStarted"]
    assert [e.prompt for e in started] == ["p0", "p1", "p2", "single"]
    report = await verify_run(store, outcome.run_id)
    assert report.matches, report.first_divergence
    assert report.sub_calls_served == 4


async def test_switched_off_slots_at_depth_zero_are_recorded_and_verify(openai_server, store):
    openai_server.script("root", replies=[code(
        "try:\n    llm_query('x')\nexcept SubCallError as e:\n    print(e)\n"
        "print(llm_query_batched(['a', 'b']))\nFINAL('done')")])
    outcome = await stored_run(openai_server, store, docs=DOCS, max_depth=0)
    assert outcome.status == "finished"
    finished = _subs(store, outcome.run_id)
    assert [e.error_type for e in finished] == ["SubCallsOff"] * 3
    assert openai_server.requests_for("sub") == []
    report = await verify_run(store, outcome.run_id)
    assert report.matches, report.first_divergence


async def test_a_refusal_by_the_cap_is_recorded_with_its_type_and_verifies(openai_server, store):
    openai_server.script("sub", fn=lambda r: "ok")
    openai_server.script("root", replies=[code(
        "r = llm_query_batched(['y' * 120000, 'short'])\nprint([s[:40] for s in r])\nFINAL('done')")])
    outcome = await stored_run(openai_server, store, docs=DOCS, max_cost_usd=0.05, prices=PRICED,
                               root_max_tokens=2000, sub_max_tokens=40000)
    finished = _subs(store, outcome.run_id)
    # Its input alone ($0.06) cannot be paid: refused. The short one runs, shortened to fit.
    assert sorted(str(e.error_type) for e in finished) == ["BudgetExceeded", "None"]
    assert [e.shortened_to is not None for e in finished if e.error_type is None] == [True]
    report = await verify_run(store, outcome.run_id)
    assert report.matches, report.first_divergence
