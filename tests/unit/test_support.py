"""Answers checked against what the run read (core/support.py), on recorded runs."""

import json
from pathlib import Path

from core import events as ev
from core.ingest.citations import cited_passages
from core.support import SupportCorpus, answer_values, check, describe

RECORDED = Path(__file__).parents[1] / "fixtures" / "recorded"


def corpus_of(name: str) -> tuple[SupportCorpus, list]:
    events = [ev.from_dict(e) for e in json.loads((RECORDED / f"{name}.json").read_text())["events"]]
    corpus = SupportCorpus()
    for e in events:
        corpus.observe(e)
    return corpus, events


def test_the_recorded_answers_are_supported():
    for name, answer in (("sales", "Total sales in 2023 were 4.2 million euros."),
                         ("supplier", "Acme, 14 times."), ("penalties", "Clauses 4.2 and 9.")):
        corpus, events = corpus_of(name)
        assert events[-1].answer == answer
        result = corpus.check(answer)
        assert result.values and result.unsupported == [], name


def test_a_typed_value_that_no_output_holds_is_unsupported():
    # The sales run's sub-call said "about 4.2 million"; a root that types another figure made it up.
    corpus, _ = corpus_of("sales")
    made_up = "Total sales in 2023 were 5.7 million euros (invoice INV-2023-0042)."
    corpus.observe(ev.RootReplied(run_id="sales", text=f"```repl\nFINAL('{made_up}')\n```", input_tokens=1,
                                  output_tokens=1, cost_usd=0.0, duration_ms=1, model="m"))
    result = corpus.check(made_up)
    assert result.unsupported == ["5.7 million euros", "INV-2023-0042"]   # 2023 is in the question
    assert describe(result.unsupported) == "5.7 million euros, INV-2023-0042: not found in anything the run read"


def test_a_value_computed_by_code_is_supported_though_never_printed():
    # FINAL_VAR of a variable the code filled: the root never typed the value.
    read = ["[block 1 of 1: ran]\n(it printed nothing)"]
    written = ["```repl\nimport re\nanswer = re.search(r'CODE=(\\S+)', context).group(1)\nFINAL_VAR('answer')\n```"]
    assert check("QX-4471", read, written).unsupported == []
    assert check("QX-4471", read, written + ["FINAL(QX-4471)"]).unsupported == ["QX-4471"]


def test_issue_25s_made_up_answer():
    read = ["What is the value of SECRET_CODE in the log?", "=== app.log ===\n2024-03-01 INFO start\n",
            "[block 1 of 1: error]\nNameError: name 'final' is not defined"]
    answer = "The value of SECRET_CODE in the log is 12345."
    assert check(answer, read, [f"```python\nfinal('{answer}')\n```"]).unsupported == ["12345"]


def test_numbers_compare_as_numbers_and_quotes_as_names():
    assert answer_values('Revenue was 1,204 at "Acme Corp" [doc:a.txt:line 3], v2.3') == \
        ["Acme Corp", "1,204", "v2.3"]
    assert check("1,204 units", ["total 1204.0"], ["1,204 units"]).unsupported == []
    assert check('"acme  corp" won', ['Winner: Acme Corp'], ['"acme  corp" won']).unsupported == []
    assert check("Nothing to check here.", [], ["Nothing to check here."]).values == []


def test_a_cited_passage_supports_the_value():
    class Doc:
        path, text = "a.txt", "line one\nthe fee is 310 EUR\n"
    answer = "The fee is 310 EUR [doc:a.txt:line 2]."
    corpus = SupportCorpus("What is the fee?")
    corpus.written.append(answer)
    assert corpus.check(answer).unsupported == ["310 EUR"]
    assert corpus.check(answer, cited_passages(answer, [Doc()])).unsupported == []


def test_what_a_reply_typed_is_its_prose_and_its_codes_literals_not_the_numbers_code_computes_with():
    from core.support import typed_text
    reply = ("I will count.\n```repl\nrows = lines[:4]\nfor i in range(10):\n    pass\nx = 7\n"
             "print(round(3.14159, 2))\nFINAL('12 rows')\n```\nDone.")
    typed = typed_text(reply)
    assert "I will count." in typed and "Done." in typed and "12 rows" in typed and "7" in typed.split()
    assert "4" not in typed.split() and "10" not in typed.split() and "2" not in typed.split()
    assert typed_text("```repl\nprint(lines[:4]\n```").strip() == "print(lines[:4]"   # not Python: all of it
