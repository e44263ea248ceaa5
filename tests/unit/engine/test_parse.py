from core.engine.parse import FinalText, display_prose, parse_reply, truncate_middle


def test_repl_python_and_untagged_fences_run_in_order():
    reply = ("Let me look.\n```repl\nx = 1\n```\nthen\n```python\ny = 2\n```\n"
             "```\nz = 3\n```\n```json\n{\"not\": \"code\"}\n```\n```bash\nls\n```")
    parsed = parse_reply(reply)
    assert parsed.cells == ["x = 1", "y = 2", "z = 3"]
    assert parsed.final is None


def test_unclosed_fence_still_runs():
    parsed = parse_reply("```python\nprint(1)\nprint(2")
    assert parsed.cells == ["print(1)\nprint(2"]
    assert parsed.unclosed_fence


def test_final_on_its_own_line_outside_code():
    parsed = parse_reply("I found it.\nFINAL(The code is XYZ-789)")
    assert parsed.final.kind == "FINAL" and parsed.final.value == "The code is XYZ-789"


def test_final_with_quoted_string_is_unquoted():
    assert parse_reply('FINAL("42 apples")').final.value == "42 apples"
    assert parse_reply("  FINAL('a, b')").final.value == "a, b"


def test_final_spanning_lines():
    parsed = parse_reply("Done.\nFINAL(Line one\nline two\nline three)\n")
    assert parsed.final.value == "Line one\nline two\nline three"


def test_final_var_line():
    parsed = parse_reply("FINAL_VAR(report)")
    assert parsed.final.kind == "FINAL_VAR" and parsed.final.value == "report"
    assert parse_reply('FINAL_VAR("report")').final.value == "report"


def test_mentions_in_prose_never_count():
    for text in ("I will call FINAL later once I know more.",
                 "Next I use `FINAL(x)` when done.",
                 "When ready: FINAL(answer) is how I finish.",
                 "**FINAL(answer)**"):
        assert parse_reply(text).final is None, text


def test_final_inside_code_fence_is_not_a_text_final():
    parsed = parse_reply("```repl\nFINAL('from code')\n```")
    assert parsed.final is None
    assert parsed.cells == ["FINAL('from code')"]


def test_truncate_keeps_head_and_tail_and_says_what_was_cut():
    text = "A" * 30_000 + "MIDDLE" + "Z" * 30_000
    out = truncate_middle(text, 20_000)
    assert len(out) <= 20_000
    assert out.startswith("AAAA") and out.endswith("ZZZZ")
    assert "MIDDLE" not in out
    assert "characters cut" in out and "60,006" in out


def test_truncate_leaves_short_text_alone():
    assert truncate_middle("short", 20_000) == "short"


def test_a_stated_final_answer_is_found_in_a_fence_after_it_or_on_its_line():
    from core.engine.parse import stated_final
    assert stated_final("Counting.\nFinal answer:\n```\n2610\n```") == "2610"
    assert stated_final("**Final Answer**: Harbor Blend") == "Harbor Blend"
    assert stated_final("The final answer is 92.") == "92"
    assert stated_final("I will give the final answer later") is None   # not at the line's start
    assert stated_final("no such words here\n```repl\nprint(1)\n```") is None


def test_a_fence_opened_at_the_end_of_a_line_of_text_is_code():
    # The real 1.5B model's every reply of one run: nothing ran for seven turns.
    reply = "The card payments failed because of a timeout. ```repl\nprint(len(context))\n```\n"
    parsed = parse_reply(reply)
    assert parsed.cells == ["print(len(context))"] and "timeout." in parsed.prose
    assert display_prose(reply) == "The card payments failed because of a timeout."
    # A mention is not a fence: mid-sentence, without a runnable tag, or inside inline code.
    for text in ("Write code in ```repl blocks.\nx\n```\n", "Then: ```\nx\n```\n",
                 "Use `x` and ```text\nx\n```\n"):
        assert parse_reply(text).cells == [], text


def test_a_final_written_in_any_case_in_prose_is_a_final():
    # Asked for its answer, the real 1.5B model wrote Final('...') as text; the REPL takes the name too.
    assert parse_reply("Final('Gritting. Crews grit the deck below two degrees.')").final == \
        FinalText("FINAL", "Gritting. Crews grit the deck below two degrees.")
    assert parse_reply("final(42)").final == FinalText("FINAL", "42")
    assert parse_reply("Final_Var(total)").final == FinalText("FINAL_VAR", "total")
    assert parse_reply("I will call Final('x') later").final is None      # not at the line's start


def test_a_block_indented_as_a_whole_is_dedented():
    # The real 1.5B model wrote ` FINAL('...')` with one space before it: IndentationError.
    assert parse_reply("```repl\n FINAL('x')\n```").cells == ["FINAL('x')"]
    assert parse_reply("```repl\n  a = 1\n  if a:\n      print(a)\n```").cells == ["a = 1\nif a:\n    print(a)"]
    assert parse_reply("```repl\na = 1\n  print(a)\n```").cells == ["a = 1\n  print(a)"]   # its own error, kept
