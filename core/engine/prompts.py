"""Prompt assembly. The words live in resources/prompts/*.md; this module only
fills `$placeholders` (string.Template, so code braces need no escaping)."""

from __future__ import annotations

import ast
import re
import fnmatch
from functools import lru_cache
from pathlib import Path
from string import Template
from typing import Sequence

from core.engine.question_lines import asks_for_list, question_lines, question_words
from core.local_defaults import small_prompt
from core.paths import resources_dir

PREFIX_CHARS = 500
LISTED_DOCUMENTS = 10


def prompts_dir() -> Path:
    return resources_dir() / "prompts"


@lru_cache(maxsize=None)
def template(name: str) -> Template:
    return Template((prompts_dir() / name).read_text(encoding="utf-8"))


def fill(name: str, **values: object) -> str:
    return template(name).safe_substitute({k: str(v) for k, v in values.items()}).strip()


@lru_cache(maxsize=1)
def _builtin_notes() -> tuple[tuple[tuple[str, ...], str], ...]:
    notes = []
    for path in sorted((prompts_dir() / "models").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        first, _, body = text.partition("\n")
        if not first.lower().startswith("match:"):
            continue
        patterns = tuple(p.strip().lower() for p in first[6:].split(",") if p.strip())
        notes.append((patterns, body.strip()))
    return tuple(notes)


def _matches(model: str, pattern: str) -> bool:
    model = model.lower()
    bare = model.split("/", 1)[-1]
    pattern = pattern.lower()
    return fnmatch.fnmatchcase(model, pattern) or fnmatch.fnmatchcase(bare, pattern)


def model_notes(model: str, user_notes: dict[str, str] | None = None, *, builtin: bool = True) -> list[str]:
    """Built-in notes whose patterns match, then the user's own (pattern -> text)."""
    found = [body for patterns, body in _builtin_notes() if any(_matches(model, p) for p in patterns)] \
        if builtin else []
    for pattern, body in (user_notes or {}).items():
        if body.strip() and _matches(model, pattern):
            found.append(body.strip())
    return found


def system_prompt(*, can_llm: bool, can_rlm: bool, model: str,
                  user_notes: dict[str, str] | None = None, sub_models: Sequence[str] = (),
                  tables: bool = True) -> str:
    """`tables`: a table is among the documents (has_tables); a small model's prompt names `tables`
    and shows its table examples only then."""
    if small_prompt(model):       # core/local_defaults.py: a model of at most 4B
        return _small_system_prompt(can_llm=can_llm, model=model, user_notes=user_notes, tables=tables)
    if not can_llm:
        subcalls, batching, example = fill("subcalls_none.md"), "", fill("example_code.md")
    elif can_rlm:
        subcalls, batching, example = fill("subcalls_rlm.md"), fill("batching.md"), fill("example_llm.md")
    else:
        subcalls, batching, example = fill("subcalls_llm.md"), fill("batching.md"), fill("example_llm.md")
    if can_llm and sub_models:           # models the user enabled for sub-calls (core/routing.py)
        subcalls += "\n" + fill("subcalls_models.md", models=", ".join(f"`{m}`" for m in sub_models))
    text = fill("system.md", subcalls=subcalls, batching=batching, example=example)
    notes = model_notes(model, user_notes)
    if notes:
        text += "\n\n" + "\n\n".join(notes)
    return text


def _small_system_prompt(*, can_llm: bool, model: str, user_notes: dict[str, str] | None,
                         tables: bool = True) -> str:
    """system_small.md: short, worked examples of several kinds, the names a small model needs. It
    carries what the built-in notes for small models said, so only the user's own notes are added.
    The table examples only when a table is among the documents: the real 1.5B model copies the
    example nearest the question, and asked how many lines of a log say CANCELLED it copied the
    table example (`tables` of a .txt: IndexError) and looped on it to the time cap."""
    text = fill("system_small.md", subcalls=fill("subcalls_small.md") if can_llm else "",
                tables_name=template("tables_name_small.md").template if tables else "",
                table_examples=template("table_examples_small.md").template if tables else "")
    notes = model_notes(model, user_notes, builtin=False)
    return text + ("\n\n" + "\n\n".join(notes) if notes else "")


TABLE_SUFFIXES = (".csv", ".tsv", ".xlsx", ".xlsm", ".xls")


def has_tables(documents: Sequence[object]) -> bool:
    """A document is a table (CSV, TSV, a spreadsheet) or holds tables ingestion parsed."""
    return any(getattr(d, "tables", None) or str(getattr(d, "path", "")).lower().endswith(TABLE_SUFFIXES)
               for d in documents)


def first_turn(question: str, documents: Sequence[tuple[str, int]], prefix: str,
               context_form: str = "str") -> str:
    """Metadata only: counts, a few sizes, a short prefix, and the question. `context_form`
    "list": `context` is one str per document (core/repl/context_file.context_form), said here."""
    total = sum(chars for _, chars in documents)
    shown = [f"- {path} ({chars:,} chars)" for path, chars in documents[:LISTED_DOCUMENTS]]
    if len(documents) > LISTED_DOCUMENTS:
        shown.append(f"- ... and {len(documents) - LISTED_DOCUMENTS:,} more (see `documents`)")
    note = "" if context_form == "str" else " " + fill("context_list.md", doc_count=f"{len(documents):,}")
    return fill("first_turn.md", total_chars=f"{total:,}", doc_count=f"{len(documents):,}", context_note=note,
                doc_list="\n".join(shown), prefix=prefix[:PREFIX_CHARS], question=question)


HEAD_LINES = 2          # first non-empty lines shown per document to a small model
HEAD_LINE_CHARS = 160


def first_turn_small(question: str, documents: Sequence[tuple[str, str]]) -> str:
    """A small model's first turn (core/local_defaults.py: small_prompt): each listed document's
    name, size and first lines instead of 500 characters of `context`, which showed only the
    first document: the real 1.5B model guessed a CSV's columns and a log's line format. Each
    is listed with its index, as it then picked `documents[5]` for the log (it is [9]). Then a
    few lines that hold words of the question
    (core/engine/question_lines.py): it guessed the format of the lines it had to count. A CSV or TSV
    file is said to be a table in `tables`: asked for a column's total, it searched the text for the
    column's name and found only the header line."""
    total = sum(len(text) for _, text in documents)
    shown = []
    for index, (path, text) in enumerate(documents[:LISTED_DOCUMENTS]):
        lines = [ln[:HEAD_LINE_CHARS] for ln in text.splitlines()[:20] if ln.strip()][:HEAD_LINES]
        table = "; a table, its rows also in `tables`" if path.lower().endswith(TABLE_SUFFIXES) else ""
        shown.append(f"- documents[{index}]: {path} ({len(text):,} chars{table}):" + "".join(f"\n    {ln}" for ln in lines))
    if len(documents) > LISTED_DOCUMENTS:
        shown.append(f"- ... and {len(documents) - LISTED_DOCUMENTS:,} more (see `documents`)")
    found = question_lines(question, documents)
    lines = "\n".join(f"- documents[{index}] line {number:,}: {line}" for index, number, line in found)
    return fill("first_turn_small.md", total_chars=f"{total:,}", doc_count=f"{len(documents):,}",
                heads="\n".join(shown), question=question,
                found="\n" + fill("question_lines_small.md", lines=lines) + "\n" if found else "")


def turn_feedback(outputs: list[str], notes: list[str], iteration: int, max_iterations: int,
                  small: bool = False) -> str:
    """`small`: a small root's (turn_feedback_small.md): its next reply is a block and nothing else."""
    return fill("turn_feedback_small.md" if small else "turn_feedback.md", outputs="\n\n".join(outputs), notes="\n".join(notes),
                iteration=iteration, max_iterations=max_iterations)


def no_code() -> str:
    return fill("no_code.md")


LAST_OUTPUT_CHARS = 100
REPEATED_OUTPUT_CHARS = 400    # a passage a repeated block printed, offered as the answer


def _best_item(items: Sequence[str], question: str, seen: str = "") -> str:
    """The item that holds the most words of the question (core/engine/question_lines.py), the
    first of those tied: the real 1.5B model searched one word, printed ten lines and, offered
    the first, copied it though the fourth was the one that answered. An item an earlier output
    already held (`seen`) comes after the new ones: the line of a question's first hop holds most
    of its words, the line the second search found holds the answer."""
    stems = question_words(question, ())
    fresh = [item for item in items if item.strip() not in seen] or list(items)
    return max(fresh, key=lambda item: sum(stem in item.lower() for stem in stems)) if stems else fresh[0]


def last_output(stdout: str | None, max_chars: int = LAST_OUTPUT_CHARS, question: str = "",
                seen: str = "", whole: bool = False) -> str | None:
    """After a small root's reply without code: the line that ends the run with what its last
    block printed, when that was one short line (last_output_small.md); else None. The real
    1.5B model printed 92 (right), then wrote "The number of card payments failed ... is 2."
    twice: it copies literal lines it is given (stated_final.md), not advice. A printed list
    of strings (`['Gritting. Crews grit ...']`) is offered as its items joined by "; " when
    they fit in `max_chars`, else as the item that holds most words of `question` (one that
    `seen`, the earlier outputs, did not hold first; `whole`: only the whole output, or None)."""
    value = (stdout or "").strip()
    if value.startswith(("['", '["')) and value.endswith(("']", '"]')) and len(value) <= LIST_SCANNED_CHARS:
        try:
            items = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            items = None
        if isinstance(items, list) and items and all(isinstance(i, str) for i in items):
            joined = "; ".join(i.strip() for i in items)
            parts = _first_parts(items, max_chars) if asks_for_list(question) else None
            if parts:                       # several items asked: the first part of every line
                value, what = parts, f"{len(items)} lines; this is the first part of each"
            elif len(joined) <= max_chars:
                value, what = joined, ("one line" if len(items) == 1 else f"{len(items)} items")
            elif whole or asks_for_list(question):   # only the whole output, not one of its lines
                return None
            else:
                value = _best_item(items, question, seen).strip()
                what = f"{len(items)} lines; this one holds most words of the question"
            if value and "\n" not in value and len(value) <= max_chars:
                return fill("last_output_line_small.md", what=what, literal=repr(value))
            return None
    if not value or "\n" in value or len(value) > max_chars:
        return None
    if len(value) > LAST_OUTPUT_CHARS:
        return fill("last_output_line_small.md", what="one line", literal=repr(value))
    return fill("last_output_small.md", value=value, literal=repr(value))


def offered_value(notes: Sequence[str]) -> str | None:
    """The answer the last of `notes` that offers a FINAL line to copy (`FINAL('...')` alone on a
    line, as last_output and the send-back notes write it) offers, or None."""
    for note in reversed(notes):
        for line in reversed(note.splitlines()):
            line = line.strip()
            if line.startswith("FINAL(") and line.endswith(")"):
                try:
                    value = ast.literal_eval(line[6:-1])
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    continue
                if isinstance(value, (str, int, float)) and str(value).strip():
                    return str(value)
    return None


def _first_parts(items: Sequence[str], max_chars: int) -> str | None:
    """Each line cut at its first ". ", "; " or ", " ("Inspector: Elof Varn. Result: passed ..." ->
    "Inspector: Elof Varn"), joined by "; ", when each part is short and they differ; else None. The real
    1.5B model printed the three lines that named the inspectors a question asked for, and offered the
    one line that held most of the question's words, answered with that one inspector."""
    parts = list(dict.fromkeys(re.split(r"\.\s|;\s|,\s", item.strip(), maxsplit=1)[0].strip() for item in items))
    if len(parts) < 2 or any(not p or len(p) > FIRST_PART_CHARS or not _NAMED.search(p) for p in parts):
        return None          # "The first keeper" names no one: the whole lines are needed
    joined = "; ".join(parts)
    return joined if len(joined) <= max_chars else None


FIRST_PART_CHARS = 60
_NAMED = re.compile(r"(?<=\S)\s+[A-Z0-9]|\d")    # a capital or a digit after the part's first word
LIST_SCANNED_CHARS = 100_000   # a printed list longer than this is not read for an offer


def stated_final(value: str) -> str:
    """A reply said "Final answer: VALUE" without FINAL: how to finish (stated_final.md)."""
    shown = value if len(value) <= 200 else value[:200] + "…"
    return fill("stated_final.md", value=shown, literal=repr(shown))


def cut_by_cap(tokens: int) -> str:
    """The root's reply was shortened to fit the dollar cap and stopped there."""
    return fill("cut_by_cap.md", tokens=f"{tokens:,}")


def sub_cut_by_cap(tokens: int, asked: int) -> str:
    """Sub-call replies were shortened to fit the dollar cap (said once per turn)."""
    return fill("sub_cut_by_cap.md", tokens=f"{tokens:,}", asked=f"{asked:,}")


def sub_refused(reason: str) -> str:
    """The budget refused sub-calls: stop making them (said once per turn)."""
    return fill("sub_refused.md", reason=reason)


def final_unseen(value: str) -> str:
    """A small root gave a final answer before any code ran (core/local_defaults.py)."""
    shown = value if len(value) <= 200 else value[:200] + "…"
    return fill("final_unseen.md", literal=repr(shown))


def repeated_reply(turn: int, printed: Sequence[str]) -> str:
    """The reply's code was the last reply's: not run again, and what it printed then."""
    shown = "\n\n".join(printed).strip() or "(nothing)"
    if len(shown) > REPEAT_SHOWN_CHARS:
        shown = shown[:REPEAT_SHOWN_CHARS] + "\n[... the rest as in turn " + str(turn) + "]"
    return fill("repeated_reply.md", turn=turn, printed=shown)


def repeated_prose(turn: int) -> str:
    """The reply was the last reply's text again, without code."""
    return fill("repeated_prose.md", turn=turn)


REPEAT_SHOWN_CHARS = 1_500     # of the earlier output, quoted in repeated_reply


def final_request(max_iterations: int) -> str:
    return fill("final_request.md", max_iterations=max_iterations)


def repeated_final_request(times: int) -> str:
    return fill("repeated_final_request.md", times=times)


def follow_up(question: str) -> str:
    return fill("follow_up.md", question=question)
