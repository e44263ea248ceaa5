"""Follow-ups reuse the live REPL; every root message is recorded once in the events."""

from core.engine.run import Engine
from tests.integration.engine_helpers import KEY, Doc, code, config, of_type

DOCS = [Doc("a.txt", "alpha beta gamma")]


async def test_follow_up_reuses_variables_of_the_first_run(server):
    server.script("root", replies=[
        code("words = context.split()\nFINAL(str(len(words)))"),
        code("FINAL(words[-1])"),                     # `words` comes from the first run
    ])
    first_events, second_events = [], []
    first = await Engine(config(server), emit=first_events.append, key_for=lambda m: KEY,
                         keep_session=True).run("How many words?", DOCS)
    assert first.answer == "6" and first.session is not None
    second = await Engine(config(server), emit=second_events.append, key_for=lambda m: KEY,
                          parent_run_id=first.run_id).run(
        "And the last one?", DOCS, session=first.session, follow_up=True)
    assert second.answer == "gamma"
    follow_up_prompt = server.requests_for("root")[1].messages
    assert follow_up_prompt[-1]["content"].endswith("Follow-up question: And the last one?")
    assert any(m["role"] == "assistant" for m in follow_up_prompt)   # the earlier turn is there
    turn = of_type(second_events, "RootTurnStarted")[0]
    assert [m["role"] for m in turn.new_messages] == ["user"]
    assert of_type(second_events, "RunStarted")[0].parent_run_id == first.run_id
    assert not first.session.repl.alive                          # closed: keep_session was off


async def test_new_messages_rebuild_the_exact_conversation(server):
    server.script("root", replies=[code("print(1)"), code("print(2)"), code("FINAL('x')")])
    events = []
    await Engine(config(server), emit=events.append, key_for=lambda m: KEY).run("q", DOCS)
    rebuilt = []
    for e in events:
        if e.type == "RootTurnStarted" and e.depth == 0:
            rebuilt += e.new_messages
        elif e.type == "RootReplied" and e.call_id.count(".") == 1:
            rebuilt.append({"role": "assistant", "content": e.text})
    sent = server.requests_for("root")[-1].messages
    assert rebuilt[:len(sent)] == sent
    assert of_type(events, "RootTurnStarted")[0].new_messages[0]["role"] == "system"
