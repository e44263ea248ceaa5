from core.repl.client import SubCallRequest
from core.call_ids import CallId
from core.run_nodes import Node
from core.run_record import fold_record
from core.engine.replay import RecordedAnswers, recorded_slot
from tests.unit.trust.events import Run


def _sub(n, prompt, response="r", status="ok", error=None):
    """A sub-call node as the fold holds it (only what a slot is made of)."""
    return Node(CallId.for_sub("R", n), "llm", n, prompt=prompt, status=status, response=response or "",
                error=error or "")


def test_the_record_rebuilds_turns_cells_and_the_conversation():
    run = Run()
    run.turn(1, "reply one", [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    run.cell(1, 1, "x = 1", "out1", subs=[("p1", "a1"), ("p2", "a2")])
    run.turn(2, "reply two", [{"role": "user", "content": "feedback 1"}])
    run.cell(2, 1, "print(x)", "1")
    record = fold_record(run.finish("done"))
    assert [t.iteration for t in record.top_turns()] == [1, 2] and record.answer == "done"
    assert [s.prompt for s in record.top_turn(1).cells[0].sub_calls()] == ["p1", "p2"]
    assert [m["content"] for m in record.conversation()] == ["S", "U", "reply one", "feedback 1", "reply two"]
    assert [m["content"] for m in record.conversation(upto=2)] == ["S", "U", "reply one", "feedback 1"]


def test_slots_repeat_what_the_engine_handed_out():
    assert recorded_slot(_sub(1, "p")) == {"ok": "r"}
    assert recorded_slot(_sub(1, "p", None, "refused", "dollar cap"))["error"]["type"] == "BudgetExceeded"
    assert recorded_slot(_sub(1, "p", None, "error", "prompt too large for m: ..."))["error"]["type"] == \
        "ContextWindowExceeded"
    assert recorded_slot(_sub(1, "p", None, "error", "boom")) == {"error": {"type": "SubCallError", "message": "boom"}}
    assert recorded_slot(_sub(1, "p", None, "running")) == {"error": {"type": "SubCallError", "message": "running"}}


async def test_answers_match_by_order_then_by_prompt_and_report_misses():
    answers = RecordedAnswers()
    answers.begin([_sub(1, "a", "A"), _sub(2, "b", "B"), _sub(3, "a", "A2")])
    slots = await answers(SubCallRequest("llm", ["b", "a", "a", "zzz"], None, None))
    assert slots[:3] == [{"ok": "B"}, {"ok": "A"}, {"ok": "A2"}]
    assert slots[3]["error"]["type"] == "ReplayDivergence"
    assert answers.served == 3 and answers.unmatched == ["zzz"]


async def test_rlm_at_the_depth_limit_matches_the_prompt_with_its_context():
    answers = RecordedAnswers()
    answers.begin([_sub(1, "sum up\n\nthe text", "S")])
    assert await answers(SubCallRequest("rlm", ["sum up"], None, "the text")) == [{"ok": "S"}]


async def test_depth_zero_gives_the_engines_refusal():
    slots = await RecordedAnswers(depth_zero=True)(SubCallRequest("llm", ["x"], None, None))
    assert "switched off" in slots[0]["error"]["message"]
