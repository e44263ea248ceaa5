"""The FINAL line a small root is offered to copy from what its last block printed
(core/engine/prompts.py: last_output)."""

from core.engine.prompts import REPEATED_OUTPUT_CHARS, last_output

LINE = "2024-08-14 09:42:07 ERROR payments card payment failed: gateway TLS handshake failed (certificate has expired)"


def test_a_short_value_is_offered_as_it_was_printed():
    assert last_output("92\n") == ("Your last block printed 92. If 92 answers the question, reply with exactly this "
                                   "line and nothing else:\nFINAL('92')\nIf it does not, write one ```repl block.")
    assert last_output("a\nb") is None and last_output("") is None and last_output("x" * 101) is None


def test_a_printed_list_is_offered_as_its_items_or_its_first_line():
    assert last_output(str(["Birger Lamm", "Dagny Strand"]), REPEATED_OUTPUT_CHARS).startswith(
        "Your last block printed 2 items. If it answers the question")
    assert "\nFINAL('Birger Lamm; Dagny Strand')\n" in last_output(str(["Birger Lamm", "Dagny Strand"]))
    many = last_output(str([LINE] * 30), REPEATED_OUTPUT_CHARS)
    assert many.startswith("Your last block printed 30 lines; this one holds most words of the question.")
    assert f"\nFINAL({LINE!r})\n" in many
    memo = ["Winter timetable. From the first Monday the early crossing leaves at 06:40." + " x" * 100,
            "Gritting. Crews grit the deck before every crossing below two degrees." + " x" * 100,
            "Storm rule. A crossing is cancelled when the gust exceeds 45 knots." + " x" * 100]
    best = last_output(str(memo), REPEATED_OUTPUT_CHARS, "According to memo.txt, when is a crossing cancelled?")
    assert f"\nFINAL({memo[2]!r})\n" in best      # "crossing" and "cancelled", where the others hold one word
    one = last_output(str([LINE]), REPEATED_OUTPUT_CHARS)
    assert one.startswith("Your last block printed one line.") and f"FINAL({LINE!r})" in one
    assert last_output(str([LINE])) is None                       # longer than a short value
    assert last_output(str(["x" * 500]), REPEATED_OUTPUT_CHARS) is None
    assert "FINAL('[1, 2]')" in last_output("[1, 2]")          # not strings: offered as printed


def test_an_item_an_earlier_output_held_comes_after_the_new_ones():
    # A second hop: the first search printed the unit's line; the search for its code printed that
    # line again beside the one that answers.
    first = "Ann Lee drives unit TR-88 of the depot fleet." + " x" * 150
    answer = "TR-88: kept at depot North." + " x" * 150
    question = "Which depot keeps the unit that Ann Lee drives?"
    assert f"FINAL({first!r})" in last_output(str([first, answer]), REPEATED_OUTPUT_CHARS, question)
    offered = last_output(str([first, answer]), REPEATED_OUTPUT_CHARS, question, seen=str([first]))
    assert f"FINAL({answer!r})" in offered
    assert f"FINAL({first!r})" in last_output(str([first]), REPEATED_OUTPUT_CHARS, question, seen=str([first]))


def test_whole_offers_only_the_whole_output():
    assert last_output(str([LINE] * 30), REPEATED_OUTPUT_CHARS, whole=True) is None
    assert "FINAL('Birger Lamm; Dagny Strand')" in last_output(str(["Birger Lamm", "Dagny Strand"]),
                                                                REPEATED_OUTPUT_CHARS, whole=True)
