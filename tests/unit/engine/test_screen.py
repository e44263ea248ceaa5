"""Tolerant fences and the blocks the engine refuses to run (core/engine/parse.py, screen.py)."""

from core.engine.parse import parse_reply
from core.engine.screen import screen_block


def test_bare_fence_with_repl_on_its_first_line_drops_that_line():
    reply = "Let me look.\n```\nrepl\nprint(len(context))\n```"
    assert parse_reply(reply).cells == ["print(len(context))"]


def test_bare_fence_with_python_on_its_first_line_drops_that_line():
    for tag_line in ("python", "Python", "  py  ", "python3"):
        reply = f"```\n{tag_line}\nx = 1\nprint(x)\n```"
        assert parse_reply(reply).cells == ["x = 1\nprint(x)"], tag_line


def test_tag_line_is_kept_when_the_fence_has_a_tag_or_the_line_is_code():
    assert parse_reply("```repl\npython\n```").cells == ["python"]        # a tagged fence is as written
    assert parse_reply("```\nrepl_count = 3\n```").cells == ["repl_count = 3"]


def test_an_open_bare_fence_with_the_tag_line_is_tolerated_too():
    assert parse_reply("```\nrepl\nprint(1)").cells == ["print(1)"]


def test_a_copied_traceback_is_refused_with_the_reason():
    code = ("x = context.count('ERROR')\nTraceback (most recent call last):\n"
            "  File \"<cell 3>\", line 1, in <module>\nNameError: name 'y' is not defined")
    refusal = screen_block(code)
    assert refusal.kind == "feedback"
    assert "line 2" in refusal.reason and "traceback" in refusal.reason


def test_copied_block_markers_and_the_turn_counter_are_refused():
    for line in ("[cell output]", "[cell 2 of 3]", "[block 1 of 2: ran]", "[stderr]",
                 "This was turn 3 of at most 6. Continue with code, or finish with FINAL / FINAL_VAR.",
                 "REPL output for your turn 2 (you have at most 6 turns)."):
        refusal = screen_block(f"print(1)\n{line}\n")
        assert refusal is not None and refusal.kind == "feedback", line


def test_an_earlier_output_pasted_as_code_is_refused():
    earlier = ["[block 1 of 1: ran]\n2024-08-14 09:42:07 ERROR payments order=48486 card payment failed"]
    code = "2024-08-14 09:42:07 ERROR payments order=48486 card payment failed\nprint(1)"
    refusal = screen_block(code, earlier)
    assert refusal.kind == "output" and "line 1" in refusal.reason


def test_valid_python_is_never_refused_for_its_text():
    assert screen_block('print("[cell output]")\nmsg = "Traceback (most recent call last):"') is None
    assert screen_block("print(len(context))", ["print(len(context))  # an earlier output line"]) is None
    assert screen_block("if x\n    print(x)") is None          # a plain syntax error: the worker reports it


def test_rebinding_context_or_documents_is_refused():
    for code, name in (("context = 'SECRET_CODE=1'\nprint(context)", "context"),
                       ("x = 1\ndocuments += []", "documents"),
                       ("for context in ['a']:\n    pass", "context"),
                       ("import json as context", "context"),
                       ("del documents", "documents"),
                       ("with open('x') as context:\n    pass", "context"),
                       ("try:\n    pass\nexcept Exception as context:\n    pass", "context"),
                       ("def context():\n    return 1", "context")):
        refusal = screen_block(code)
        assert refusal is not None and refusal.kind == "protected", code
        assert f"`{name}`" in refusal.reason


def test_local_names_called_context_are_fine():
    assert screen_block("def f(context):\n    context = context.lower()\n    return context\nprint(f(context))") is None
    assert screen_block("lines = [context for context in documents]\nsize = (lambda context: len(context))('x')") is None
    assert screen_block("text = context\ntext = text.lower()") is None
