"""A root reply that repeats the last one, and a small root's temperature (issue 25): real
engine, real worker subprocess, scripted server over HTTP. The real 1.5B model wrote the same
reply, a block or a sentence, up to seven turns running."""

from tests.integration.engine_helpers import Doc, code, of_type, root_prompts, run

DOCS = [Doc("logs/shop.log", "2024-08-14 ERROR pay failed\n2024-08-14 INFO ok\n")]
COUNT = "hits = [l for l in context.splitlines() if 'ERROR' in l]\nprint('hits:', len(hits))"


async def test_a_repeated_block_is_not_run_again_and_the_root_is_told_what_it_printed(server):
    server.script("root", replies=[code(COUNT), code(COUNT), code("print('other')"), code("FINAL('1')")])
    result, events = await run(server, "How many?", DOCS, mode="rlm")
    assert result.answer == "1"
    ran = [c.code for c in of_type(events, "CellExecuted")]
    assert ran == [COUNT, "print('other')", "FINAL('1')"]           # the repeat did not run
    prompts = root_prompts(server)
    told = "Your reply is the same code as your reply of turn 1, so it was not run again."
    assert told not in prompts[1] and told in prompts[2] and told not in prompts[3]
    assert "hits: 1" in prompts[2].split(told, 1)[1]                  # what it printed then
    assert any("repeated its reply of turn 1 (code, not run again)" in n.message
               for n in of_type(events, "Notice"))


async def test_a_repeated_reply_without_code_is_told(server):
    prose = "The answer is in the log file."
    server.script("root", replies=[prose, prose, code("FINAL('1')")])
    result, events = await run(server, "How many?", DOCS, mode="rlm")
    assert result.answer == "1"
    prompts = root_prompts(server)
    told = "Your reply is the same text as your reply of turn 1, and it has no code"
    assert told not in prompts[1] and told in prompts[2]
    assert "Nothing ran: your reply had no code block" in prompts[1]
    assert any("(text, without code)" in n.message for n in of_type(events, "Notice"))


async def test_a_small_roots_temperature_reaches_the_server_and_a_repeat_samples_hotter(server):
    server.script("tiny-1.5b", replies=[code(COUNT), code(COUNT), code("print(2)"), code("FINAL('1')")])
    result, events = await run(server, "How many?", DOCS, mode="rlm", root_model="openai/tiny-1.5b")
    assert result.answer == "1"
    sent = [r.body.get("temperature") for r in server.requests_for("tiny-1.5b")]
    assert sent == [0.2, 0.2, 0.8, 0.2]          # the call after the repeat only
    assert any("sampled at temperature 0.8" in n.message for n in of_type(events, "Notice"))
    # A model's own setting wins; a larger model keeps its provider's default (none sent).
    server.script("tiny-1.5b", replies=[code("FINAL('1')")])
    await run(server, "How many?", DOCS, mode="rlm", root_model="openai/tiny-1.5b",
              root_temperature={"openai/tiny-1.5b": 0.5})
    assert server.requests_for("tiny-1.5b")[-1].body.get("temperature") == 0.5
    server.script("root", replies=[code("FINAL('1')")])
    await run(server, "How many?", DOCS, mode="rlm")
    assert "temperature" not in server.requests_for("root")[-1].body


async def test_a_small_roots_reply_without_code_is_given_the_line_that_ends_the_run_with_its_output(server):
    # The real 1.5B model printed 92 (right), then wrote "The number of card payments failed
    # in webshop.log is 2." in prose, turn after turn.
    replies = [code("print(46 * 2)"), "The number is 2.", code("FINAL('92')")]
    server.script("tiny-1.5b", replies=replies)
    result, _ = await run(server, "How many?", DOCS, mode="rlm", root_model="openai/tiny-1.5b")
    assert result.answer == "92"
    line = "Your last block printed 92. If 92 answers the question, reply with exactly this line and " \
           "nothing else:\nFINAL('92')"
    sent = [r.messages[-1]["content"] for r in server.requests_for("tiny-1.5b")]
    assert line in sent[1] and line in sent[2]     # offered at once, and again after the prose
    # Not for a large root; not when the last output is more than one short line.
    server.script("root", replies=replies)
    await run(server, "How many?", DOCS, mode="rlm")
    assert "Your last block printed" not in root_prompts(server)[2]
    server.script("tiny-1.5b", replies=[code("print('a\\nb')"), "The number is 2.", code("FINAL('92')")])
    await run(server, "How many?", DOCS, mode="rlm", root_model="openai/tiny-1.5b")
    assert "Your last block printed" not in server.requests_for("tiny-1.5b")[-1].messages[-1]["content"]


async def test_a_root_that_repeats_itself_twice_running_is_asked_for_its_answer_at_once(server):
    # The real 1.5B model printed the line with the cause, then sent that block 3-5 times more,
    # told each time and sampled hotter, until the cap.
    server.script("root", replies=[code(COUNT), code(COUNT), code(COUNT), "FINAL(1)"])
    result, events = await run(server, "How many?", DOCS, mode="rlm")
    assert result.answer == "1" and result.status == "finished"
    prompts = root_prompts(server)
    ask = "You have sent the same reply 3 times running"
    assert ask not in prompts[2] and ask in prompts[3]
    assert "hits: 1" in prompts[3]                                    # what it printed, shown with it
    turns = of_type(events, "RootTurnStarted")
    assert [t.final_request for t in turns] == [False, False, False, True]
    assert any("same reply 3 times running; it was asked for its final answer now" in n.message
               for n in of_type(events, "Notice"))


async def test_a_small_root_that_repeats_a_block_is_given_the_line_that_ends_the_run_with_its_output(server):
    # The real 1.5B model printed 4 (right), then sent the same block twice more before it was
    # asked for its answer: it copies a literal line, not advice. An empty search is not offered.
    counting = "hits = [l for l in context.splitlines() if 'error' in l.lower()]\nprint(len(hits))"
    server.script("tiny-1.5b", replies=[code(counting), code(counting), code("FINAL('1')")])
    result, _ = await run(server, "How many?", DOCS, mode="rlm", root_model="openai/tiny-1.5b")
    assert result.answer == "1"
    prompts = [r.messages[-1]["content"] for r in server.requests_for("tiny-1.5b")]
    offer = "Your last block printed 1. If 1 answers the question, reply with exactly this line and nothing else:\nFINAL('1')"
    assert offer in prompts[1] and offer in prompts[2]      # at once, and again with the repeat
    empty = "hits = [l for l in context.splitlines() if 'warning' in l.lower()]\nprint(len(hits))"
    server.script("tiny-1.5b", replies=[code(empty), code(empty), code("FINAL('none')")])
    await run(server, "How many?", DOCS, mode="rlm", root_model="openai/tiny-1.5b")
    third = server.requests_for("tiny-1.5b")[5].messages[-1]["content"]
    assert "not run again" in third and "Your last block printed" not in third
    server.script("root", replies=[code(counting), code(counting), code("FINAL('1')")])
    await run(server, "How many?", DOCS, mode="rlm")                 # a large root is told as before
    assert "Your last block printed" not in root_prompts(server)[2]
