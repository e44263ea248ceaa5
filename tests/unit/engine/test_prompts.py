from core.engine import prompts


def test_system_prompt_depends_on_depth():
    none = prompts.system_prompt(can_llm=False, can_rlm=False, model="openai/gpt-4o")
    one = prompts.system_prompt(can_llm=True, can_rlm=False, model="openai/gpt-4o")
    two = prompts.system_prompt(can_llm=True, can_rlm=True, model="openai/gpt-4o")
    assert "switched off" in none and "llm_query_batched(prompts)" not in none
    assert "llm_query_batched(prompts)" in one and "nested RLM" not in one
    assert "nested RLM" in two
    for text in (none, one, two):
        assert "$" + "subcalls" not in text and "FINAL_VAR" in text and "```repl" in text


def test_model_notes_match_by_pattern_with_and_without_provider():
    assert any("batch" in n for n in prompts.model_notes("openai/qwen2.5-coder-1.5b"))
    assert prompts.model_notes("openai/gpt-4o") == []
    notes = prompts.model_notes("anthropic/claude-x", {"claude-*": "Be terse.", "gpt-*": "no"})
    assert notes == ["Be terse."]


def test_first_turn_shows_metadata_not_the_documents():
    docs = [(f"doc{i}.txt", 1000 + i) for i in range(25)]
    text = prompts.first_turn("What is the total?", docs, prefix="=== doc0.txt ===\n" + "x" * 5000)
    assert "25 documents" in text and "What is the total?" in text
    assert "doc9.txt" in text and "doc10.txt" not in text and "15 more" in text
    assert "x" * 600 not in text


def test_a_small_model_gets_the_short_prompt_with_examples_of_several_kinds():
    small = prompts.system_prompt(can_llm=True, can_rlm=False, model="openai/qwen2.5-coder-1.5b",
                                  user_notes={"*qwen*": "Answer in French."})
    full = prompts.system_prompt(can_llm=True, can_rlm=False, model="openai/qwen2.5-coder-7b")
    assert len(small) < len(full) * 0.7
    assert "never call open()" in small and "llm_query(prompt)" in small
    # examples of several kinds of answer: a passage's words, items, a computed number
    assert 'FINAL(" ".join(hits))' in small and 'FINAL(", ".join(cities))' in small and "sum(values)" in small
    assert "llm_query_batched" not in small and "$" not in small
    assert small.endswith("Answer in French.")                 # the user's note, not the built-in ones
    assert "never call open()" not in full and "llm_query_batched" in full
    assert any("batch" in n for n in prompts.model_notes("openai/qwen2.5-coder-7b"))
    code_only = prompts.system_prompt(can_llm=False, can_rlm=False, model="ollama/llama3.2:3b")
    assert "llm_query" not in code_only and "never call open()" in code_only
    assert "never call open()" not in prompts.system_prompt(can_llm=True, can_rlm=False, model="openai/gpt-4o")


def test_no_prompt_names_what_the_sample_question_set_asks():
    # The shipped question set measures the prompts (docs/fitness.md); a prompt that mentions its
    # documents or the values it asks for would measure the prompt's author instead.
    from core.samples import samples_dir
    words = ("webshop", "ERROR", "card payment", "certificate", "revenue_usd", "Harbor", "371,822", "sales.csv")
    for path in sorted(prompts.prompts_dir().rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        assert not [w for w in words if w in text], path.name
    assert (samples_dir() / "eval_questions.jsonl").read_text().count("webshop.log") == 2


def test_the_value_an_offer_note_offers():
    assert prompts.offered_value(["Your last block printed 30. If 30 answers the question, reply with exactly "
                                  "this line and nothing else:\nFINAL('30')\nIf it does not, write one block."]) == "30"
    assert prompts.offered_value(['a note\nFINAL("113917")', "no offer here"]) == "113917"
    assert prompts.offered_value(['answer with FINAL("Not in the documents.") when none']) is None  # advice, not an offer
    assert prompts.offered_value(["FINAL(hits)"]) is None                                        # not a literal


def test_a_small_models_table_examples_only_when_a_table_is_among_the_documents():
    # The real 1.5B model, asked to count a log's CANCELLED lines, copied the table example.
    with_tables = prompts.system_prompt(can_llm=True, can_rlm=False, model="openai/qwen2.5-coder-1.5b")
    without = prompts.system_prompt(can_llm=True, can_rlm=False, model="openai/qwen2.5-coder-1.5b", tables=False)
    for text in ("`tables`: CSV/TSV files already parsed", 'tables if t["path"].endswith("orders.csv")'):
        assert text in with_tables and text not in without
    assert "$" not in with_tables and "$" not in without
    assert "Which cities are listed" in without and "letter say about parking" in without


def test_which_documents_hold_tables():
    class Doc:
        def __init__(self, path, tables=None):
            self.path, self.tables = path, tables
    assert prompts.has_tables([Doc("log.txt"), Doc("fares.CSV")])
    assert prompts.has_tables([Doc("report.pdf", tables=[{"header": ["a"]}])])
    assert not prompts.has_tables([Doc("log.txt"), Doc("memo.md", tables=[])])


def test_a_list_question_is_offered_the_first_part_of_every_printed_line():
    # The real 1.5B model printed the three lines naming the inspectors asked for, was offered the one
    # line holding most words of the question, and answered with that one inspector.
    lines = [f"Inspector: {name}. Result: passed. The harbour office keeps its ledgers in the back room, "
             "beside the tide tables and a kettle." for name in ("Elof Varn", "Birger Lamm", "Dagny Strand")]
    offer = prompts.last_output(str(lines), 400, "Which inspectors appear in the 2024 report?", whole=True)
    assert offer.splitlines()[1] == "FINAL('Inspector: Elof Varn; Inspector: Birger Lamm; Inspector: Dagny Strand')"
    single = prompts.last_output(str(lines), 400, "Which inspector signed first?", whole=True)   # the whole lines
    assert "Elof Varn. Result: passed." in single and "Elof Varn; Inspector" not in single
    # a first part that names no one ("In those years"): the whole lines when they fit, else nothing
    unnamed = [f"In those years, {name} kept the light." for name in ("Anders Rood", "Inga Haukland")]
    offer = prompts.last_output(str(unnamed), 400, "Which keepers served the light?")
    assert offer.splitlines()[1] == "FINAL('In those years, Anders Rood kept the light.; In those years, " \
                                    "Inga Haukland kept the light.')"
    assert prompts.last_output(str([u + " " + "x" * 300 for u in unnamed]), 400, "Which keepers served?") is None


def test_a_small_models_first_turn_says_which_documents_are_tables():
    # Asked for a column's total, the real 1.5B model searched the CSV's text for the column's name.
    text = prompts.first_turn_small("What is the total of the price column?",
                                    [("orders.csv", "date,customer,price\n2024-01-02,Acme,12.5\n"), ("memo.txt", "Hi.\n")])
    assert "- documents[0]: orders.csv (41 chars; a table, its rows also in `tables`):" in text
    assert "- documents[1]: memo.txt (4 chars):" in text
