"""What a small root is told after a search (core/engine/search_help.py): the searched phrases read
from its code, the lines that hold their words in any order, the code a short output names."""

from core.engine.search_help import empty_search_note, lines_holding, next_hop_note, searched_phrases

LOG = ("2024-03-01 08:00 Unit A ON TIME\n"
       "2024-03-02 09:10 Unit B FAULT brake worn\n"
       "2024-03-04 07:55 Unit B FAULT brake worn\n")
DOCS = [("notes.txt", "Some notes.\n"), ("log.txt", LOG)]
BLOCK = ('doc = [d for d in documents if d["path"].endswith("log.txt")][0]\n'
         'hits = [l for l in doc["text"].splitlines() if "brake fault" in l.lower() and "Unit B" in l]\n'
         'print(hits)')


def test_the_searched_phrases_are_the_literals_searched_for_not_the_document_names():
    assert searched_phrases(BLOCK) == ["brake fault", "Unit B"]
    assert searched_phrases('n = context.count("late")\ni = context.find("x y")') == ["late", "x y"]
    assert searched_phrases("print(") == []


def test_lines_holding_every_word_in_any_order_are_shown_first_in_document_order():
    note = empty_search_note(BLOCK, DOCS)
    assert note.startswith("Your search for 'brake fault', 'Unit B' matched no line.")
    assert "(brake, fault, unit)" in note
    assert "- documents[1] line 2: 2024-03-02 09:10 Unit B FAULT brake worn" in note.splitlines()[1]
    assert "documents[1] line 3:" in note
    assert "```repl\nFINAL('2024-03-02 09:10 Unit B FAULT brake worn')\n```" in note


def test_a_stem_finds_another_form_of_the_word_and_only_the_named_document_is_searched():
    assert lines_holding(["fault", "wo"], DOCS, [1])[0][1] == 2
    assert lines_holding(["note"], DOCS, [1]) == []            # notes.txt is not searched
    assert lines_holding(["note"], DOCS, [0, 1]) == [(0, 1, "Some notes.")]


def test_when_no_line_holds_all_the_words_the_note_says_so_and_how_to_say_not_found():
    block = 'hits = [l for l in documents[1]["text"].splitlines() if "brake price" in l.lower()]\nprint(hits)'
    note = empty_search_note(block, DOCS)
    assert "no line holds all of its words (brake, price)" in note
    assert note.endswith('reply with exactly this line:\nFINAL("Not in the documents.")')   # a line to copy


def test_one_word_searched_gets_no_note():
    assert empty_search_note('print([l for l in context.splitlines() if "late" in l])', DOCS) is None


def test_a_short_output_naming_one_code_the_question_does_not_offers_the_search_for_it():
    note = next_hop_note("Which depot keeps the unit that Ann Lee drives?", 'print([l for l in x if "Ann Lee" in l])',
                         "['Ann Lee drives unit TR-88.']")
    assert note.startswith("That output names TR-88, which the question does not.")
    assert "if 'TR-88' in line]" in note


def test_no_next_hop_for_a_code_the_question_names_two_codes_or_a_long_output():
    code = 'print([l for l in x if "Ann" in l])'
    assert next_hop_note("Where is TR-88 kept?", code, "['Ann Lee drives unit TR-88.']") is None
    assert next_hop_note("Who is Ann?", code, "['Ann drives TR-88 and TR-89.']") is None
    assert next_hop_note("Who is Ann?", code, "\n".join(f"Ann drives TR-{i}" for i in range(10, 15))) is None
    assert next_hop_note("Who is Ann?", code, "['Ann parks behind the sheds.']") is None


def test_a_document_taken_from_tables_that_has_none_is_named_with_the_block_that_reads_it():
    from core.engine.search_help import not_a_table_note
    block = 't = [t for t in tables if t["path"].endswith("log.txt")][0]\nprint(t["header"])'
    note = not_a_table_note(block, "[error]\nTraceback ...\nIndexError: list index out of range", DOCS)
    assert note.startswith("`tables` holds no table of log.txt: it is not a CSV or TSV file.")
    assert 'if d["path"].endswith(\'log.txt\')][0]' in note
    assert not_a_table_note(block, "[error]\nKeyError: 'x'", DOCS) is None
    assert not_a_table_note('t = tables[0]', "IndexError", DOCS) is None


def test_a_document_picked_by_a_name_none_has_is_told_with_the_names_there_are():
    from core.engine.search_help import no_such_document_note
    block = 'doc = [d for d in documents if d["path"].endswith("reports/2023-Q1.md")][0]'
    note = no_such_document_note(block, "[error]\nIndexError: list index out of range", DOCS)
    assert note.startswith("No document's name ends with 'reports/2023-Q1.md'. The documents are: notes.txt, log.txt.")
    assert "if 'word' in line.lower()]" in note                 # the block searched nothing
    # what the block searched for, one term of it, searched in every document
    searched = block + "\nprint([l for l in doc['text'].splitlines() if 'Revenue for the quarter was $371,822' in l])"
    note = no_such_document_note(searched, "IndexError", DOCS)
    assert "if '371,822' in line.lower()]" in note
    note = no_such_document_note(block + "\nprint([l for l in doc['text'].splitlines() if 'Gritting rule' in l])",
                                 "IndexError", DOCS)
    assert "if 'gritting' in line.lower()]" in note
    assert no_such_document_note(block.replace("reports/2023-Q1.md", "log.txt"), "IndexError", DOCS) is None
    assert no_such_document_note(block, "KeyError", DOCS) is None


def test_a_table_read_from_documents_is_shown_the_block_that_takes_it_from_tables():
    from core.engine.search_help import table_in_documents_note
    docs = [("fares.csv", "month,n\n2024-01,3\n"), ("memo.txt", "x\n")]
    block = 'doc = [d for d in documents if d["path"].endswith("fares.csv")][0]\ncol = doc["header"].index("n")'
    note = table_in_documents_note(block, "[error]\nKeyError: 'header'", docs)
    assert note.startswith('A document in `documents` has only "path" and "text".')
    assert "if t[\"path\"].endswith('fares.csv')][0]" in note
    assert table_in_documents_note("doc = documents[0]\nprint(doc['rows'])", "KeyError: 'rows'", docs)
    assert table_in_documents_note(block, "[error]\nKeyError: 'x'", docs) is None
    assert table_in_documents_note(block, "KeyError: 'header'", [("memo.txt", "x")]) is None


def test_no_next_hop_after_a_look_at_a_documents_first_lines():
    # The real 1.5B model, asked to list a registry's vessels, printed its first three lines, was
    # offered the search for the one code they named, and answered with the lines that code is on.
    look = 'doc = documents[1]\nprint(doc["text"].splitlines()[:3])'
    printed = "['VESSEL REGISTRY', '', 'VX-201: MV Tern, home port Kelp Bay.']"
    assert next_hop_note("List the vessel names in vessel_registry.txt.", look, printed) is None
    search = 'print([l for l in documents[0]["text"].splitlines() if "Kessel" in l])'
    assert next_hop_note("Which port is Kessel's vessel from?", search, "['Kessel commands VX-201.']")


def test_a_search_that_matched_only_a_tables_header_is_shown_the_column_block():
    from core.engine.search_help import header_only_note
    docs = [("memo.txt", "Memo.\n"), ("data/fares.csv", "month,route,passengers\n2024-01,North,10\n")]
    code = 'doc = documents[1]\nprint([l for l in doc["text"].splitlines() if "passengers" in l.lower()])'
    note = header_only_note(code, "['month,route,passengers']", docs)
    assert note.startswith("Your search matched only the header line of fares.csv: passengers is a column's name")
    assert "col = t[\"header\"].index('passengers')" in note and "endswith('fares.csv')" in note
    assert header_only_note(code, "['2024-01,North,10']", docs) is None                      # a row: no note
    assert header_only_note(code.replace("passengers", "month,route"), "['month,route,passengers']", docs) is None


def test_three_different_searches_that_found_nothing_offer_the_not_found_line():
    from core.engine.search_help import nothing_found_note
    searched = []
    block = 'print([l for l in documents[0]["text"].splitlines() if "{}" in l.lower()])'
    assert nothing_found_note(searched, block.format("child's single ticket")) is None
    assert nothing_found_note(searched, block.format("child")) is None
    assert nothing_found_note(searched, block.format("Child")) is None            # the same phrase again
    note = nothing_found_note(searched, block.format("ticket"))
    assert note.startswith("Your searches for \"child's single ticket\", 'child', 'ticket' each matched no line.")
    assert '\nFINAL("Not in the documents.")\n' in note
