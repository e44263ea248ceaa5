"""Fork: the REPL rebuilt by re-execution up to turn N, the conversation rebuilt from the
record, and the root continuing live as a new run linked to its parent."""

import pytest

from app.runner import QuestionRun
from core.store import RunStore
from core.trust.compare import compare_runs
from core.trust.fork import ForkError, fork_config, prepare_fork
from core.trust.record import load_record
from core.trust.verify import verify_run
from tests.support.trust_runs import KEY, code, stored_run

SCRIPT = [
    code("lines = context.splitlines()\nprint(len(lines), 'lines')"),
    code("rev = [l for l in lines if 'Revenue in Q3' in l]\n"
         "answers = llm_query_batched(['Extract the number: ' + r for r in rev])\nprint(answers)"),
    code("FINAL('parent says ' + answers[0])"),
]


@pytest.fixture
def store():
    with RunStore.open() as s:
        yield s


async def _parent(openai_server, store):
    openai_server.script("root", replies=list(SCRIPT))
    openai_server.script("sub", fn=lambda r: "42" if "Revenue" in r.prompt else f"new:{r.prompt}")
    outcome = await stored_run(openai_server, store)
    assert outcome.answer == "parent says 42"
    return outcome.run_id


async def _run_fork(plan, store):
    return await QuestionRun(plan.question, documents=plan.documents, config=plan.config, store=store,
                             key_for=lambda m: KEY, parent_run_id=plan.parent_run_id,
                             session=plan.session).execute()


async def test_fork_continues_live_from_turn_n_with_the_rebuilt_state(openai_server, store):
    parent = await _parent(openai_server, store)
    subs_before = len(openai_server.requests_for("sub"))
    plan = await prepare_fork(store, parent, 3)
    assert plan.replayed_cells == 2 and plan.unmatched == []
    assert len(openai_server.requests_for("sub")) == subs_before      # the rebuild called no model
    openai_server.script("root", replies=[code("FINAL(f'fork says {answers[0]} from {len(lines)} lines')")])
    outcome = await _run_fork(plan, store)
    assert outcome.answer == "fork says 42 from 15 lines"               # variables of turns 1-2 are there
    sent = openai_server.requests_for("root")[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert sent[2]["content"] == SCRIPT[0]
    assert store.get_run(outcome.run_id)["parent_run_id"] == parent
    assert [r["id"] for r in store.list_runs(parent_run_id=parent)] == [outcome.run_id]
    # the fork verifies: its inherited state is rebuilt from the parent's record first
    report = await verify_run(store, outcome.run_id)
    assert report.matches and report.inherited_cells == 2
    # and compare aligns it at its fork point
    diff = compare_runs(store, parent, outcome.run_id).first_difference
    assert diff.turn == 3 and diff.what == "reply"


async def test_fork_with_edited_code_and_other_models(openai_server, store):
    parent = await _parent(openai_server, store)
    openai_server.script("root2", replies=[code("FINAL(' | '.join(answers))")])
    config = fork_config(load_record(store, parent), root_model="openai/root2", max_iterations=3)
    edited = ("rev = [l for l in lines if 'Revenue in Q3' in l]\n"
              "answers = llm_query_batched(['Extract the number: ' + r for r in rev] + ['a new prompt'])\n"
              "print(answers)")
    calls = []

    async def live(prompt, model):
        calls.append(prompt)
        return {"ok": f"live:{prompt}"}

    plan = await prepare_fork(store, parent, 2, config=config, edited_code=edited, live_sub_call=live)
    assert calls == ["a new prompt"]                                    # the recorded prompt was not sent
    assert "'42', 'live:a new prompt'" in plan.edited_output
    outcome = await _run_fork(plan, store)
    assert outcome.answer == "42 | live:a new prompt"
    sent = openai_server.requests_for("root2")[0].messages
    assert "a new prompt" in sent[-2]["content"] and "live:a new prompt" in sent[-1]["content"]
    assert store.get_run(outcome.run_id)["root_model"] == "openai/root2"


async def test_fork_refuses_a_turn_that_does_not_exist(openai_server, store):
    parent = await _parent(openai_server, store)
    with pytest.raises(ForkError, match="no turn 9"):
        await prepare_fork(store, parent, 9)


async def test_live_calls_of_an_edited_fork_are_held_to_its_dollar_cap(openai_server, store):
    from app.live_subcalls import LiveSubCaller
    from core.config import Price
    parent = await _parent(openai_server, store)
    prices = {"openai/root": Price(1.0, 1.0), "openai/sub": Price(100.0, 100.0)}
    edited = "answers = llm_query_batched(['first new prompt', 'second new prompt'])\nprint(answers)"
    # room for one worst-case sub-call (~$0.01 with 100 output tokens at $100/M), not two
    config = fork_config(load_record(store, parent), max_cost_usd=0.015).replace(
        prices=prices, sub_max_tokens=100)
    live = LiveSubCaller(config, lambda m: KEY)
    plan = await prepare_fork(store, parent, 2, config=config, edited_code=edited, live_sub_call=live)
    try:
        assert "new:first new prompt" in plan.edited_output
        assert "[error: BudgetExceeded" in plan.edited_output          # the second did not fit
        assert 0 < live.budget.spent_usd <= 0.015
        left = live.remaining_config(plan.config)
        assert left.max_cost_usd == pytest.approx(0.015 - live.budget.spent_usd)
        assert left.max_sub_calls == plan.config.max_sub_calls - 2     # counted as the engine counts them
    finally:
        await plan.close()
