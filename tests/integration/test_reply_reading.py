"""Root replies read only as far as they are useful: real engine, real worker, a slow
scripted server that records when the client hung up, on both model routes."""

import pytest

from tests.integration.engine_helpers import Doc, code, of_type, root_prompts, run

DOCS = [Doc("log.txt", "SECRET_CODE=QX-4471\n" + "noise\n" * 200)]
# What the real 1.5B model wrote (issue 25): a short block, then ">>> " about 4,000 times.
DEGENERATE = code("print(context[:20])") + "\n" + ">>> " * 4000
CHUNK, PAUSE = 16, 0.004          # 16,000+ characters in 1,000+ chunks: over 4 s to stream it all


@pytest.fixture(params=["direct", "litellm"])
async def route(request, monkeypatch):
    if request.param == "litellm":
        monkeypatch.setenv("RLMSTUDIO_DESKTOP_HTTP", "litellm")
    # litellm imported first (seconds): a cut reply's tokens are estimated with its counter, and
    # its import would otherwise be part of the times measured here (an app imports it at start).
    from core.llm.litellm_import import litellm_async
    await litellm_async()
    return request.param


async def test_a_block_followed_by_repetition_is_cut_and_the_server_stops(server, route):
    server.script("root", replies=[DEGENERATE, code("FINAL('done')")], chunk_chars=CHUNK,
                  chunk_delay_s=PAUSE)
    result, events = await run(server, "What is SECRET_CODE?", DOCS, mode="rlm")
    first = server.requests_for("root")[0]
    assert result.status == "finished" and result.answer == "done"
    # The client closed the connection before the reply was complete: the server saw it and
    # sent only the useful start (how soon, in seconds: tests/bench/bench_reply_cut.py).
    assert first.disconnected and first.outcome == "reply"
    assert len(first.sent_text) < 1_500 < len(DEGENERATE)
    assert DEGENERATE.startswith(first.sent_text)
    replied = of_type(events, "RootReplied")[0]
    assert replied.cut["reason"] in ("block", "repetition")
    assert replied.cut["max_tokens"] == 8192 and 0 < replied.cut["tokens"] < 500
    assert replied.text == code("print(context[:20])") + "\n"
    # The cell ran, and nothing of what was cut reached the next prompt.
    assert of_type(events, "CellExecuted")[0].stdout == "=== log.txt ===\nSECR\n"
    second = server.requests_for("root")[1].messages
    assert ">>> >>>" not in "".join(str(m["content"]) for m in second)
    notices = [n.message for n in of_type(events, "Notice")]
    assert any(m.startswith("Reply cut after its code block: ") and "of up to 8,192 tokens" in m
               for m in notices)
    assert result.totals["cut_replies"] == 1


async def test_blocks_with_short_prose_between_them_all_run(server):
    reply = (code("a = 1") + "\nNow the second part, which builds on the first one.\n"
             + "```repl\nb = a + 1\n```\nAnd the last.\n```repl\nFINAL(str(b))\n```\nSome words after.")
    server.script("root", replies=[reply], chunk_chars=8)
    result, events = await run(server, docs=DOCS, mode="rlm")
    assert result.answer == "2"
    assert len(of_type(events, "CellExecuted")) == 3
    # ... read up to the block that gave the final answer, not the words after it
    assert of_type(events, "RootReplied")[0].cut["reason"] == "final"
    assert of_type(events, "RootReplied")[0].text.endswith("FINAL(str(b))\n```\n")


async def test_one_block_per_turn_stops_at_the_first_closing_fence(server):
    five = "".join(f"Try {i}.\n```python\nfinal_guess_{i} = {i}\nprint({i})\n```\n" for i in range(5))
    server.script("root", replies=[five, code("FINAL('ok')")], chunk_chars=8)
    result, events = await run(server, docs=DOCS, mode="rlm", one_block_per_turn={"openai/root": True})
    assert result.answer == "ok"
    cells = of_type(events, "CellExecuted")
    assert [c.stdout.strip() for c in cells] == ["0", ""]       # the first block, then FINAL
    assert "Try 1." not in root_prompts(server)[1] and "Try 1." not in str(server.requests_for("root")[1].messages)
    assert of_type(events, "RootReplied")[0].cut["reason"] == "block"


async def test_a_small_model_gets_one_block_per_turn_unless_its_setting_says_otherwise(server):
    # What the real 1.5B model wrote (issue 25): a block, then the output it imagined as a second
    # block, then "Final answer" in a third. A model of at most 4B is read to its first block.
    reply = ("Count them.\n```repl\nn = len(context)\nprint(n)\n```\n```repl\n2610\n```\n"
             "Final answer:\n```\n2610\n```\n")
    for setting, blocks in ((None, 1), (False, 3)):
        server.script("tiny-1.5b", replies=[reply, code("FINAL(str(n))")], chunk_chars=8)
        kw = {} if setting is None else {"one_block_per_turn": {"openai/tiny-1.5b": setting}}
        result, events = await run(server, docs=DOCS, mode="rlm", root_model="openai/tiny-1.5b", **kw)
        cells = of_type(events, "CellExecuted")
        assert result.answer == cells[0].stdout.strip() != "2610"
        assert len(cells) == blocks + 1                       # the blocks of reply 1, then FINAL
        assert (of_type(events, "RootReplied")[0].cut or {}).get("reason") == ("block" if blocks == 1 else None)
    first = server.requests_for("tiny-1.5b")[1].messages[-2]["content"]    # the kept reply, from run 1
    assert first.endswith("print(n)\n```\n") and "2610" not in first


async def test_a_cut_reply_is_stored_and_counted_in_fitness(server):
    from app.runner import QuestionRun
    from core.fitness import model_fitness, render_fitness
    from core.store import RunStore
    from tests.integration.engine_helpers import KEY, config
    server.script("root", replies=[DEGENERATE, code("FINAL('done')")], chunk_chars=64)
    store = RunStore.open()
    try:
        result = await QuestionRun("What is SECRET_CODE?", documents=DOCS, config=config(server),
                                   key_for=lambda m: KEY, store=store).execute()
        stored = [e for e in store.iter_events(result.run_id) if e.type == "RootReplied"]
        # the second reply ended by itself at its closing fence: nothing was cut
        assert stored[0].cut["reason"] in ("block", "repetition") and stored[1].cut is None
        root = model_fitness(store.db)["roots"][0]
        assert root["cut_replies"] == 1
        assert "cut" in render_fitness(model_fitness(store.db)).splitlines()[1]
    finally:
        store.close()


async def test_five_blocks_each_calling_lowercase_final_end_at_the_first_and_it_is_told(server):
    # issue 25: the first reply held five blocks, each calling final(...): five NameErrors.
    five = "".join(f"Maybe this:\n```python\nfinal('SECRET_CODE is {c}')\n```\n" for c in ("QX-4471", "1", "2", "3", "4"))
    server.script("root", replies=[five])
    result, events = await run(server, "What is SECRET_CODE?", DOCS, mode="rlm")
    assert result.status == "finished" and result.answer == "SECRET_CODE is QX-4471"
    cells = of_type(events, "CellExecuted")
    assert len(cells) == 1 and cells[0].error is None
    assert "`final(...)` was taken as `FINAL(...)`" in cells[0].output_for_model
    assert of_type(events, "RootReplied")[0].cut["reason"] == "final"


async def test_a_made_up_answer_is_flagged_and_a_read_one_is_not(server):
    server.script("root", replies=[
        code("print(context[:20])"),
        code("FINAL('The value of SECRET_CODE in the log is 12345.')"),       # issue 25, made up
        code("import re\nprint(re.search(r'SECRET_CODE=(\\S+)', context).group(1))"),
        code("FINAL('The value of SECRET_CODE in the log is QX-4471.')"),     # printed by a cell
    ])
    made_up, events = await run(server, "What is SECRET_CODE?", DOCS)
    assert made_up.answer.endswith("12345.") and made_up.totals["unsupported"] == ["12345"]
    assert any(n.level == "warning" and n.message == "The answer states 12345: not found in anything the run read."
               for n in of_type(events, "Notice"))
    read, events = await run(server, "What is SECRET_CODE?", DOCS)
    assert read.answer.endswith("QX-4471.") and read.totals["unsupported"] == []
    assert read.totals["support_values"] == 2          # SECRET_CODE (from the question) and QX-4471
    assert not [n for n in of_type(events, "Notice") if "not found" in n.message]
