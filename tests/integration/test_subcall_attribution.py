"""Faithful attribution through the engine: every slot is in the record (even when the
approver raised), sub-calls sit under the cell that made them, and a thread left
running by an ended cell cannot spend in a later cell's name."""

from __future__ import annotations

from tests.integration.engine_helpers import code, of_type, run


async def test_an_approver_that_raises_still_records_every_slot(server):
    server.script("root", replies=[code("r = llm_query_batched(['a', 'b', 'c'])\nprint(r)"), code("FINAL('done')")])
    server.script("sub", fn=lambda r: "never")

    async def approver(info):
        raise RuntimeError("the dialog went away")

    result, events = await run(server, approve_batch_calls=2, approver=approver)
    assert result.status == "finished"
    started, finished = of_type(events, "SubCallStarted"), of_type(events, "SubCallFinished")
    assert len(started) == len(finished) == 3
    assert {e.call_id for e in started} == {e.call_id for e in finished}
    assert all(e.error_type == "ApprovalError" and "the dialog went away" in e.error for e in finished)
    assert all(e.parent_id == "R.t1.c1" for e in started)
    assert server.requests_for("sub") == []
    cell = of_type(events, "CellExecuted")[0]
    assert "ApprovalError" in cell.stdout


async def test_a_thread_of_an_ended_cell_is_refused_and_not_recorded_under_the_next(server):
    server.script("root", replies=[
        code("import threading, time\ngo = threading.Event()\nout = []\n"
             "def late():\n    go.wait()\n    out.append(llm_query('late'))\n"
             "threading.Thread(target=late, daemon=True).start()"),
        code("go.set()\ntime.sleep(0.5)\nprint(llm_query('own'), out)"),
        code("FINAL('done')")])
    server.script("sub", fn=lambda r: f"answer:{r.prompt}")
    result, events = await run(server)
    assert result.status == "finished"
    started = of_type(events, "SubCallStarted")
    assert [(e.prompt, e.parent_id) for e in started] == [("own", "R.t2.c1")]
    assert [r.prompt for r in server.requests_for("sub")] == ["own"]
    second = of_type(events, "CellExecuted")[1]
    assert "answer:own" in second.stdout and "cell 1, which has ended" in second.stdout + second.stderr
