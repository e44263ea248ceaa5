"""The lines a small root's first turn shows because they hold words of the question
(core/engine/question_lines.py)."""

from core.engine.question_lines import question_lines, question_words

LOG = "\n".join(["# shop log"] + [f"2024-05-0{i % 9 + 1} INFO order={i} paid method=card" for i in range(300)]
                + ["2024-05-09 ERROR order=900 card payment failed: timeout",
                   "2024-05-09 ERROR order=901 card payment failed: timeout",
                   "2024-05-09 ERROR order=902 card payment failed: timeout"])
NOTES = "Summary\nCard payments failed for an hour in May.\nRevenue was $48,210 this month."
DOCS = [("notes/may.txt", NOTES), ("shop.log", LOG)]


def test_words_are_stems_without_common_words_and_document_names():
    assert question_words("How many card payments failed in shop.log?", ["shop.log"]) == ["card", "paymen", "fail"]
    assert question_words("Which note gives revenue of $48,210?", []) == ["note", "reven", "48210"]


def test_the_named_document_is_searched_and_its_best_lines_come_first():
    found = question_lines("How many card payments failed in shop.log? Answer with a number.", DOCS)
    assert found == [(1, 302, "2024-05-09 ERROR order=900 card payment failed: timeout"),
                     (1, 303, "2024-05-09 ERROR order=901 card payment failed: timeout")]   # 2 per document


def test_a_rare_word_outweighs_common_ones_and_thousands_separators_are_ignored():
    found = question_lines("Which month had a revenue of $48210?", DOCS)
    assert found[0] == (0, 3, "Revenue was $48,210 this month.")


def test_no_words_no_lines():
    assert question_lines("Why?", DOCS) == [] and question_lines("zzzz qqqq", DOCS) == []
