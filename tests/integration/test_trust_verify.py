"""Verify by re-execution against real runs on the scripted server: a faithful record
replays the same, a tampered one diverges at the right cell, and nothing is called."""

import pytest

from core.store import RunStore
from core.trust.verify import verify_run
from tests.support.trust_runs import code, stored_run, tamper_event

SCRIPT = [
    code("lines = context.splitlines()\nprint(len(lines), 'lines')"),
    code("rev = [l for l in lines if 'Revenue in Q3' in l]\nprint(rev)\n"
         "answers = llm_query_batched(['Extract the number: ' + r for r in rev])\nprint(answers)"),
    code("summary = llm_query('Summarise: ' + answers[0])\nprint(summary)\nFINAL(summary + ' ' + where(context.index('Revenue in Q3')))"),
]


@pytest.fixture
def store():
    with RunStore.open() as s:
        yield s


async def _run(openai_server, store):
    openai_server.script("root", replies=list(SCRIPT))
    openai_server.script("sub", fn=lambda r: f"<{r.prompt[-12:]}>")
    outcome = await stored_run(openai_server, store)
    assert outcome.status == "finished"
    return outcome


async def test_a_faithful_record_replays_the_same_without_model_calls(openai_server, store):
    outcome = await _run(openai_server, store)
    assert outcome.answer.endswith("report.pdf:page 2, line 1")
    calls_before = len(openai_server.history)
    report = await verify_run(store, outcome.run_id)
    assert report.matches, report.first_divergence
    assert [c.cell_id for c in report.cells] == ["R.t1.c1", "R.t2.c1", "R.t3.c1"]
    assert report.sub_calls_served == 2 and report.answer_replayed == outcome.answer
    assert len(openai_server.history) == calls_before          # no model was called


async def test_a_tampered_sub_call_answer_diverges_at_its_cell(openai_server, store):
    outcome = await _run(openai_server, store)
    tamper_event(store, outcome.run_id, "SubCallFinished", 0, "response", "<forged>")
    report = await verify_run(store, outcome.run_id)
    assert not report.matches
    assert report.first_divergence.cell_id == "R.t2.c1"
    assert "<forged>" in report.first_divergence.diff
    assert report.cells[0].same and not report.answer_same


async def test_tampered_cell_code_diverges_at_that_cell(openai_server, store):
    outcome = await _run(openai_server, store)
    tamper_event(store, outcome.run_id, "CellExecuted", 0, "code", "lines = context.splitlines()[:2]\n"
                                                                    "print(len(lines), 'lines')")
    report = await verify_run(store, outcome.run_id)
    first = report.first_divergence
    assert first is not None and first.cell_id == "R.t1.c1"
    assert "-15 lines" in first.diff and "+2 lines" in first.diff
    assert not report.cells[1].same and "IndexError" in report.cells[2].diff   # and it spreads


async def test_a_prompt_not_in_the_record_is_a_divergence(openai_server, store):
    outcome = await _run(openai_server, store)
    code = SCRIPT[1].split("```repl\n")[1].split("\n```")[0].replace("Extract the number", "Extract the figure")
    tamper_event(store, outcome.run_id, "CellExecuted", 1, "code", code)
    report = await verify_run(store, outcome.run_id)
    first = report.first_divergence
    assert first.cell_id == "R.t2.c1" and first.served == 0
    assert first.unmatched == ["Extract the figure: Revenue in Q3 was 42 million dollars."]
    assert "not in the record" in first.diff and report.cells[0].same
