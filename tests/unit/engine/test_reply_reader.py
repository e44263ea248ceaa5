"""The rules of reading a root reply only as far as it is useful (core/engine/reply_reader.py),
fed in small pieces as a stream delivers them."""

from core.engine.reply_reader import AFTER_BLOCK_CHARS, ReplyReader, describe


def feed(text: str, size: int = 7, **kw) -> ReplyReader:
    reader = ReplyReader(**kw)
    for start in range(0, len(text), size):
        if reader.feed(text[start:start + size]):
            break
    return reader


BLOCK = "Let me look.\n```repl\nprint(context[:200])\n```\n"


def test_a_reply_that_ends_normally_is_not_cut():
    reader = feed(BLOCK + "This prints the start of the documents.")
    assert reader.cut is None and reader.kept.endswith("documents.")


def test_text_after_the_last_block_is_cut_at_the_closing_fence():
    # A small model inventing the block's output after it (what it "expects" to see)
    invented = "Output:\n" + "".join(f"line {i}: something it made up\n" for i in range(40))
    reader = feed(BLOCK + invented)
    assert reader.cut.reason == "block" and reader.kept == BLOCK
    assert reader.cut.received_chars <= len(BLOCK) + AFTER_BLOCK_CHARS + 40


def test_the_prompt_after_a_block_repeated_thousands_of_times_is_cut():
    reader = feed(BLOCK + ">>> " * 4000, size=16)      # issue 25: 17,164 characters of this
    assert reader.kept == BLOCK and reader.cut.received_chars < 1_000


def test_repetition_without_any_block_is_cut_where_it_began():
    reader = feed("I need to think about this. " + "the answer is " * 500)
    assert reader.cut.reason == "repetition" and reader.cut.piece.strip() == "the answer is"
    assert reader.kept.rstrip() == "I need to think about this."


def test_a_block_calling_final_ends_the_reading_even_lowercase():
    five = "".join(f"```python\nfinal('guess {i}')\n```\n" for i in range(5))
    reader = feed(five)
    assert reader.cut.reason == "final" and reader.kept == "```python\nfinal('guess 0')\n```\n"


def test_a_block_calling_capitalised_final_ends_the_reading():
    reply = "```repl\nFinal('no idea')\n```\nExplanation: " + "I looked at it. " * 40
    reader = feed(reply)
    assert reader.cut.reason == "final" and reader.kept == "```repl\nFinal('no idea')\n```\n"


def test_a_final_line_outside_code_is_read_to_its_closing_parenthesis():
    reply = BLOCK + "FINAL(The total is\n42 items)\nI hope this helps! " + "More text. " * 50
    reader = feed(reply)
    assert reader.cut.reason == "final" and reader.kept == BLOCK + "FINAL(The total is\n42 items)\n"


def test_prose_between_blocks_keeps_the_next_block():
    reply = BLOCK + "Now count the lines.\n```repl\nprint(len(context.splitlines()))\n```\n"
    reader = feed(reply)
    assert reader.cut is None


def test_one_block_per_turn_stops_at_the_first_closing_fence():
    reply = BLOCK + "Now count.\n```repl\nprint(2)\n```\n"
    assert feed(reply, one_block=True).kept == BLOCK
    assert feed(reply).kept == reply


def test_a_mention_of_final_in_prose_or_a_text_fence_does_not_stop():
    reply = ("I will call FINAL(x) when done.\n```text\nFINAL(not code)\n```\n" + BLOCK)
    assert feed(reply).cut is None


def test_a_retry_starts_over():
    reader = feed(BLOCK + ">>> " * 300)
    reader.reset()
    assert reader.cut is None and not reader.feed("Hello")


def test_describe():
    cut = {"reason": "block", "tokens": 1230, "max_tokens": 8192}
    assert describe(cut) == "reply cut after its code block: 1,230 of up to 8,192 tokens"


def test_inside_code_a_longer_run_is_needed():
    literal = "```repl\nline = '" + "=" * 600 + "'\nprint(line)\n```\n"
    assert feed(literal).cut is None                       # 600 '=' in a literal: not cut
    assert feed("```repl\nx = [" + "0, " * 1000).cut.reason == "repetition"


def test_a_fence_opened_at_the_end_of_a_line_of_text_is_read_as_a_block():
    reply = "The payments failed. ```repl\nprint(1)\n```\nThe output is 1. " + "More words. " * 60
    reader = feed(reply, one_block=True)
    assert reader.cut.reason == "block" and reader.kept == "The payments failed. ```repl\nprint(1)\n```\n"
