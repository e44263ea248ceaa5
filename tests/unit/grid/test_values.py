"""Typed cell values: parsed when the answer holds one, flagged (never guessed) when not."""

import pytest

from core.grid.values import display, parse_value


@pytest.mark.parametrize("answer, value, flag", [
    ("2024-03-05 [doc:a.txt:line 3]", "2024-03-05", None),
    ("5 March 2024", "2024-03-05", None),
    ("March 5th, 2024", "2024-03-05", None),
    ("2024/3/5", "2024-03-05", None),
    ("25/12/2024", "2024-12-25", None),
    ("early spring", None, "unparseable date: 'early spring'"),
    ("2024-02-30", None, "unparseable date: '2024-02-30'"),
    ("03/05/2024", None, "ambiguous date 03/05/2024: day and month could be either"),
    ("2024-01-01 or 2024-06-01", "2024-01-01", "2 dates in the answer; the first is kept"),
    ("not stated", None, "not stated"),
])
def test_dates(answer, value, flag):
    parsed = parse_value("date", answer)
    assert (parsed.value, parsed.flag) == (value, flag)


@pytest.mark.parametrize("kind, answer, value, flag", [
    ("number", "$1,250,000 [doc:a.txt:line 2]", 1250000, None),
    ("number", "12.5%", 12.5, None),
    ("number", "twelve", None, "no number in the answer: 'twelve'"),
    ("yes/no", "Yes, clause 4 says so.", True, None),
    ("yes/no", "no", False, None),
    ("yes/no", "It depends", None, "not a yes or no: 'It depends'"),
    ("list", "- Acme\n- Globex [doc:a.txt:line 1]", ["Acme", "Globex"], None),
    ("list", "Acme; Globex", ["Acme", "Globex"], None),
    ("text", "Delaware law. [doc:a.txt:line 9]", "Delaware law.", None),
    ("text", "", None, "empty answer"),
])
def test_other_types(kind, answer, value, flag):
    parsed = parse_value(kind, answer)
    assert (parsed.value, parsed.flag) == (value, flag)


def test_an_excerpt_is_checked_word_for_word_against_the_document():
    doc = "Clause 9. The liability of either party\nshall not exceed the fees paid.\n"
    good = parse_value("excerpt", '"The liability of either party shall not exceed the fees paid." [doc:a:line 1]', doc)
    assert good.value == "The liability of either party shall not exceed the fees paid." and good.flag is None
    bad = parse_value("excerpt", '"Liability is unlimited."', doc)
    assert bad.value == "Liability is unlimited." and bad.flag == "the excerpt is not word for word in the document"


def test_display():
    assert [display(v) for v in (None, True, False, ["a", "b"], 3, "x")] == ["", "yes", "no", "a; b", "3", "x"]
