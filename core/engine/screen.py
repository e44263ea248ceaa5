"""Blocks the engine will not run, and why (told to the root as that block's output).

Small models copy what they are shown: they write an imagined traceback, our block
markers or the turn counter into a ```repl fence, or paste an earlier output back as
code. Such a block would only fail with a SyntaxError that tells the model nothing;
instead it is not run, and the root is told plainly that it copied the REPL's feedback.
A block that parses as Python is not refused for its text (a marker inside a string
literal is fine), except for a line that is only one of our block markers (`[stderr]`
parses as a list, but is never meant as code) and code that rebinds `context` or `documents`
at the top level (`context = "..."`, `for documents in ...`, `import x as context`,
`del context`) is refused before it runs, because every later step would work on the
wrong text. The worker still restores both names after every cell as a second guard.

    refusal = screen_block(code, earlier_outputs)     # None: run it
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Sequence

PROTECTED = ("context", "documents")

# Lines that only ever come from the engine's feedback (old and current formats).
_FEEDBACK = [
    (re.compile(r"^\s*Traceback \(most recent call last\):"), "a Python traceback"),
    (re.compile(r"^\s*File \"<cell \d+>\", line \d+"), "a line of a traceback"),
    (re.compile(r"^\s*\[REPL: "), "a note of the REPL"),
    (re.compile(r"This was turn \d+ of at most \d+"), "the turn counter of the REPL's feedback"),
    (re.compile(r"^\s*REPL output for your turn \d+"), "the heading of the REPL's feedback"),
    (re.compile(r"^\s*Nothing ran: your reply had no code block"), "a note of the REPL's feedback"),
]
# Whole-line markers of the feedback, refused even where they happen to parse (`[stderr]`).
_MARKERS = [re.compile(r"^\s*\[(cell output|cell \d+ of \d+|stderr|SyntaxError|error|no output)\]\s*$"),
            re.compile(r"^\s*\[block \d+ of \d+: [^\]]*\]\s*$")]
_FEEDBACK += [(pattern, "a block marker of the REPL's feedback") for pattern in _MARKERS]
MIN_COPIED_CHARS = 16


@dataclass(frozen=True)
class Refusal:
    reason: str            # what the root is told (the block's output)
    kind: str              # "feedback" | "output" | "protected"


def _parse(code: str) -> ast.Module:
    """ast.parse, again when CPython 3.11 trips on another thread's parse: its AST
    conversion keeps one recursion counter per interpreter, so a traceback formatted
    (3.11's tracebacks parse the failing line) in another thread at the same moment can
    raise "SystemError: AST constructor recursion depth mismatch" here (CPython gh-106905)."""
    for _ in range(4):
        try:
            return ast.parse(code)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc):
                raise
    return ast.parse(code)


def screen_block(code: str, earlier_outputs: Sequence[str] = ()) -> Refusal | None:
    try:
        tree = _parse(code)
    except (SyntaxError, ValueError):
        return _copied(code, earlier_outputs)
    except (RecursionError, MemoryError, SystemError):
        return None                    # the worker reports absurd nesting itself
    marker = _marker_line(code)        # `[stderr]` alone on a line parses, but is never meant as code
    if marker is not None:
        return marker
    hit = _protected_binding(tree)
    if hit is None:
        return None
    name, line = hit
    return Refusal(
        f"This block was not run: it rebinds `{name}` (line {line}). `context` and `documents` hold the "
        "documents and must stay as they are. Put your own values under new names, e.g. "
        "`text = context[:5000]` or `rows = documents[0][\"text\"].splitlines()`.", "protected")


def _feedback(number: int, line: str, what: str) -> Refusal:
    return Refusal(
        f"This block was not run: line {number} (`{line.strip()[:80]}`) is {what}, which the "
        "REPL writes to you after your code has run. Write only Python in a ```repl block and "
        "stop after its closing ```; the REPL then shows you the real output.", "feedback")


def _marker_line(code: str) -> Refusal | None:
    for number, line in enumerate(code.splitlines(), start=1):
        for pattern in _MARKERS:
            if pattern.search(line):
                return _feedback(number, line, "a block marker of the REPL's feedback")
    return None


def _copied(code: str, earlier_outputs: Sequence[str]) -> Refusal | None:
    lines = code.splitlines()
    for number, line in enumerate(lines, start=1):
        for pattern, what in _FEEDBACK:
            if pattern.search(line):
                return _feedback(number, line, what)
    seen = {s.strip() for out in earlier_outputs for s in out.splitlines() if len(s.strip()) >= MIN_COPIED_CHARS}
    for number, line in enumerate(lines, start=1):
        if line.strip() in seen:
            return Refusal(
                f"This block was not run: line {number} (`{line.strip()[:80]}`) repeats output the REPL "
                "showed you earlier; output is not code. To use a value from it, compute it again in "
                "code or write it as a Python string.", "output")
    return None


class _Bindings(ast.NodeVisitor):
    """Top-level bindings of the protected names (function and class bodies,
    lambdas and comprehensions have their own scope and are skipped)."""

    def __init__(self) -> None:
        self.hit: tuple[str, int] | None = None

    def _mark(self, name: str | None, node: ast.AST) -> None:
        if self.hit is None and name in PROTECTED:
            self.hit = (name, getattr(node, "lineno", 0))

    def visit_Name(self, node: ast.Name) -> None:   # noqa: N802
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._mark(node.id, node)

    def visit_alias(self, node: ast.alias) -> None:
        self._mark(node.asname or node.name.split(".")[0], node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:   # noqa: N802
        self._mark(node.name, node)
        self.generic_visit(node)

    def _scope(self, node: ast.AST) -> None:
        self._mark(getattr(node, "name", None), node)
        for decorator in getattr(node, "decorator_list", []):
            self.visit(decorator)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope   # noqa: N815

    def _skip(self, node: ast.AST) -> None:
        return None

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _skip   # noqa: N815


def _protected_binding(tree: ast.AST) -> tuple[str, int] | None:
    finder = _Bindings()
    finder.visit(tree)
    return finder.hit
