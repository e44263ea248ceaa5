"""The one fence grammar (core/fences.py): the parser, the fork's edit and the export
renderer read the same blocks out of the same text."""

from core.engine.parse import parse_reply
from core.exports.answer_render import shift_headings
from core.fences import Block, display_prose, replace_runnable, split_fences

INLINE = "I will count.```repl\nprint(len(context))\n```"


def test_an_inline_fence_is_a_block_with_its_text_as_prefix():
    pieces = split_fences(INLINE)
    assert pieces == [Block(marker="```", tag="repl", opening="```repl", body=("print(len(context))",),
                            closing="```", prefix="I will count.")]
    assert parse_reply(INLINE).cells == ["print(len(context))"]
    assert display_prose(INLINE) == "I will count."


def test_replacing_the_code_of_an_inline_fence_leaves_only_the_new_block():
    edited = replace_runnable(INLINE, "print(context[:100])")
    assert edited == "I will count.\n```repl\nprint(context[:100])\n```"
    parsed = parse_reply(edited)
    assert parsed.cells == ["print(context[:100])"] and "len(context)" not in edited


def test_replacing_keeps_other_blocks_and_drops_the_later_runnable_ones():
    reply = "Look.\n```python\nx = 1\n```\n```json\n{\"a\": 1}\n```\nthen\n```\ny = 2\n```\nend"
    edited = replace_runnable(reply, "z = 3\n")
    assert edited == "Look.\n```repl\nz = 3\n```\n```json\n{\"a\": 1}\n```\nthen\nend"
    assert parse_reply(edited).cells == ["z = 3"]


def test_replacing_in_a_reply_without_code_appends_the_block():
    assert replace_runnable("Only words.\n", "x = 1") == "Only words.\n```repl\nx = 1\n```"
    assert replace_runnable("", "x = 1") == "```repl\nx = 1\n```"


def test_an_unclosed_runnable_fence_is_replaced_too():
    edited = replace_runnable("Start.\n~~~~python\nprint(1", "print(2)")
    assert parse_reply(edited).cells == ["print(2)"] and "print(1" not in edited


def test_a_fence_closes_only_on_its_own_character_and_length():
    pieces = split_fences("````\n```\nstill inside\n````\nafter")
    assert isinstance(pieces[0], Block) and pieces[0].body == ("```", "still inside") and pieces[1] == "after"


def test_the_export_renderer_reads_markdown_fences_without_the_inline_rule():
    # an answer is Markdown: "text ```python" does not open a fence there, so the heading after it shifts
    assert shift_headings("see ```python\n# Heading") == "see ```python\n### Heading"
    assert shift_headings("~~~\n# code\n~~~\n# H") == "~~~\n# code\n~~~\n### H"
