"""A final answer of the wrong kind is sent back once (core/engine/answer_kind.py): real engine,
real REPL worker, scripted server over HTTP. The real 1.5B model printed the matching line and
then answered with the number of matches; searched a table for a word, found nothing and
answered "0"."""

import pytest

from tests.integration.engine_helpers import Doc, code, of_type, root_prompts, run

NOTES = [Doc("notes/brief.txt", "intro line\nThe pilot plan says ferries start at dawn.\nclosing line\n")]
SEARCH = "hits = [l for l in documents[0]['text'].splitlines() if 'plan' in l]\nprint(len(hits))\nprint(hits)"
COUNT_NOTE = "your answer is the number of matching lines, and the question asks what they say"


@pytest.mark.parametrize("root", ["openai/root", "openai/tiny-1.5b"])   # every model size
async def test_a_count_for_a_what_question_is_sent_back_once_and_the_second_answer_is_accepted(server, root):
    model = root.split("/", 1)[1]
    server.script(model, replies=[code(SEARCH), code("FINAL(str(len(hits)))"),
                                  code("FINAL(hits[0])")])
    result, events = await run(server, "What does the pilot plan say?", NOTES, mode="rlm", root_model=root)
    assert result.answer == "The pilot plan says ferries start at dawn."
    prompts = root_prompts(server)[-3:] if model == "root" else [r.messages[-1]["content"]
                                                                 for r in server.requests_for(model)]
    assert COUNT_NOTE in prompts[2] and COUNT_NOTE not in prompts[1]
    notices = [n.message for n in of_type(events, "Notice") if "was sent back once" in n.message]
    assert notices == ["The final answer '1' was sent back once: FINAL(1) did not end the run: "
                       "your answer is the number of matching lines, and the question asks what they say. "
                       "Print the lines you found (or the items, names or passage the question is about) and "
                       "answer with their words; answer with a count only when the question asks how many."]
    # No model call was made for the check: three root calls, one per reply.
    assert len(server.requests_for(model)) == 3


async def test_the_same_count_given_again_is_accepted(server):
    server.script("root", replies=[code(SEARCH), code("FINAL(str(len(hits)))"), code("FINAL('1')")])
    result, events = await run(server, "What does the pilot plan say?", NOTES, mode="rlm")
    assert result.answer == "1"
    assert len([n for n in of_type(events, "Notice") if "sent back once" in n.message]) == 1


async def test_the_same_reply_sent_again_after_a_send_back_ends_the_run_with_its_answer(server):
    """A repeated reply's code is not run again, so its FINAL could never end the run: a root that
    answers the note by sending the very same reply stands by its answer, which is accepted."""
    reply = code("out = 'ok ok'\nFINAL(out)")
    server.script("root", replies=[reply, reply, code("FINAL('never asked')")])
    result, events = await run(server, "How much does the plan cost?", NOTES, mode="rlm")
    assert result.answer == "ok ok" and result.status == "finished"
    assert len(server.requests_for("root")) == 2
    assert [n.message for n in of_type(events, "Notice") if "stands" in n.message] == [
        "The root sent the same reply again, so its answer 'ok ok' stands."]


async def test_a_count_for_a_how_many_question_is_accepted_at_once(server):
    server.script("root", replies=[code(SEARCH), code("FINAL(str(len(hits)))")])
    result, events = await run(server, "How many lines mention the plan?", NOTES, mode="rlm")
    assert result.answer == "1"
    assert not [n for n in of_type(events, "Notice") if "sent back" in n.message]


async def test_zero_right_after_a_search_that_found_nothing_is_sent_back(server):
    table = [Doc("sales.csv", "month,revenue\n2024-01,10\n2024-02,15\n")]
    empty = "hits = [l for l in context.splitlines() if 'Oslo' in l]\nprint(len(hits))"
    total = "t = tables[0]\nprint(sum(r[1] for r in t['rows']))"
    server.script("root", replies=[code(empty), code("FINAL('0')"), code(total), code("FINAL('25')")])
    result, events = await run(server, "What is the total of the revenue column?", table, mode="rlm")
    assert result.answer == "25"
    prompts = root_prompts(server)
    assert "the search, not the documents, is the likelier fault" in prompts[2]
    assert any("'0' was sent back once" in n.message for n in of_type(events, "Notice"))


async def test_zero_after_an_empty_search_is_sent_back_when_the_final_cell_printed_a_note(server):
    # The real 1.5B model printed 0 and wrote `Final("0")`: the cell that took it as FINAL said so
    # on stderr, and that note hid the empty search from the check.
    log = [Doc("log.txt", "09:00 Ferry A DELAYED\n09:10 Ferry B ON TIME\n")]
    empty = "hits = [l for l in context.splitlines() if 'late' in l.lower()]\nprint(len(hits))"
    server.script("root", replies=[code(empty), code('Final("0")'), code("FINAL('1')")])
    result, events = await run(server, "How many crossings were delayed?", log, mode="rlm")
    assert result.answer == "1"
    assert "the search, not the documents, is the likelier fault" in root_prompts(server)[2]
    assert "`Final(...)` was taken as `FINAL(...)`" in root_prompts(server)[2]


async def test_a_how_many_answer_without_a_number_is_sent_back(server):
    server.script("root", replies=[code(SEARCH), code("FINAL('the plan line')"), code("FINAL('1')")])
    result, events = await run(server, "How many lines mention the plan?", NOTES, mode="rlm")
    assert result.answer == "1"
    assert "the question asks for a number, and your answer holds none" in root_prompts(server)[2]


def test_the_check_shows_in_the_cli_transcript_live_and_stored(server, tmp_path):
    """The note is an event of the run: printed in `rlm-studio ask`'s transcript and by `runs show`."""
    import json
    import subprocess
    from tests.integration.test_cli_ask import ask
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "brief.txt").write_text(NOTES[0].text, encoding="utf-8")
    server.script("root", replies=[code(SEARCH), code("FINAL(str(len(hits)))"), code("FINAL(hits[0])")])
    cmd, env = ask(server, tmp_path, folder, "--json", "--mode", "rlm", question="What does the pilot plan say?")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert "was sent back once" in out.stderr
    run_id = json.loads(out.stdout)["run_id"]
    shown = subprocess.run(cmd[:3] + ["runs", "show", run_id], capture_output=True, text=True, timeout=60, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "was sent back once" in shown.stdout + shown.stderr


async def test_not_found_after_printed_lines_is_sent_back_when_the_stuck_root_is_asked_for_its_answer(server):
    # The real 1.5B model printed the passage that answers, sent the block twice more, and asked for
    # its final answer copied "Not in the documents." from the prompt. The check runs at that request
    # too (not at the turn cap), and offers the printed line to copy.
    memo = [Doc("memo.txt", "Intro.\nGritting. Crews grit the deck below two degrees.\nEnd.\n")]
    block = code("hits = [l for l in documents[0]['text'].splitlines() if 'grit' in l.lower()]\nprint(hits)")
    server.script("tiny-1.5b", replies=[block, block, block, code("FINAL('Not in the documents.')"),
                                        code("FINAL('Gritting. Crews grit the deck below two degrees.')")])
    result, events = await run(server, "When must crews grit the deck?", memo, mode="rlm",
                               root_model="openai/tiny-1.5b")
    assert result.answer == "Gritting. Crews grit the deck below two degrees."
    requests = server.requests_for("tiny-1.5b")
    assert len(requests) == 5
    assert "Give your final answer now" in requests[3].messages[-1]["content"]
    last = requests[4].messages[-1]["content"]
    assert "your last block printed lines from the documents, so the answer may be in them" in last
    offered = "reply with exactly this line and nothing else:\nFINAL('Gritting. Crews grit the deck below two degrees.')"
    assert last.index("so the answer may be in them") < last.index(offered)
    assert any("'Not in the documents.' was sent back once" in n.message for n in of_type(events, "Notice"))


async def test_a_number_no_output_holds_is_sent_back_with_the_printed_numbers(server):
    # The real 1.5B model printed the rows and the total asked for, then copied the prompt example's
    # FINAL line of an average.
    table = [Doc("sales.csv", "month,revenue\n2024-01,10\n2024-02,15\n")]
    total = ("rows = documents[0]['text'].splitlines()[1:]\nvalues = [int(r.split(',')[1]) for r in rows]\n"
             "print(len(values), sum(values))")
    server.script("tiny-1.5b", replies=[code(total), code("FINAL(str(round(sum(values) / len(values), 2)))"),
                                        code("FINAL('25')")])
    result, events = await run(server, "What is the total of the revenue column?", table, mode="rlm",
                               root_model="openai/tiny-1.5b")
    assert result.answer == "25"
    third = server.requests_for("tiny-1.5b")[2].messages[-1]["content"]
    assert "12.5 is in none of the output, and your last block printed the numbers 2, 25." in third


async def test_a_number_computed_in_the_final_line_after_a_failed_block_is_accepted(server):
    # The cell that ran FINAL computed the count (nothing printed it: the block before failed); a
    # typed number in the same place is sent back once (the check above), this one is not.
    docs = [Doc("one.txt", "apples: 3\n"), Doc("two.md", "pears: 4\n")]
    server.script("root", replies=[code("print(len(documents)"), code("FINAL(str(len(documents)) + ' files')")])
    result, events = await run(server, "How many files?", docs, mode="rlm")
    assert result.answer == "2 files" and len(server.requests_for("root")) == 2
    assert not any("was sent back" in n.message for n in of_type(events, "Notice"))
    server.script("root", replies=[code("print(len(documents)"), code("FINAL('7 files')"), code("FINAL('2 files')")])
    result, events = await run(server, "How many files?", docs, mode="rlm")
    assert result.answer == "2 files"
    assert any("'7 files' was sent back once" in n.message for n in of_type(events, "Notice"))
