"""A search that can never match because of its letter case: served in the case it meant, and told.

Small root models lower-case the text and then search it for a word with capitals:

    hits = [line for line in doc["text"].splitlines() if "Inspector" in line.lower()]

This always gives `[]`. The real Qwen2.5-Coder-1.5B wrote exactly that, then sent the same
block seven more times (told each time that it printed nothing) until the time cap: it does
not see the mismatch. The meaning is never in doubt, so the worker compares in the case the
text was put in, and the cell's stderr says so, the way `open('name')` is served
(core/repl/near_miss.py):

    [note: line 2 searched lower-case text (.lower()) for 'Inspector'; it was searched as
    'inspector', and the output above is what that found. Write the word in lower case next time.]

An earlier wording ("where it can never match") made the real 1.5B model answer 0 beside
the right count it had just printed.

What is changed: a string literal with letters of the other case, compared with a call of
`.lower()`/`.casefold()` (or `.upper()`) by `in`, `not in`, `==`, `!=`, or passed to that
call's `.startswith`, `.endswith`, `.count`, `.find`, `.rfind`, `.index`, `.rindex` or
`.split` (also a tuple or list of literals there). Nothing else: a literal compared with
text whose case was not changed is the model's choice.

    code_tree, notes = fix(tree)          # the tree changed in place, one note per literal
"""

from __future__ import annotations

import ast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_CASERS = {"lower": str.lower, "casefold": str.lower, "upper": str.upper}
_METHODS = frozenset({"startswith", "endswith", "count", "find", "rfind", "index", "rindex", "split"})


def _caser(node: Any) -> str | None:
    """'lower' or 'upper' when `node` is a call `<something>.lower()` (or casefold/upper), else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args
            and not node.keywords and node.func.attr in _CASERS):
        return node.func.attr
    return None


class _Fixer(ast.NodeTransformer):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def _literal(self, node: Any, case: str) -> None:
        """Put a str literal (or a tuple/list of them) in `case`, noting each one changed."""
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            for element in node.elts:
                self._literal(element, case)
            return
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return
        cased = _CASERS[case](node.value)
        if cased == node.value:
            return
        made = "upper-case" if case == "upper" else "lower-case"
        self.notes.append(
            f"[note: line {getattr(node, 'lineno', '?')} searched {made} text (.{case}()) for {node.value!r}; "
            f"it was searched as {cased!r}, and the output above is what that found. Write the word in "
            f"{made.split('-')[0]} case next time.]")
        node.value = cased

    def visit_Compare(self, node: ast.Compare) -> Any:   # noqa: N802
        self.generic_visit(node)
        operands = [node.left, *node.comparators]
        for index, op in enumerate(node.ops):
            left, right = operands[index], operands[index + 1]
            if isinstance(op, (ast.In, ast.NotIn)):
                case = _caser(right)
                if case:
                    self._literal(left, case)
            elif isinstance(op, (ast.Eq, ast.NotEq)):
                for this, other in ((left, right), (right, left)):
                    case = _caser(this)
                    if case:
                        self._literal(other, case)
        return node

    def visit_Call(self, node: ast.Call) -> Any:   # noqa: N802
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _METHODS and node.args:
            case = _caser(func.value)
            if case:
                self._literal(node.args[0], case)
        return node


def fix(tree: ast.Module) -> tuple[ast.Module, list[str]]:
    """`tree` with its case-blind comparisons put in the case of the text they compare with,
    and one note per literal changed (none: the tree is as it was)."""
    fixer = _Fixer()
    fixer.visit(tree)
    return tree, fixer.notes
