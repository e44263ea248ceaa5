"""The answer-kind check's reading of a question and an answer (core/engine/answer_kind.py)."""

import pytest

from core.engine.answer_kind import asks_for_content, asks_for_number, sent_back_note


@pytest.mark.parametrize("question", [
    "How many lines mention the ferry?", "How much did the repairs cost?",
    "What is the total of the amount column?", "What was the average wait?",
    "Count the rows of the table.", "Wie viele Zeilen nennen die Fähre?", "Combien de lignes?",
    "¿Cuántos pedidos fallaron?", "Which month? Answer with a number."])
def test_questions_that_ask_for_a_number(question):
    assert asks_for_number(question) and not asks_for_content(question)


@pytest.mark.parametrize("question", [
    "What does the memo say about parking?", "Which items are on the list?", "Who signed it?",
    "Why did it stop?", "List the three risks.", "Describe the plan.", "When did it start?",
    "Was sagt der Bericht über die Fähre?".replace("Was", "Welche Punkte"), "Que dit la note?",
    "¿Qué dice el informe?", "Which product has the highest total revenue?"])
def test_questions_that_ask_for_content(question):
    assert asks_for_content(question)


def test_a_yes_no_question_is_neither():
    assert not asks_for_content("Did the ferry run on Sunday?") and not asks_for_number("Did it run?")


def test_a_count_the_run_printed_is_sent_back_for_a_content_question():
    assert sent_back_note("What does it say?", "3", ["3\n['a', 'b', 'c']"], "3", "print(len(hits))")
    assert sent_back_note("List the items.", "3", ["found 3 items"], "found 3 items", "")


def test_a_number_that_is_not_a_printed_count_is_kept():
    # a year, a number never printed as a count, a number with words around it
    assert sent_back_note("When did it open?", "2024", ["2024\n"], "2024", "len(x)") is None
    assert sent_back_note("Which room?", "12", ["Room 12 is on the left"], "Room 12 is on the left", "") is None
    assert sent_back_note("What does it say?", "3 lines say: ferries start at dawn", ["3"], "3", "") is None


def test_a_number_question_without_a_number_is_sent_back_and_number_words_count():
    assert sent_back_note("How many orders failed?", "the card ones", [], "", "")
    assert sent_back_note("How many orders failed?", "twelve", [], "", "") is None
    assert sent_back_note("How many orders failed?", "None failed", [], "", "") is None


def test_zero_after_an_empty_search_is_sent_back_and_zero_after_a_real_count_is_not():
    assert sent_back_note("How many orders failed?", "0", ["hits: 0"], "hits: 0", "")
    assert sent_back_note("What is the total?", "[]", ["[]"], "[]", "")
    assert sent_back_note("How many orders failed?", "0", ["failed orders checked, none in 412 lines"],
                          "failed orders checked, none in 412 lines", "") is None


def test_a_date_question_without_a_date_is_sent_back():
    # The real 1.5B model printed the line with the year, then answered with its last word.
    note = sent_back_note("In which year did the storm tear the pier loose?", "tender.", [], "", "")
    assert note and note.startswith("FINAL(tender.) did not end the run: the question asks for a date or a year")
    assert sent_back_note("On which date did the engine fail?", "nobody logged it", [], "", "")
    for answer in ("1987", "the 17th", "first Monday of November", "in Sept.", "2024-09-17"):
        assert sent_back_note("Which year or date was it?", answer, [], "", "") is None, answer
    # "when" asks for a condition as often as for a date: not checked
    assert sent_back_note("When must crews grit the deck?", "below two degrees", [], "", "") is None


def test_not_found_right_after_printed_lines_is_sent_back_with_the_line_to_copy():
    # The real 1.5B model printed the passage that answered, re-sent the block, and when asked
    # for its answer copied the prompt's "Not in the documents.".
    shown = "[block 1 of 1: ran]\n['Gritting. Crews grit the deck below two degrees.']"
    offer = "Your last block printed one line. ...\nFINAL('Gritting. Crews grit the deck below two degrees.')"
    for answer in ("Not in the documents.", "The memo does not say.", "No information found"):
        note = sent_back_note("When must crews grit?", answer, [shown], shown, "", offer)
        assert note and "your last block printed lines from the documents" in note and note.endswith(offer), answer
    # after an empty search, an error or nothing printed, "not found" is a fair answer
    for last in ("[block 1 of 1: ran]\n[]", "[block 1 of 1: ran]\nhits: 0", "[block 1 of 1: error]\n[error]\nNameError",
                 None):
        assert sent_back_note("When must crews grit?", "Not in the documents.", [], last, "", offer) is None, last
    # an answer that merely holds "not in" is an answer
    assert sent_back_note("Where do cars park?", "Behind the sheds, not in the lanes", [shown], shown, "") is None


def test_a_number_no_output_holds_is_sent_back_when_the_last_cell_printed_another():
    # The real 1.5B model printed 30 (right) and answered "0"; printed 0 and answered "2".
    shown = "[block 1 of 1: ran]\n30\n[stderr]\n[note: line 2 searched ...]"
    note = sent_back_note("How many crossings were cancelled?", "0", [shown], shown, "")
    assert note == ("FINAL(0) did not end the run: your last block printed 30, and 0 is in none of the output. "
                    "Answer with the number your code computed (reply with FINAL('30') if it answers the question), "
                    "or compute it again.")
    assert sent_back_note("How many?", "30", [shown], shown, "") is None                    # what it printed
    assert sent_back_note("How many?", "4", ["[block 1 of 1: ran]\n4 3", shown], shown, "") is None   # printed before
    assert sent_back_note("How many?", "12.5", ["[block 1 of 1: ran]\n12.50"], "[block 1 of 1: ran]\n12.50", "") is None
    assert sent_back_note("Which ship?", "0", [shown], shown, "") is None                   # not a number question
    assert sent_back_note("How many?", "2", [shown], shown, "")          # a note on stderr is not output


def test_no_line_is_offered_for_a_number_question_when_the_output_holds_no_digit():
    # The real 1.5B model, offered a table's header line for "the total of the passengers column",
    # answered with the header.
    from core.engine.answer_kind import offer_for
    assert offer_for("What is the total of the passengers column?", "['month,route,passengers']") is None
    assert "FINAL('113917')" in offer_for("What is the total of the passengers column?", "113917")
    assert "FINAL('month,route,passengers')" in offer_for("Which columns are there?", "['month,route,passengers']")


def test_a_number_no_output_holds_is_sent_back_with_the_numbers_the_last_line_printed():
    # The real 1.5B model printed the rows and the total asked for, then copied the prompt's average.
    printed = "['month', 'n'] [['2024-01', 3256]]\n48 113917\n"
    note = sent_back_note("What is the total of the n column?", "2373.27", [printed], printed, "")
    assert note and note.startswith("FINAL(2373.27) did not end the run: 2373.27 is in none of the output, "
                                    "and your last block printed the numbers 48, 113917.")


def test_a_printed_number_or_one_rounded_from_it_is_kept():
    assert sent_back_note("What is the total of n?", "113917", ["48 113917"], "48 113917", "") is None
    assert sent_back_note("What is the average of n?", "2151.42", ["12 2151.41666"], "12 2151.41666", "") is None
    assert sent_back_note("What is the total of n?", "113,917", ["48 113917"], "48 113917", "") is None


def test_a_guess_right_after_an_empty_search_is_sent_back_and_a_printed_or_shown_answer_is_not():
    note = sent_back_note("Who kept the light?", "Ada Holm", ["[]"], "[]", "")
    assert note and "no output of yours holds it, so it is a guess" in note
    assert sent_back_note("Who kept the light?", "Ada Holm", ["['Ada Holm kept it']", "[]"], "[]", "") is None
    assert sent_back_note("Who kept the light?", "Ada Holm", ["[]"], "[]", "", hinted="- line 3: Ada Holm") is None
    assert sent_back_note("Who kept the light?", "Not in the documents.", ["[]"], "[]", "") is None


def test_the_numbers_of_a_traceback_are_not_printed_numbers():
    error = "[error]\nTraceback (most recent call last):\n  File \"<cell 1>\", line 1, in <module>\nIndexError: x"
    note = sent_back_note("How many lines say FAULT?", "2", [error], error, "")
    assert "no output of yours holds that number" in note and "printed the numbers" not in note


def test_a_number_no_cell_computed_after_a_failed_block_is_sent_back():
    # The real 1.5B model's block failed (KeyError), then it answered with a total it made up.
    error = "[error]\nTraceback (most recent call last):\n  File \"<cell 1>\", line 2\nKeyError: 'header'"
    note = sent_back_note("What is the total of the passengers column?", "The total is 32,560.", [error], error, "")
    assert note and note.startswith("FINAL(The total is 32,560.) did not end the run: no output of yours holds that "
                                    "number, so no code computed it.")
    assert sent_back_note("How many failed?", "4 inspections failed.", ["4"], "4", "") is None
    assert sent_back_note("How many failed?", "In 2023, 4 failed.", ["4"], "4", "") is None


def test_a_number_a_cell_computed_in_its_final_line_is_not_a_guess_after_a_failed_block():
    # FINAL(str(len(documents)) + ' files') computed 2 in code: no output printed it, but no cell
    # typed it either, so it is not sent back as made up; typed, it is.
    error = "[SyntaxError]\n  File \"<cell 1>\", line 1\n    print(len(documents)\n"
    assert sent_back_note("How many files?", "2 files", [error], error, "", computed=True) is None
    assert sent_back_note("How many files?", "2 files", [error], error, "") is not None
    # A computed number that differs from the numbers the last cell printed is still sent back.
    note = sent_back_note("What is the total?", "12.5", ["2 25"], "2 25", "", computed=True)
    assert note and "printed the numbers 2, 25" in note


def test_an_output_is_offered_at_once_only_when_its_kind_fits_the_question():
    from core.engine.answer_kind import offer_at_once
    assert "FINAL('126')" in offer_at_once("How many crossings were late?", "126\n")
    assert offer_at_once("How many crossings were late?", "['a line', 'another']") is None
    assert "FINAL('Ann Lee; Bo Rask')" in offer_at_once("Which drivers are listed?", "['Ann Lee', 'Bo Rask']")
    assert offer_at_once("Which drivers are listed?", "2\n") is None
    assert offer_at_once("Did 2023 or 2024 record more? Answer with the year.", "3\n") is None


@pytest.mark.parametrize("question", [
    "In memo.txt, when must crews grit the car deck?", "According to the memo, what does it say about parking?",
    "Master Kessel commands a vessel; what is its home port?", "From when does the winter timetable apply?",
    "Since when has the pier been closed?"])
def test_a_content_question_after_a_leading_clause(question):
    assert asks_for_content(question)


def test_a_number_printed_under_the_other_label_is_sent_back_with_the_one_asked():
    printed = ["[block 1 of 1: ran]\nrows: 48 total: 113917 average: 2373.27"]
    note = sent_back_note("What is the total of the passengers column?", "2373.27", printed, printed[0], "")
    assert "2373.27 is the average your code printed, and the question asks for the total" in note
    assert note.endswith('FINAL("113917")')
    note = sent_back_note("What is the mean wait?", "113917", printed, printed[0], "")
    assert "the question asks for the average" in note and note.endswith('FINAL("2373.27")')
    # the one asked for, a question naming both, an answer naming no printed label: kept
    assert sent_back_note("What is the total of the passengers column?", "113917", printed, printed[0], "") is None
    assert sent_back_note("What are the total and the average?", "2373.27", printed, printed[0], "") is None


def test_printed_rows_given_for_a_number_are_sent_back_and_kept_for_a_list():
    rows = ["2024-07,Kelp Bay,3057,25220.25", "2024-07,Gannet Isle,3979,25863.50"]
    printed = [str(rows)]
    note = sent_back_note("What is the total revenue for 2024-07?", "; ".join(rows), printed, printed[0], "")
    assert "your answer is 2 lines your code printed, and the question asks for one number" in note
    assert "Your code has not searched for these words of the question: revenue." in note
    assert sent_back_note("Which rows are from 2024-07?", "; ".join(rows), printed, printed[0], "") is None


def test_a_list_answered_from_a_look_at_the_first_lines_is_sent_back():
    # The real 1.5B model printed a registry's first five lines and listed three of its four vessels.
    look = "doc = documents[1]\nprint(doc['text'].splitlines()[:5])"
    printed = str(["VESSEL REGISTRY", "", "VX-201: MV Tern, home port Kelp Bay.", "VX-202: MV Petrel, home port Morrow."])
    answer = "VESSEL REGISTRY; ; VX-201: MV Tern, home port Kelp Bay.; VX-202: MV Petrel, home port Morrow."
    note = sent_back_note("List the vessel names in the registry.", answer, [printed], printed, look)
    assert "copies the first 5 lines your code printed to look at the document" in note
    block = note.split("```repl\n")[1].split("```")[0]           # every line that starts like those copied
    documents, found = [{"path": "r.txt", "text": "VESSEL REGISTRY\nVX-201: MV Tern.\nVX-204: MV Fulmar.\nx"}], {}
    exec(block.replace("print(hits)", "found['hits'] = hits"), {"documents": documents, "re": __import__("re"),
                                                               "found": found})
    assert found["hits"] == ["VX-201: MV Tern.", "VX-204: MV Fulmar."]
    # lines a search printed, or one line of the look: kept
    search = "hits = [l for l in lines if 'MV' in l]\nprint(hits)"
    assert sent_back_note("List the vessel names in the registry.", answer, [printed], printed, search) is None
    assert sent_back_note("Which vessel is based in Kelp Bay?", "VX-201: MV Tern, home port Kelp Bay.",
                          [printed], printed, look) is None


def test_not_found_after_a_printed_count_is_not_told_it_printed_lines():
    # The real 1.5B model printed 126 (right) and, asked for its answer, said "Not in the documents."
    # The note that it "printed lines from the documents" was not true of a bare count.
    note = sent_back_note("How many crossings were delayed?", "Not in the documents.", ["126"], "126", "")
    assert note is None or "printed lines from the documents" not in note
    lines = "['09:10 Ferry B DELAYED 20 min']"
    assert "printed lines from the documents" in sent_back_note("When was ferry B late?", "Not in the documents.",
                                                                 [lines], lines, "")


def test_one_printed_log_line_given_for_a_how_many_is_sent_back_with_the_words_never_searched():
    # No document says how much diesel the vessel burnt; the real 1.5B model searched its name
    # and answered with one of its log lines.
    line = "2024-09-01 06:59 VX-201 MV Tern    Kelp Bay - Sorrel Point      ON TIME"
    code = 'hits = [l for l in lines if "MV Tern" in l]\nprint(hits)'
    note = sent_back_note("How many litres of diesel did MV Tern burn in 2024, according to the documents?",
                          line, [str([line])], str([line]), code)
    assert "your answer is a line your code printed, and the question asks for one number" in note
    assert note.endswith("Your code has not searched for these words of the question: litres, diesel, burn.")
    # a line with a few numbers that answers a how-much is kept
    short = "The repair cost $4,200 in 2024."
    assert sent_back_note("How much did the repair cost?", short, [str([short])], str([short]), "") is None


def test_a_how_many_question_is_offered_a_number_not_a_log_line():
    from core.engine.answer_kind import offer_for
    line = "['2024-09-01 06:59 VX-201 MV Tern    Kelp Bay - Sorrel Point      ON TIME']"
    assert offer_for("How many litres of diesel did MV Tern burn?", line) is None
    assert "FINAL('126')" in offer_for("How many crossings were delayed?", "126")
    assert "FINAL('Total: 92')" in offer_for("How many payments failed?", "['Total: 92']")


def test_a_list_answered_with_one_word_repeated_is_sent_back():
    # The real 1.5B model kept the label before each name (`line.split(":")[0]`) and answered with it.
    note = sent_back_note("Which inspectors appear in the report?", "Inspector; Inspector; Inspector", ["x"], "x", "")
    assert note.startswith('FINAL(...) did not end the run: your answer is "Inspector" 3 times')
    assert sent_back_note("Which inspectors appear in the report?", "Lamm; Varn; Strand", ["x"], "x", "") is None


def test_an_empty_set_after_an_empty_result_is_sent_back():
    # The real 1.5B model split lines on a ";" they do not hold, printed set() and answered 'set()'.
    note = sent_back_note("Which inspector appears in both reports?", "set()", ["set()"], "set()", "print(common)")
    assert "the search, not the documents, is the likelier fault" in note


def test_the_words_searched_for_given_as_the_answer_are_sent_back_with_the_printed_line():
    # Asked why card payments failed, the real 1.5B model searched "card payment failed", printed the
    # lines that give the cause, and answered "card payment failed".
    code = 'hits = [l for l in lines if "card payment failed" in l.lower()]\nprint(hits)'
    line = "2024-08-14 09:42 ERROR card payment failed: TLS handshake failed (certificate has expired)"
    note = sent_back_note("Why did card payments fail on 14 August?", "card payment failed", [str([line])],
                          str([line]), code, offer=f"FINAL({line!r})")
    assert note.startswith('FINAL(...) did not end the run: "card payment failed" is what your code searched for')
    assert note.endswith(f"FINAL({line!r})")
    assert sent_back_note("Why did card payments fail?", "the certificate had expired", [str([line])], str([line]),
                          code) is None


def test_not_found_right_after_a_block_that_failed_is_sent_back():
    # The real 1.5B model's block failed (`'list' object has no attribute 'split'`); it answered not-found.
    failed = "[block 1 of 1: error]\n[error]\nTraceback (most recent call last):\nAttributeError: 'list' object"
    note = sent_back_note("Which product sold best?", "Not in the documents.", ["['a']", failed], "['a']", "")
    assert note.startswith("FINAL(Not in the documents.) did not end the run: your last block failed with an error")
    # the lines a block printed before the one that failed are offered (the real model printed the answer's
    # line, split it on a ";" it does not hold, and answered not-found)
    line = "['Winter timetable. From the first Monday of November the crossing leaves at 06:40.']"
    note = sent_back_note("From when does the winter timetable apply?", "Not in the documents.", [line, failed], line,
                          "", offer="FINAL('Winter timetable. From the first Monday of November ...')")
    assert note.endswith("FINAL('Winter timetable. From the first Monday of November ...')")
    assert "failed with an error" not in (sent_back_note("Which product sold best?", "Not in the documents.",
                                                         [failed, "[]"], "[]", "") or "")


def test_a_count_that_is_the_size_of_a_look_at_the_first_lines_is_sent_back():
    # Asked how many lines have the level ERROR, the real 1.5B model printed lines[:5] and answered 5.
    look = "lines = documents[0]['text'].splitlines()\nprint(lines[:5])"
    printed = "['# app log', '2024-08-13 00:01:36 INFO paid', '2024-08-13 00:02:38 INFO http 200 54ms']"
    note = sent_back_note("How many lines have the level ERROR?", "5", [printed], printed, look)
    assert note.startswith("FINAL(5) did not end the run: 5 is how many lines your look at the document printed")
    assert sent_back_note("How many lines have the level ERROR?", "95", ["95"], "95", look) is None


def test_a_count_computed_by_code_that_equals_the_size_of_a_look_is_kept():
    # len(reports) through FINAL_VAR (or FINAL(str(len(...))) run in a cell) is computed, not the look's size.
    look = "reports = [d for d in documents if d['path'].endswith('.md')]\nprint([d['path'] for d in reports[:4]])"
    printed = "['a.md', 'b.md', 'c.md', 'd.md']"
    assert sent_back_note("How many reports are there?", "4", [printed], printed, look, by_variable=True) is None
    assert sent_back_note("How many reports are there?", "4", [printed], printed, look, computed=True) is None
