"""The approval gate: a batch over the thresholds waits for the approver; denied means
every slot refused with a clear error, and nothing is sent."""

import json

from tests.integration.engine_helpers import PRICED, Doc, code, of_type, run

DOCS = [Doc("a.txt", "one two three")]
BATCH = code("out = llm_query_batched([f'p{i}' for i in range(3)])\nprint(out)\n"
             "one = llm_query('single')\nFINAL(json.dumps(out + [one]))")


def _script(server):
    server.script("sub", fn=lambda r: r.prompt.upper())
    server.script("root", replies=[code("import json"), BATCH])


async def test_a_denied_batch_refuses_every_slot_and_sends_nothing(server):
    _script(server)
    asked = []

    async def approver(info):
        asked.append(info)
        return False

    result, events = await run(server, docs=DOCS, approve_batch_calls=2, approver=approver)
    answer = json.loads(result.answer)
    assert all(a.startswith("[error: ApprovalDenied: the user did not approve") for a in answer[:3])
    assert answer[3] == "SINGLE"                      # one call is under the threshold: not asked
    assert [r.prompt for r in server.requests_for("sub")] == ["single"]
    assert len(asked) == 1 and asked[0]["calls"] == 3 and asked[0]["kind"] == "llm"
    assert asked[0]["parent_id"] == "R.t2.c1" and asked[0]["model"] == "openai/sub"
    notices = [e.message for e in of_type(events, "Notice")]
    assert any(m.startswith("Waiting for approval: a batch of 3") for m in notices)
    assert any(m.endswith(": denied.") for m in notices)


async def test_an_approved_batch_runs(server):
    _script(server)

    async def approver(info):
        return True

    result, _ = await run(server, docs=DOCS, approve_batch_calls=2, approver=approver)
    assert json.loads(result.answer) == ["P0", "P1", "P2", "SINGLE"]


async def test_dollar_threshold_without_an_approver_refuses(server):
    server.script("sub", fn=lambda r: r.prompt.upper())
    server.script("root", replies=[code(
        "try:\n    r = llm_query('x' * 5000)\nexcept SubCallError as e:\n    r = str(e)\nFINAL(r)")])
    result, events = await run(server, docs=DOCS, approve_batch_usd=0.001, prices=PRICED)
    assert result.answer.startswith("ApprovalDenied: the user did not approve this batch of 1")
    assert server.requests_for("sub") == []
    assert any("nobody can approve" in e.message for e in of_type(events, "Notice"))


async def test_the_callback_is_never_stored(server):
    _script(server)

    async def approver(info):
        return True

    _, events = await run(server, docs=DOCS, approve_batch_calls=5, approver=approver)
    config = of_type(events, "RunStarted")[0].config
    assert config["approve_batch_calls"] == 5 and "approver" not in config
    json.dumps(config)
