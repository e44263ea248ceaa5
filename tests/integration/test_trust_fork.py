"""Fork: the REPL rebuilt by re-execution up to turn N, the conversation rebuilt from the
record, and the root continuing live as a new run linked to its parent."""

import pytest

from app.runner import QuestionRun
from core.engine.prepare import fork_config, prepare_run
from core.engine.rebuild import ForkError, load_record
from core.engine.request import RunRequest
from core.store import RunStore
from core.trust.compare import compare_runs
from core.trust.verify import verify_run
from tests.support.trust_runs import KEY, THREE_TURNS as SCRIPT, code, stored_run, three_turn_run as _parent


@pytest.fixture
def store():
    with RunStore.open() as s:
        yield s


async def prepare_fork(store, parent, turn, **fork):
    """The fork's preparation as the run path makes it (RunService.run): the engine's prepare_run."""
    return await prepare_run(RunRequest.fork(parent, turn, **fork), runs=store)


async def _run_fork(plan, store):
    return await QuestionRun(plan.question, documents=plan.documents, config=plan.config, store=store,
                             key_for=lambda m: KEY, parent_run_id=plan.parent_run_id,
                             session=plan.session).execute()


async def test_fork_continues_live_from_turn_n_with_the_rebuilt_state(openai_server, store):
    parent = await _parent(openai_server, store)
    subs_before = len(openai_server.requests_for("sub"))
    plan = await prepare_fork(store, parent, 3)
    assert plan.replayed_cells == 2 and plan.unmatched == ()
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


def _sub_calls(store, run_id):
    return [e for e in store.iter_events(run_id) if e.type == "SubCallFinished"]


async def test_fork_with_edited_code_and_other_models(openai_server, store):
    parent = await _parent(openai_server, store)
    openai_server.script("root2", replies=[code("FINAL(' | '.join(answers))")])
    config = fork_config(load_record(store, parent), root_model="openai/root2", max_iterations=3)
    edited = ("rev = [l for l in lines if 'Revenue in Q3' in l]\n"
              "answers = llm_query_batched(['Extract the number: ' + r for r in rev] + ['a new prompt'])\n"
              "print(answers)")
    subs_before = len(openai_server.requests_for("sub"))
    plan = await prepare_fork(store, parent, 2, config=config, edited_code=edited)
    assert len(openai_server.requests_for("sub")) == subs_before      # preparing ran nothing of the edit
    outcome = await _run_fork(plan, store)
    assert outcome.answer == "42 | new:a new prompt"
    assert [r.prompt for r in openai_server.requests_for("sub")[subs_before:]] == ["a new prompt"]
    sent = openai_server.requests_for("root2")[0].messages
    assert "a new prompt" in sent[-2]["content"] and "new:a new prompt" in sent[-1]["content"]
    assert store.get_run(outcome.run_id)["root_model"] == "openai/root2"
    # The edit is the fork's turn 1 in its record: both sub-calls, the recorded one marked so.
    calls = _sub_calls(store, outcome.run_id)
    assert [(c.parent_id, c.response, c.from_record) for c in calls] == [
        ("R.t1.c1", "42", True), ("R.t1.c1", "new:a new prompt", False)]
    assert calls[0].cost_usd == 0 and calls[1].input_tokens > 0
    replied = [e for e in store.iter_events(outcome.run_id) if e.type == "RootReplied"]
    assert replied[0].edited and "a new prompt" in replied[0].text and not replied[1].edited
    # and the fork verifies: its edited turn re-runs with both answers from its own record
    report = await verify_run(store, outcome.run_id)
    assert report.matches, report


async def test_live_calls_of_an_edited_fork_are_the_forks_own(openai_server, store):
    """Under the fork's own dollar cap (the second call does not fit), recorded as its
    events, so the run's totals and its History row show what they spent."""
    from core.config import Price
    parent = await _parent(openai_server, store)
    prices = {"openai/root": Price(1.0, 1.0), "openai/sub": Price(100.0, 100.0)}
    edited = "answers = llm_query_batched(['first new prompt', 'second new prompt'])\nprint(answers)"
    # room for one worst-case sub-call (~$0.01 with 100 output tokens at $100/M), not two
    config = fork_config(load_record(store, parent), max_cost_usd=0.015, concurrency=1).replace(
        prices=prices, sub_max_tokens=100)
    openai_server.script("root", replies=[code("FINAL('done')")])
    plan = await prepare_fork(store, parent, 2, config=config, edited_code=edited)
    outcome = await _run_fork(plan, store)
    calls = _sub_calls(store, outcome.run_id)
    assert [(c.status, c.error_type) for c in calls] == [("ok", None), ("refused", "BudgetExceeded")]
    assert calls[0].response == "new:first new prompt" and calls[0].cost_usd > 0
    assert outcome.totals["sub_calls"] == 2 and outcome.totals["refused_calls"] == 1   # as the engine counts them
    assert calls[0].cost_usd <= outcome.totals["cost_usd"] <= 0.015
    assert store.get_run(outcome.run_id)["cost_usd"] == pytest.approx(outcome.totals["cost_usd"])
    edited_cell = next(e for e in store.iter_events(outcome.run_id) if e.type == "CellExecuted")
    assert "[error: BudgetExceeded" in edited_cell.output_for_model


async def test_an_unpriced_model_in_an_edited_fork_is_reported_unpriced(openai_server, store):
    from core.config import Price
    parent = await _parent(openai_server, store)
    edited = "print(llm_query('hello', model='openai/extra'))"
    config = fork_config(load_record(store, parent), max_cost_usd=1.0).replace(
        prices={"openai/root": Price(1.0, 1.0), "openai/sub": Price(1.0, 1.0)},
        sub_call_models={"openai/extra": ("openai/extra", openai_server.url)})
    openai_server.script("root", replies=[code("FINAL('done')")])
    plan = await prepare_fork(store, parent, 2, config=config, edited_code=edited)
    outcome = await _run_fork(plan, store)
    [call] = _sub_calls(store, outcome.run_id)
    assert call.error_type == "PriceUnknown" and "no price is known for openai/extra" in call.error
    assert openai_server.requests_for("openai/extra") == [] and openai_server.requests_for("extra") == []


async def test_an_edited_forks_new_calls_pass_its_approval_gate(openai_server, store):
    parent = await _parent(openai_server, store)
    asked = []

    async def approver(info):
        asked.append(info["calls"])
        return False
    edited = ("answers = llm_query_batched(['Extract the number: Revenue in Q3 was 42 million dollars.', "
              "'new one', 'new two'])\nprint(answers)")
    config = fork_config(load_record(store, parent)).replace(approve_batch_calls=1, approver=approver)
    openai_server.script("root", replies=[code("FINAL('done')")])
    subs_before = len(openai_server.requests_for("sub"))
    plan = await prepare_fork(store, parent, 2, config=config, edited_code=edited)
    outcome = await _run_fork(plan, store)
    assert asked == [2]                                  # only the two new prompts were put to the user
    assert len(openai_server.requests_for("sub")) == subs_before
    calls = _sub_calls(store, outcome.run_id)
    assert [(c.from_record, c.error_type) for c in calls] == [
        (True, None), (False, "ApprovalDenied"), (False, "ApprovalDenied")]


async def test_fork_refuses_a_turn_that_does_not_exist(openai_server, store):
    parent = await _parent(openai_server, store)
    with pytest.raises(ForkError, match="no turn 9"):
        await prepare_fork(store, parent, 9)


async def test_an_edited_forks_new_prompt_too_large_for_the_sub_model_is_refused(openai_server, store):
    parent = await _parent(openai_server, store)
    edited = "print(llm_query('tell me ' * 2000))"          # about 4,000 tokens for a 1,000-token window
    config = fork_config(load_record(store, parent)).replace(context_windows={"openai/sub": 1000})
    openai_server.script("root", replies=[code("FINAL('done')")])
    subs_before = len(openai_server.requests_for("sub"))
    plan = await prepare_fork(store, parent, 2, config=config, edited_code=edited)
    outcome = await _run_fork(plan, store)
    [call] = _sub_calls(store, outcome.run_id)
    assert call.error_type == "ContextWindowExceeded" and "prompt too large for openai/sub" in call.error
    assert len(openai_server.requests_for("sub")) == subs_before       # nothing was sent


async def test_an_edited_fork_of_an_inline_fence_reply_holds_only_the_new_block(openai_server, store):
    """The stored reply opened its fence at the end of a line of text; the fork's edit reads it
    with the parser's grammar, so the reply the root is shown as its own holds the new code only."""
    openai_server.script("root", replies=[
        code("lines = context.splitlines()"),
        "I will count.```repl\nprint(len(context))\n```",
        code("FINAL('parent')"),
    ])
    parent = (await stored_run(openai_server, store)).run_id
    plan = await prepare_fork(store, parent, 2, edited_code="print(len(lines), 'lines')")
    openai_server.script("root", replies=[code("FINAL('fork')")])
    outcome = await _run_fork(plan, store)
    assert outcome.answer == "fork"
    edited = [e for e in store.iter_events(outcome.run_id) if e.type == "RootReplied"][0]
    assert edited.edited and edited.text == "I will count.\n```repl\nprint(len(lines), 'lines')\n```"
    shown = openai_server.requests_for("root")[-1].messages
    assert shown[-2] == {"role": "assistant", "content": edited.text} and "len(context)" not in str(shown[-2:])
    assert "15 lines" in shown[-1]["content"]
