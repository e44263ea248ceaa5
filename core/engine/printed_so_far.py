"""What a small root's blocks printed so far, each named by the document it read: shown when the
root is asked for its final answer in a short conversation (rlm.py: _asked), where its own replies
are left out. The real 1.5B model, asked which of two files recorded more failed inspections,
counted 4 in one and 3 in the other, then sent those two blocks in turn until the time cap; asked
for its answer with only the last output in view, it could not compare."""

from __future__ import annotations

import ast
import builtins
import re
from typing import Sequence

REPL_NAMES = frozenset({"documents", "context", "tables", "where", "llm_query", "llm_query_batched", "rlm_query",
                        "FINAL", "FINAL_VAR", "re", "io", "csv", "json", "math", "collections"})

SHOWN_BLOCKS = 4          # the most recent distinct blocks that printed something
OUTPUT_CHARS = 300        # of each block's output

_QUOTED = re.compile(r"""["']([^"'\n]{3,120})["']""")
_INDEXED = re.compile(r"documents\[(\d+)\]")


def documents_read(code: str, paths: Sequence[str]) -> list[str]:
    """The documents a block names: by a quoted part of a path (`d["path"].endswith("2023.md")`)
    or by index (`documents[1]`), in the order the documents are listed."""
    named = {int(i) for i in _INDEXED.findall(code) if int(i) < len(paths)}
    quoted = [q for q in _QUOTED.findall(code) if "." in q or "/" in q]
    named |= {i for i, path in enumerate(paths) if any(q in path for q in quoted)}
    return [paths[i] for i in sorted(named)]


def printed_so_far(blocks: Sequence[tuple[str, str]], paths: Sequence[str]) -> str:
    """Lines "- a block that read <document> printed: <output>" for the last SHOWN_BLOCKS distinct
    blocks (code, stdout) that printed something, oldest first; "" when fewer than two did."""
    seen: dict[str, str] = {}
    for code, stdout in blocks:
        if stdout.strip():
            seen.pop(code, None)
            seen[code] = stdout.strip()
    if len(seen) < 2:
        return ""
    lines = []
    for code, stdout in list(seen.items())[-SHOWN_BLOCKS:]:
        read = documents_read(code, paths)
        who = f"a block that read {', '.join(read)}" if read else "a block"
        shown = stdout if len(stdout) <= OUTPUT_CHARS else stdout[:OUTPUT_CHARS] + " [...]"
        lines.append(f"- {who} printed: {shown}")
    return "\n".join(lines)


def self_contained(blocks: Sequence[str]) -> bool:
    """The blocks read no name they did not set (but the REPL's own and Python's builtins), so running
    them again prints what they printed before: an earlier turn's blocks sent again (A, B, A) are then
    a repeat, not run again. `print(hits)` after a turn that changed `hits` is not."""
    try:
        trees = [ast.parse(block) for block in blocks]
    except SyntaxError:
        return False
    stored, loaded = set(), set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                (stored if isinstance(node.ctx, (ast.Store, ast.Del)) else loaded).add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stored.add(node.name)
            elif isinstance(node, ast.arg):
                stored.add(node.arg)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                stored.update((a.asname or a.name).split(".")[0] for a in node.names)
    return not (loaded - stored - REPL_NAMES - set(dir(builtins)))
