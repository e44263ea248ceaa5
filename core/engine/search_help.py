"""What a small root is told after a search: its words one at a time, and the next hop.

    note = empty_search_note(code, stdout, documents)   # after a search that matched nothing
    note = next_hop_note(question, code, stdout)        # after a search that printed a code

The real 1.5B model searches whole phrases of the question (`"engine fault" in line.lower()`
where the log writes "FAULT engine", `"child's single ticket"`), gets `[]` and sends the same
block again until the time cap, whatever the note: it copies literal text, not advice. So
after a search that matched nothing, the engine itself looks for lines that hold every word of
the searched phrases, in any order (the stems of core/engine/question_lines.py, so "payments"
finds "payment"), shows a few and offers the first as the FINAL line to copy (it copies
literal lines, not advice); when no line holds them all, it says so, and that the answer may
then not be in the documents.

Asked a question of two hops ("the home port of the vessel that X commands"), it found the
line of the first hop ("X commands vessel AB-12"), then sent that search again, or answered
with that line. After a short output that names one code the question and the search did not
(letters then digits, "AB-12", "INV-2041"), the engine offers the block that searches every
document for it: what was found is the next search.

It took a log for a table (`[t for t in tables if t["path"].endswith("webshop.log")][0]`: an
IndexError) and sent that block again until asked for its answer; it picked a document by a
name none has (`endswith("reports/2023-Q1.md")`, an IndexError) and answered "Not in the
documents."; it read `doc["header"]` of a CSV taken from `documents` (a KeyError). After such
an error the engine says the document has no table and shows the block that reads its lines,
that no document is named so and which are, or shows the block that takes the table from
`tables`.

All read only the block's code, what it printed and the documents' text; no model call.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Sequence

from core.engine.prompts import fill

MAX_LINES = 3            # lines shown that hold every searched word
LINE_CHARS = 160
_SCANNED_LINES = 200_000
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CODE = re.compile(r"(?<![\w-])[A-Z]{1,4}-?\d{2,}(?![\w])")   # "VX-203", "INV2041": a code a line names
SHORT_OUTPUT_CHARS = 600
SHORT_OUTPUT_LINES = 3


def searched_phrases(code: str) -> list[str]:
    """The string literals the block searched text for: `"x" in ...`, `....find("x")`, `....count("x")`
    (the phrases, in order, without repeats)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    found: list[str] = []

    def take(node: Any) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip():
            if node.value not in found:
                found.append(node.value)

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            take(node.left)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("find", "count", "index") and node.args):
            take(node.args[0])
    return found


def _words(phrases: Sequence[str]) -> dict[str, str]:
    """Each word of two or more letters (lower case) and its stem: the first len-2 characters, at least four."""
    words: dict[str, str] = {}
    for phrase in phrases:
        for word in _WORD.findall(phrase.lower()):
            if len(word) >= 2 and word not in words:
                words[word] = word[:max(4, len(word) - 2)] if len(word) >= 4 else word
    return words


def _searched_documents(code: str, documents: Sequence[tuple[str, str]]) -> list[int]:
    """The documents the block names (by a part of their path), else every one."""
    named = [i for i, (path, _) in enumerate(documents) if path.rsplit("/", 1)[-1] in code]
    return named or list(range(len(documents)))


def lines_holding(stems: Sequence[str], documents: Sequence[tuple[str, str]], indexes: Sequence[int]
                  ) -> list[tuple[int, int, str]]:
    """(document index, line number from 1, line) of the first lines that hold every stem."""
    found: list[tuple[int, int, str]] = []
    scanned = 0
    for index in indexes:
        for number, line in enumerate(documents[index][1].splitlines(), start=1):
            scanned += 1
            if scanned > _SCANNED_LINES:
                return found
            low = line.lower()
            if all(s in low for s in stems):
                found.append((index, number, line.strip()[:LINE_CHARS]))
                if len(found) >= MAX_LINES:
                    return found
    return found


def empty_search_note(code: str, documents: Sequence[tuple[str, str]]) -> str | None:
    """After a block whose search printed nothing: the lines that hold every word it searched for,
    in any order, or that none does; None when the block searched no phrase of two words or more
    (one word searched and not found: nothing to split)."""
    names = {path.rsplit("/", 1)[-1].lower() for path, _ in documents}
    phrases = [p for p in searched_phrases(code) if p.strip().lower() not in names]
    stems = _words(phrases)
    if len(stems) < 2 or not documents:
        return None
    shown = ", ".join(repr(p) for p in phrases[:4])
    words = ", ".join(stems)
    found = lines_holding(list(stems.values()), documents, _searched_documents(code, documents))
    if not found:
        return fill("search_words_none_small.md", searched=shown, words=words)
    lines = "\n".join(f"- documents[{i}] line {n:,}: {line}" for i, n, line in found)
    return fill("search_words_small.md", searched=shown, words=words, lines=lines, literal=repr(found[0][2]))


def _short(stdout: str) -> bool:
    text = (stdout or "").strip()
    if not text or len(text) > SHORT_OUTPUT_CHARS:
        return False
    if text.startswith("[") and text.endswith("]"):
        try:
            items = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            items = None
        if isinstance(items, list):
            return 0 < len(items) <= SHORT_OUTPUT_LINES
    return len(text.splitlines()) <= SHORT_OUTPUT_LINES


# print(lines[:3]), print(doc["text"].splitlines()[:5]): a look at a document's first lines (group 1: how many)
HEAD_LOOK = re.compile(r"print\([^\n]*\[\s*:\s*(\d+)\s*\]")


def next_hop_note(question: str, code: str, stdout: str | None) -> str | None:
    """After a short output that names exactly one code neither the question nor the block holds:
    the block that searches every document for it (next_hop_small.md); else None."""
    if not _short(stdout or "") or HEAD_LOOK.search(code):
        return None            # the first lines of a document are a look, not a hop: a list question
    known = (question + "\n" + code).lower()
    codes = []
    for term in _CODE.findall(stdout or ""):
        if term.lower() not in known and term not in codes:
            codes.append(term)
    if len(codes) != 1:
        return None
    return fill("next_hop_small.md", term=codes[0], literal=repr(codes[0]))


_TABLE_PICK = re.compile(r"""\btables\b[^\n]*?\.endswith\(\s*["']([^"']+)["']""")


def not_a_table_note(code: str, shown: str, documents: Sequence[tuple[str, str]]) -> str | None:
    """After a block that picked a document from `tables` by its name and failed with an IndexError:
    that document has no table, and the block that reads its lines (not_a_table_small.md); else None."""
    if "IndexError" not in (shown or ""):
        return None
    names = {path.rsplit("/", 1)[-1]: path for path, _ in documents}
    for name in _TABLE_PICK.findall(code):
        match = next((n for n in names if n.endswith(name)), None)
        if match:
            return fill("not_a_table_small.md", document=match, literal=repr(match))
    return None


_DOCUMENT_PICK = re.compile(r"""\bdocuments\b[^\n]*?\.endswith\(\s*["']([^"']+)["']""")
LISTED = 10


def no_such_document_note(code: str, shown: str, documents: Sequence[tuple[str, str]]) -> str | None:
    """After a block that picked from `documents` by a name no document's path ends with and failed
    with an IndexError: that no document is named so, and the names there are (no_such_document_small.md)."""
    if "IndexError" not in (shown or ""):
        return None
    for name in _DOCUMENT_PICK.findall(code):
        if not any(path.endswith(name) for path, _ in documents):
            names = ", ".join(path for path, _ in documents[:LISTED]) + (", ..." if len(documents) > LISTED else "")
            return fill("no_such_document_small.md", document=repr(name), names=names, term=repr(_one_term(code)))
    return None


def _one_term(code: str) -> str:
    """One term of what the block searched for, to search every document with: one with digits
    ("371,822" of "Revenue for the quarter was $371,822"), else its longest word; "word" if none."""
    tokens = [t.strip("$€£.,;:()'\"") for p in searched_phrases(code) for t in p.split()]
    tokens = [t for t in tokens if t]
    with_digits = [t for t in tokens if any(c.isdigit() for c in t)]
    return (with_digits or sorted(tokens, key=len, reverse=True) or ["word"])[0].lower()


_TABLE_KEY = re.compile(r"KeyError: '(header|rows)'")


def table_in_documents_note(code: str, shown: str, documents: Sequence[tuple[str, str]]) -> str | None:
    """After a block that read `header` or `rows` of a `documents` entry (a KeyError): a document has
    only its path and text, the table is in `tables` (table_in_documents_small.md); else None."""
    if not _TABLE_KEY.search(shown or "") or "documents" not in code:
        return None
    named = [n for n in _DOCUMENT_PICK.findall(code) if n.lower().endswith((".csv", ".tsv"))
             and any(path.endswith(n) for path, _ in documents)]
    tabular = [path.rsplit("/", 1)[-1] for path, _ in documents if path.lower().endswith((".csv", ".tsv"))]
    name = (named or tabular or [None])[0]
    if name is None:
        return None
    return fill("table_in_documents_small.md", literal=repr(name))


def header_only_note(code: str, stdout: str | None, documents: Sequence[tuple[str, str]]) -> str | None:
    """After a search whose only match was a CSV or TSV file's header line (the column's name): the
    column's values are in `tables`, with the block that adds and averages them (header_only_small.md);
    else None. The real 1.5B model, asked for the total of a column, searched the file's text for the
    column's name, printed its header line, sent that block again and made a total up when asked."""
    try:
        printed = ast.literal_eval((stdout or "").strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not (isinstance(printed, list) and len(printed) == 1 and isinstance(printed[0], str)):
        return None
    for path, text in documents:
        if not path.lower().endswith((".csv", ".tsv")):
            continue
        header = text.lstrip("\ufeff").split("\n", 1)[0].strip()
        if printed[0].strip() != header:
            continue
        columns = [c.strip().strip('"') for c in re.split(r"[,\t;]", header)]
        searched = [c for c in columns if c and re.search(rf"['\"]{re.escape(c.lower())}['\"]", code.lower())]
        if searched:
            return fill("header_only_small.md", document=path.rsplit("/", 1)[-1], column=searched[0],
                        literal=repr(path.rsplit("/", 1)[-1]), column_literal=repr(searched[0]))
    return None


NOTHING_FOUND_AFTER = 3     # different phrases searched in a row, each matching nothing


def nothing_found_note(searched: list[str], code: str) -> str | None:
    """After NOTHING_FOUND_AFTER different searches in a row that each matched nothing (`searched` holds
    the phrases so far and is extended with this block's): the not-found answer as a line to copy
    (searches_found_nothing_small.md); else None. The real 1.5B model, asked what a ticket costs in a
    memo that names no fares, searched "child's single ticket", then "child", "single" and "ticket"
    one at a time, each `[]`, and went on searching them again until the time cap."""
    for phrase in searched_phrases(code):
        if phrase.lower() not in (p.lower() for p in searched):
            searched.append(phrase)
    if len(searched) < NOTHING_FOUND_AFTER:
        return None
    return fill("searches_found_nothing_small.md", searched=", ".join(repr(p) for p in searched[-6:]))
