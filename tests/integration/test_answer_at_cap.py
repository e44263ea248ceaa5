"""What a small root's run ends with when it never sends the answer it was offered, a final answer
written `Final(...)` in prose, an average given for a total, and table rows given for their sum:
real engine, real REPL worker, scripted server over HTTP. Each case is what the real
Qwen2.5-Coder-1.5B did on the set of every kind (docs/dev/answers.md)."""

from tests.integration.engine_helpers import Doc, code, of_type, run

LOG = [Doc("ferry_log.txt", "09:00 Ferry A CANCELLED\n09:10 Ferry B ON TIME\n10:00 Ferry C CANCELLED\n")]
COUNTING = "hits = [l for l in documents[0]['text'].splitlines() if 'cancelled' in l.lower()]\nprint(len(hits))"
TINY = "openai/tiny-1.5b"


async def test_a_small_root_that_never_sends_the_offered_line_ends_at_the_cap_with_it(server):
    # The real model printed 30 for a how-many question, was offered FINAL('30'), and sent the
    # block again (and, asked for its answer, echoed the request) until the time cap: no answer.
    echo = "Your next reply: one repl block and no text outside it."
    server.script("tiny-1.5b", replies=[code(COUNTING)] * 3 + [echo] + [code(COUNTING)] * 2 + [echo] * 3)
    result, events = await run(server, "How many crossings were cancelled?", LOG, mode="rlm", root_model=TINY,
                               max_iterations=6)
    assert result.status == "capped" and result.answer == "2"
    warned = [n.message for n in of_type(events, "Notice") if n.message.startswith("No final answer by the cap")]
    assert warned == ["No final answer by the cap: the answer is what the root's code printed, '2', "
                      "which it was offered as its answer and did not send."]


async def test_a_run_at_the_cap_without_an_offer_still_has_no_answer(server):
    # An empty search is never offered: nothing the code printed answers, so no answer is made up.
    empty = "hits = [l for l in documents[0]['text'].splitlines() if 'diesel' in l.lower()]\nprint(hits)"
    server.script("tiny-1.5b", replies=[code(empty)] * 3 + ["I cannot tell."] + [code(empty)] * 2 + ["No."] * 3)
    result, events = await run(server, "How many litres of diesel were burnt?", LOG, mode="rlm", root_model=TINY,
                               max_iterations=6)
    assert result.status == "capped" and result.answer is None
    assert not [n for n in of_type(events, "Notice") if n.message.startswith("No final answer by the cap")]


async def test_a_final_answer_written_final_in_prose_ends_the_run(server):
    # Asked for its answer in the short conversation, the real model wrote Final('...') as text.
    server.script("tiny-1.5b", replies=[code(COUNTING), "Final('2')"])
    result, _ = await run(server, "How many crossings were cancelled?", LOG, mode="rlm", root_model=TINY)
    assert result.answer == "2" and result.status == "finished"
    assert len(server.requests_for("tiny-1.5b")) == 2


FARES = [Doc("fares.csv", "month,route,passengers\n2024-01,North,10\n2024-01,South,30\n2024-02,North,20\n")]
TABLE = ("values = [int(line.split(',')[2]) for line in documents[0]['text'].splitlines()[1:]]\n"
         "print('rows:', len(values), 'total:', sum(values), 'average:', round(sum(values) / len(values), 2))")


async def test_the_average_given_for_a_total_is_sent_back_with_the_printed_total(server):
    # The real model printed the total asked for, then answered with the average, as the one
    # table example it had seen did.
    server.script("root", replies=[code(TABLE), code("FINAL(str(round(sum(values) / len(values), 2)))"),
                                   'FINAL("60")'])
    result, events = await run(server, "What is the total of the passengers column in fares.csv?", FARES)
    assert result.answer == "60"
    note = server.requests_for("root")[2].messages[-1]["content"]
    assert ("FINAL(20.0) did not end the run: 20.0 is the average your code printed, and the question asks "
            "for the total. Your output printed total: 60.") in note and 'FINAL("60")' in note
    # the other way round, and no note when the answer is the one asked for
    server.script("root", replies=[code(TABLE), code("FINAL(str(sum(values)))"), 'FINAL("20.0")'])
    result, _ = await run(server, "What is the average number of passengers in fares.csv?", FARES)
    assert result.answer == "20.0"
    assert "is the total your code printed, and the question asks for the average" in \
        server.requests_for("root")[5].messages[-1]["content"]
    server.script("root", replies=[code(TABLE), code("FINAL(str(sum(values)))")])
    result, events = await run(server, "What is the total of the passengers column in fares.csv?", FARES)
    assert result.answer == "60" and not [n for n in of_type(events, "Notice") if "sent back" in n.message]


async def test_table_rows_given_for_their_total_are_sent_back(server):
    # The real model printed the four rows of a month and answered with them, not their total.
    rows = "hits = [l for l in documents[0]['text'].splitlines() if '2024-01' in l]\nprint(hits)"
    server.script("root", replies=[code(rows), code("FINAL('; '.join(hits))"),
                                   code("FINAL(str(sum(int(h.split(',')[2]) for h in hits)))")])
    result, _ = await run(server, "What is the total of passengers in fares.csv for the month 2024-01?", FARES)
    assert result.answer == "40"
    assert ("your answer is 2 lines your code printed, and the question asks for one number"
            in server.requests_for("root")[2].messages[-1]["content"])


REPORTS = [Doc("inspections_2023.md", "Inspector: Holt. Result: failed.\nInspector: Lamm. Result: failed.\n"),
           Doc("inspections_2024.md", "Inspector: Varn. Result: failed.\nInspector: Lamm. Result: passed.\n")]
A = ('doc = [d for d in documents if d["path"].endswith("2023.md")][0]\n'
     'print(len([l for l in doc["text"].splitlines() if "failed" in l]))')
B = A.replace("2023", "2024")


async def test_two_blocks_sent_in_turn_are_repeats_and_the_answer_request_shows_both(server):
    # The real model counted 4 in one file and 3 in the other, then sent those two blocks in turn
    # until the time cap; asked for its answer with one output in view, it could not compare.
    server.script("tiny-1.5b", replies=[code(A), code(B), code(A), code(B), "FINAL('2023')"])
    question = "Did inspections_2023.md or inspections_2024.md record more failed inspections? Answer with the year."
    result, events = await run(server, question, REPORTS, mode="rlm", root_model=TINY)
    assert result.answer == "2023"
    cells = [e for e in of_type(events, "CellExecuted")]
    assert len(cells) == 2                                   # turns 3 and 4 not run again
    repeats = [n.message for n in of_type(events, "Notice") if "repeated its reply" in n.message]
    assert [m.split(" (")[0] for m in repeats] == ["The root repeated its reply of turn 1",
                                                   "The root repeated its reply of turn 2"]
    asked = server.requests_for("tiny-1.5b")[-1].messages
    assert len(asked) == 2 and ("What your blocks printed so far:\n"
                                "- a block that read inspections_2023.md printed: 2\n"
                                "- a block that read inspections_2024.md printed: 1") in asked[-1]["content"]


async def test_an_earlier_block_that_reads_a_changed_name_is_run_again(server):
    show = "print(len(hits))"
    first = 'hits = [l for l in documents[0]["text"].splitlines() if "failed" in l]'
    server.script("root", replies=[code(first + "\n" + show), code("hits = hits[:1]"), code(show), "FINAL('1')"])
    await run(server, "Answer from the documents.", REPORTS, mode="rlm")
    assert len(server.requests_for("root")) == 4
    assert "1" == server.requests_for("root")[3].messages[-1]["content"].split("[block 1 of 1: ran]\n", 1)[1][:1]


async def test_a_small_root_sees_the_table_examples_only_beside_a_table(server):
    server.script("tiny-1.5b", replies=[code(COUNTING), "FINAL('2')", code("print(1)"), "FINAL('1')"])
    await run(server, "How many crossings were cancelled?", LOG, mode="rlm", root_model=TINY)
    await run(server, "What is the total of the passengers column?", FARES, mode="rlm", root_model=TINY)
    systems = [r.messages[0]["content"] for r in server.requests_for("tiny-1.5b")]
    assert "orders.csv" not in systems[0] and "orders.csv" in systems[2]


async def test_the_final_answer_stated_in_words_when_asked_for_it_ends_the_run(server):
    # Asked for its answer after three repeats, the real model wrote "The final answer is 126."
    server.script("tiny-1.5b", replies=[code(COUNTING)] * 3 + ["The final answer is 2.", code("print(0)")])
    result, _ = await run(server, "How many crossings were cancelled?", LOG, mode="rlm", root_model=TINY)
    assert result.answer == "2" and result.status == "finished"
    assert len(server.requests_for("tiny-1.5b")) == 4
    # not asked for it: a passing "final answer" line does not end the run
    server.script("tiny-1.5b", replies=[code(COUNTING), "The final answer is 2.", "FINAL('2')"])
    result, _ = await run(server, "How many crossings were cancelled?", LOG, mode="rlm", root_model=TINY)
    assert result.answer == "2" and len(server.requests_for("tiny-1.5b")) == 7


async def test_a_search_that_matched_only_a_tables_header_is_shown_the_column_block(server):
    # The real model searched a CSV's text for the column's name, printed the header line and looped.
    header = "print([l for l in documents[0]['text'].splitlines() if 'passengers' in l.lower()])"
    server.script("tiny-1.5b", replies=[code(header), "FINAL('60')"])
    await run(server, "What is the total of the passengers column in fares.csv?", FARES, mode="rlm", root_model=TINY)
    note = server.requests_for("tiny-1.5b")[1].messages[-1]["content"]
    assert "Your search matched only the header line of fares.csv: passengers is a column's name" in note


async def test_three_searches_that_found_nothing_offer_the_not_found_line(server):
    # The real model searched a memo that names no fares for "child", "single" and "ticket", each [],
    # and went on searching them again until the time cap.
    memo = [Doc("memo.txt", "Gritting. Crews grit the deck below two degrees.\nParking behind the net sheds.\n")]
    search = 'print([l for l in documents[0]["text"].splitlines() if "{}" in l.lower()])'
    blocks = [code(search.format(w)) for w in ("child's single ticket", "child", "single")]
    server.script("tiny-1.5b", replies=blocks + ['FINAL("Not in the documents.")'])
    result, _ = await run(server, "What does a child's single ticket cost according to memo.txt?", memo, mode="rlm",
                          root_model=TINY)
    assert result.answer == "Not in the documents." and result.status == "finished"
    prompts = [r.messages[-1]["content"] for r in server.requests_for("tiny-1.5b")]
    offer = "each matched no line. If the documents do not hold what the question asks"
    assert offer not in prompts[2] and offer in prompts[3]
    assert "FINAL('[]')" not in "".join(prompts)          # an empty result is never offered as the answer


async def test_the_offered_line_written_out_in_reply_to_the_request_ends_the_run(server):
    # Asked for its answer, the real model wrote the offered line as prose, without FINAL(...).
    line = "09:00 Ferry A CANCELLED"
    search = "print([l for l in documents[0]['text'].splitlines() if 'Ferry A' in l])"
    server.script("tiny-1.5b", replies=[code(search)] * 3 + [line, "FINAL('never asked')"])
    result, _ = await run(server, "What happened to Ferry A?", LOG, mode="rlm", root_model=TINY)
    assert result.answer == line and result.status == "finished"
    assert len(server.requests_for("tiny-1.5b")) == 4
    # prose that is not the offered line is no answer
    server.script("tiny-1.5b", replies=[code(search)] * 3 + ["The answer is to be read from the cells printed.",
                                                             "FINAL('09:00')"])
    result, _ = await run(server, "What happened to Ferry A?", LOG, mode="rlm", root_model=TINY)
    assert result.answer == "09:00"


async def test_at_the_wall_clock_cap_the_offered_line_is_the_answer_and_said(server):
    # The real model printed 30, was offered FINAL('30') and re-sent the block until the 180 s cap.
    server.script("tiny-1.5b", replies=[code(COUNTING)] * 20, latency_s=1.0)
    result, events = await run(server, "How many crossings were cancelled?", LOG, mode="rlm", root_model=TINY,
                               max_iterations=20, max_wall_seconds=4)
    assert result.status == "capped" and result.answer == "2" and "wall-clock cap" in (result.error or "")
    assert any(n.message.startswith("No final answer by the cap: the answer is what the root's code printed, '2'")
               for n in of_type(events, "Notice"))
