"""Question sets and checkers (core/evaluation)."""

import json

import pytest

from core.evaluation import Question, QuestionSetError, check, check_with_judge, load_question_set
from core.evaluation.runner import PairError, parse_pair


def q(checker, expected, **kw):
    return Question(id="q", question="?", expected=expected, checker=checker, **kw)


def test_exact_ignores_case_space_quotes_and_a_final_stop():
    assert check(q("exact", "Harbor Blend"), '  "harbor   blend." ').correct
    assert not check(q("exact", "Harbor Blend"), "Harbor Blend and Dark Pier").correct


def test_number_finds_the_value_with_separators_and_tolerance():
    assert check(q("number", 92), "There were 92 failed card payments.").correct
    assert check(q("number", 1416963.5, tolerance=1), "Total: $1,416,963.50").correct
    assert not check(q("number", 92), "about 60 orders").correct
    assert check(q("number", 92), "about 60 orders").detail == "expected 92, found 60"
    assert not check(q("number", 5), "order=48105").correct        # a number inside a word is not one


def test_contains_needs_every_text_and_regex_searches():
    assert check(q("contains", ["certificate", "expired"]), "The Certificate had EXPIRED").correct
    assert check(q("contains", ["certificate", "expired"]), "certificate").detail == "missing 'expired'"
    assert check(q("regex", r"2024[- ]?Q3"), "It is the 2024-Q3 report").correct
    assert not check(q("regex", r"2024[- ]?Q3"), "Q2").correct


def test_no_answer_is_always_wrong():
    for checker, expected in (("exact", "x"), ("number", 1), ("contains", "x"), ("regex", ".")):
        assert check(q(checker, expected), None).detail == "no answer"
        assert not check(q(checker, expected), "  ").correct


async def test_the_judge_gets_question_expected_and_answer_and_its_verdict_counts():
    seen = []

    async def judge(messages):
        seen.append(messages[0]["content"])
        return "CORRECT", 0.001

    result = await check_with_judge(q("judge", "the certificate expired"), "an expired TLS cert", judge)
    assert result.correct and result.judge_cost_usd == 0.001
    assert "the certificate expired" in seen[0] and "an expired TLS cert" in seen[0]
    with pytest.raises(ValueError, match="judge model"):
        await check_with_judge(q("judge", "x"), "y", None)


@pytest.mark.parametrize("line, message", [
    ('{"question": "a?"}', "line 1: 'expected' is missing"),
    ('{"expected": 1}', "line 1: 'question' must be a non-empty text"),
    ('{"question": "a?", "expected": "x", "checker": "number"}', "checker 'number' needs a number"),
    ('{"question": "a?", "expected": "(", "checker": "regex"}', "not a valid regular expression"),
    ('{"question": "a?", "expected": 1, "checker": "fuzzy"}', "unknown checker 'fuzzy'; use one of exact"),
    ('[1, 2]', "expected a JSON object, got list"),
    ('{"question": "a?", ', "line 1: not a JSON object"),
])
def test_bad_lines_are_refused_with_file_and_line(tmp_path, line, message):
    path = tmp_path / "set.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(QuestionSetError, match="set.jsonl") as info:
        load_question_set(path)
    assert message in str(info.value)


def test_ids_default_to_the_position_and_must_be_unique(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("# a comment\n\n" + json.dumps({"question": "a?", "expected": 1}) + "\n"
                    + json.dumps({"id": "b", "question": "b?", "expected": 2}) + "\n")
    assert [x.id for x in load_question_set(path).questions] == ["q1", "b"]
    path.write_text(json.dumps({"id": "b", "question": "a?", "expected": 1}) + "\n"
                    + json.dumps({"id": "b", "question": "b?", "expected": 2}) + "\n")
    with pytest.raises(QuestionSetError, match="line 2: the id 'b' is used twice"):
        load_question_set(path)


def test_pairs_split_at_the_colon_that_starts_the_sub_model():
    assert parse_pair("openai/gpt-4o:openai/gpt-4o-mini").label == "openai/gpt-4o:openai/gpt-4o-mini"
    p = parse_pair("ollama/qwen2.5:7b:ollama/qwen2.5:1.5b")
    assert (p.root, p.sub) == ("ollama/qwen2.5:7b", "ollama/qwen2.5:1.5b")
    assert parse_pair("openai/gpt-4o").sub == "openai/gpt-4o"
    with pytest.raises(PairError):
        parse_pair("a:b:c")


def test_contains_with_absent_texts_marks_a_list_that_names_one_too_many(tmp_path):
    # "Which inspectors of 2024 do not appear in 2023?" answered with all three of 2024: wrong.
    question = q("contains", ["Dagny Strand", "Elof Varn"], absent=("Birger Lamm",))
    assert check(question, "Dagny Strand, Elof Varn").correct
    assert check(question, "Elof Varn; Birger Lamm; Dagny Strand").detail == "also names 'Birger Lamm'"
    assert check(question, "Birger Lamm").detail == "missing 'Dagny Strand', 'Elof Varn'"
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"question": "?", "expected": ["a"], "checker": "contains", "absent": ["b"]}) + "\n"
                    + json.dumps({"question": "?", "expected": 1, "checker": "number", "absent": ["b"]}) + "\n")
    with pytest.raises(QuestionSetError, match="line 2: 'absent' must be a list of texts, with the checker 'contains'"):
        load_question_set(path)
    path.write_text(json.dumps({"question": "?", "expected": ["a"], "checker": "contains", "absent": ["b"]}) + "\n")
    assert load_question_set(path).questions[0].absent == ("b",)
