"""A small root's search that matched nothing is shown the lines holding its words in any order; a
short output naming a code is followed by the search for it; a guess right after an empty search is
sent back once (core/engine/search_help.py, core/engine/answer_kind.py): real engine, real REPL
worker, scripted server over HTTP."""

from tests.integration.engine_helpers import Doc, code, of_type, run

SMALL = "openai/tiny-1.5b"
LOG = [Doc("log.txt", "2024-03-01 08:00 Unit A ON TIME\n2024-03-02 09:10 Unit B FAULT brake worn\n"
                      "2024-03-04 07:55 Unit B FAULT brake worn\n")]
PHRASE = code('doc = [d for d in documents if d["path"].endswith("log.txt")][0]\n'
              'hits = [l for l in doc["text"].splitlines() if "brake fault" in l.lower()]\nprint(hits)')


def prompts_of(server):
    return [r.messages[-1]["content"] for r in server.requests_for("tiny-1.5b")]


async def test_an_empty_phrase_search_is_shown_the_lines_holding_its_words_in_another_order(server):
    server.script("tiny-1.5b", replies=[PHRASE, code("FINAL('2024-03-02')")])
    result, _ = await run(server, "On which date did unit B first log a brake fault?", LOG, mode="rlm",
                          root_model=SMALL)
    assert result.answer == "2024-03-02"
    second = prompts_of(server)[1]
    assert "Your search for 'brake fault' matched no line." in second
    assert "- documents[0] line 2: 2024-03-02 09:10 Unit B FAULT brake worn" in second
    assert "FINAL('2024-03-02 09:10 Unit B FAULT brake worn')" in second


async def test_when_no_line_holds_the_words_not_found_is_accepted_at_once(server):
    search = code('hits = [l for l in documents[0]["text"].splitlines() if "brake price" in l.lower()]\nprint(hits)')
    server.script("tiny-1.5b", replies=[search, code("FINAL('Not in the documents.')")])
    result, events = await run(server, "What does a brake cost?", LOG, mode="rlm", root_model=SMALL)
    assert result.answer == "Not in the documents."
    assert "no line holds all of its words (brake, price)" in prompts_of(server)[1]
    assert not [n for n in of_type(events, "Notice") if "sent back" in n.message]


async def test_the_note_comes_again_when_the_root_repeats_the_empty_search(server):
    server.script("tiny-1.5b", replies=[PHRASE, PHRASE, code("FINAL('2024-03-02')")])
    result, _ = await run(server, "On which date did unit B first log a brake fault?", LOG, mode="rlm",
                          root_model=SMALL)
    assert result.answer == "2024-03-02"
    assert "Unit B FAULT brake worn" in prompts_of(server)[2] and "was not run again" in prompts_of(server)[2]


async def test_a_short_output_naming_a_code_is_followed_by_the_search_for_it(server):
    docs = [Doc("staff.txt", "Ann Lee drives unit TR-88.\nBo Rask drives unit TR-90.\n"),
            Doc("units.txt", "TR-88: depot North.\nTR-90: depot South.\n")]
    first = code('hits = [l for l in documents[0]["text"].splitlines() if "ann lee" in l.lower()]\nprint(hits)')
    hop = code('hits = [line for d in documents for line in d["text"].splitlines() if \'TR-88\' in line]\nprint(hits)')
    server.script("tiny-1.5b", replies=[first, hop, code("FINAL('depot North')")])
    result, _ = await run(server, "Which depot keeps the unit that Ann Lee drives?", docs, mode="rlm",
                          root_model=SMALL)
    assert result.answer == "depot North"
    prompts = prompts_of(server)
    assert "That output names TR-88, which the question does not." in prompts[1]
    assert "'TR-88: depot North.'" in prompts[2] and "That output names" not in prompts[2]


async def test_a_name_given_right_after_an_empty_search_is_sent_back_once_for_every_model_size(server):
    search = code('hits = [l for l in documents[0]["text"].splitlines() if "keeper" in l.lower()]\nprint(hits)')
    server.script("root", replies=[search, code("FINAL('Ada Holm')"), code("FINAL('Not in the documents.')")])
    result, events = await run(server, "Who kept the light in 1990?", LOG, mode="rlm")
    assert result.answer == "Not in the documents."
    prompts = [r.messages[-1]["content"] for r in server.requests_for("root")]
    assert "FINAL(Ada Holm) did not end the run: it comes right after a search that matched nothing" in prompts[2]
    assert [n.message for n in of_type(events, "Notice") if "sent back" in n.message][0].startswith(
        "The final answer 'Ada Holm' was sent back once")


async def test_an_answer_a_cell_printed_before_the_empty_search_is_not_a_guess(server):
    found = code('print([l for l in documents[0]["text"].splitlines() if "Unit A" in l])')
    empty = code('print([l for l in documents[0]["text"].splitlines() if "Unit C" in l])')
    server.script("root", replies=[found, empty, code("FINAL('Unit A, ON TIME')")])
    result, events = await run(server, "Which unit was on time?", LOG, mode="rlm")
    assert result.answer == "Unit A, ON TIME"
    assert not [n for n in of_type(events, "Notice") if "sent back" in n.message]


async def test_a_stuck_small_root_is_asked_for_its_answer_without_its_earlier_replies(server):
    # The real 1.5B model, asked for its final answer after sending one block three times, sent it again
    # until the time cap: with its replies in view it copies them.
    memo = [Doc("memo.txt", "Intro.\nWinter rule. From the first frost the gate opens late.\nEnd.\n")]
    block = code('hits = [l for l in documents[0]["text"].splitlines() if "winter" in l.lower()]\nprint(hits)')
    server.script("tiny-1.5b", replies=[block, block, block, code("FINAL(hits[0])")])
    result, events = await run(server, "From when does the winter rule apply?", memo, mode="rlm", root_model=SMALL)
    assert result.answer == "Winter rule. From the first frost the gate opens late."
    requests = server.requests_for("tiny-1.5b")
    assert [len(r.messages) for r in requests] == [2, 4, 6, 2]
    asked = requests[3].messages
    assert asked[0] == requests[0].messages[0] and asked[1]["role"] == "user"
    assert asked[1]["content"].startswith("Question: From when does the winter rule apply?")
    assert "Winter rule. From the first frost the gate opens late." in asked[1]["content"]
    assert "Give your final answer now" in asked[1]["content"]
    assert [n.message for n in of_type(events, "Notice") if "short conversation" in n.message] == [
        "The root was asked for its final answer in a short conversation: the system prompt, the question and "
        "the last feedback, without its earlier replies."]


async def test_a_large_root_asked_for_its_answer_keeps_the_whole_conversation(server):
    block = code('print([l for l in documents[0]["text"].splitlines() if "Unit A" in l])')
    server.script("root", replies=[block, block, block, code("FINAL('Unit A')")])
    result, events = await run(server, "Which unit was on time?", LOG, mode="rlm")
    assert result.answer == "Unit A"
    assert [len(r.messages) for r in server.requests_for("root")] == [2, 4, 6, 8]
    assert not [n for n in of_type(events, "Notice") if "short conversation" in n.message]


async def test_a_repeated_second_hop_is_offered_the_line_the_first_search_had_not_printed(server):
    pad = " The rest of this line is about other things entirely." * 4
    docs = [Doc("staff.txt", f"Ann Lee drives unit TR-88 for the depot.{pad}\n"),
            Doc("units.txt", f"TR-88: kept at depot North.{pad}\n")]
    first = code('print([l for l in documents[0]["text"].splitlines() if "ann lee" in l.lower()])')
    hop = code('hits = [line for d in documents for line in d["text"].splitlines() if \'TR-88\' in line]\nprint(hits)')
    server.script("tiny-1.5b", replies=[first, hop, hop, code("FINAL(hits[1])")])
    result, _ = await run(server, "Which depot keeps the unit that Ann Lee drives?", docs, mode="rlm",
                          root_model=SMALL)
    assert result.answer.startswith("TR-88: kept at depot North.")
    offered = prompts_of(server)[3]
    assert "this one holds most words of the question" in offered
    assert "\nFINAL('TR-88: kept at depot North." in offered


async def test_a_log_taken_from_tables_is_named_and_the_note_comes_again_on_a_repeat(server):
    pick = code('t = [t for t in tables if t["path"].endswith("log.txt")][0]\nprint(t["header"])')
    count = code('print(sum("FAULT" in l for l in documents[0]["text"].splitlines()))')
    server.script("tiny-1.5b", replies=[pick, pick, count, code("FINAL('2')")])
    result, _ = await run(server, "How many lines say FAULT?", LOG, mode="rlm", root_model=SMALL)
    assert result.answer == "2"
    prompts = prompts_of(server)
    assert "IndexError" in prompts[1] and "`tables` holds no table of log.txt" in prompts[1]
    assert "`tables` holds no table of log.txt" in prompts[2] and "was not run again" in prompts[2]


async def test_a_document_picked_by_a_name_none_has_is_told_the_names_there_are(server):
    pick = code('doc = [d for d in documents if d["path"].endswith("reports/q1.md")][0]\nprint(doc["text"][:50])')
    server.script("tiny-1.5b", replies=[pick, code("FINAL('Not in the documents.')"),
                                        code("FINAL('Not in the documents.')")])
    result, _ = await run(server, "What does the first report say?", LOG, mode="rlm", root_model=SMALL)
    assert "No document's name ends with 'reports/q1.md'. The documents are: log.txt." in prompts_of(server)[1]
    # not-found right after a block that failed is sent back once (the error says nothing of the documents)
    assert "your last block failed with an error" in prompts_of(server)[2]
    assert result.answer == "Not in the documents."


async def test_a_table_read_from_documents_is_shown_how_to_take_it_from_tables(server):
    docs = [Doc("fares.csv", "month,n\n2024-01,3\n2024-02,4\n")]
    wrong = code('doc = [d for d in documents if d["path"].endswith("fares.csv")][0]\nprint(doc["header"])')
    server.script("tiny-1.5b", replies=[wrong, code("print(3 + 4)"), code("FINAL('7')")])
    result, _ = await run(server, "What is the total of the n column?", docs, mode="rlm", root_model=SMALL)
    assert 'A document in `documents` has only "path" and "text".' in prompts_of(server)[1]
    assert result.answer == "7"
