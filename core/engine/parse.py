"""Reading the root model's reply: code cells and a final answer written as text.

Rules (DESIGN section 5):
- Code comes from fenced blocks tagged ```repl, and also ```python / ```py /
  ```python3 and untagged fences, because small models write ```python even when
  told ```repl. Other tags (```text, ```json, ```bash ...) are not run. A fence
  left open at the end of the reply still counts as code (the model may have run
  out of tokens; the cell then reports its own syntax error).
- A bare fence whose first line is only `repl`, `python`, `py` or `python3` (small models
  write ``` then the tag on the next line) is that tag: the line is dropped, not run.
- A final answer written as text is a line OUTSIDE code fences that starts with
  `FINAL(` or `FINAL_VAR(`, in any case (`Final(`, `final(`: the REPL takes those names
  too, and the real 1.5B model, asked for its answer, wrote `Final('...')` in prose). A mention inside prose ("I will call FINAL later",
  "`FINAL(x)`") never counts. The argument may span several lines up to the
  line that ends with `)`. A quoted Python string literal is unquoted.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

# The fences of a reply (which lines open and close runnable code) live in core/fences.py,
# the one fence grammar that the record's fold, the fork's edit and the exports read too.
from core.fences import FENCE as _FENCE, display_prose, split_fences  # noqa: F401


@dataclass(frozen=True)
class FinalText:
    kind: str     # "FINAL" | "FINAL_VAR"
    value: str    # the answer text, or the variable name for FINAL_VAR


@dataclass(frozen=True)
class ParsedReply:
    cells: list[str]
    prose: str                  # the reply without its fenced blocks
    final: FinalText | None
    unclosed_fence: bool


def parse_reply(text: str) -> ParsedReply:
    cells: list[str] = []
    prose_lines: list[str] = []
    unclosed = False
    for piece in split_fences(text):
        if isinstance(piece, str):
            prose_lines.append(piece)
            continue
        if piece.prefix is not None:
            prose_lines.append(piece.prefix)
        unclosed = not piece.closed
        if piece.runnable:
            cells.append(piece.code())
    cells = [c for c in cells if c.strip()]
    return ParsedReply(cells=cells, prose="\n".join(prose_lines),
                       final=find_final(prose_lines), unclosed_fence=unclosed)


_FINAL_CALL = re.compile(r"(FINAL_VAR|FINAL)\(", re.IGNORECASE)


def find_final(lines: list[str]) -> FinalText | None:
    """The first line (outside fences) that starts with FINAL( or FINAL_VAR(, in any case."""
    for i, line in enumerate(lines):
        stripped = line.strip()
        call = _FINAL_CALL.match(stripped)
        if call:
            kind = call.group(1).upper()
            return _final_argument(kind, stripped[call.end():], lines[i + 1:])
    return None


def _final_argument(kind: str, first: str, rest: list[str]) -> FinalText:
    collected = [first]
    if not first.rstrip().endswith(")"):
        for line in rest:
            collected.append(line)
            if line.rstrip().endswith(")"):
                break
    raw = "\n".join(collected).rstrip()
    if raw.endswith(")"):
        raw = raw[:-1]
    raw = raw.strip()
    if kind == "FINAL_VAR":
        return FinalText(kind, raw.strip("'\"` "))
    return FinalText(kind, _unquote(raw))


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] in "'\"" and raw[-1] == raw[0] or raw[:3] in ('"""', "'''") \
            or raw[:2].lower() in ('f"', "f'", 'r"', "r'"):
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            return raw
        if isinstance(value, str):
            return value
    return raw


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and the tail of `text` within `limit` chars, saying how much was cut."""
    if limit <= 0 or len(text) <= limit:
        return text
    cut = len(text) - limit
    note = f"\n[... {cut:,} of {len(text):,} characters cut; store results in variables and print slices ...]\n"
    keep = max(limit - len(note), 0)
    head = keep * 2 // 3
    tail = keep - head
    return text[:head] + note + (text[-tail:] if tail else "")




# "Final answer:", "**Final Answer**", "The final answer is" ... (small models' way of finishing)
_FINAL_WORDS = re.compile(r"^\W*(the\s+)?final\s+answer\b", re.IGNORECASE)


def stated_final(text: str) -> str | None:
    """The value a reply calls its final answer without FINAL(...): the first non-empty line
    after a line that starts with "Final answer", inside a fence or not, or the rest of that
    line itself ("Final answer: 2610"). None when there is no such line. The engine does not
    end the run on it (a passing thought would end it, the seeds warn); it tells the root
    how to finish (resources/prompts/stated_final.md). Only a reply to the request for the
    final answer, without code, ends the run with it: there it answers what was asked."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = _FINAL_WORDS.match(line)
        if not match:
            continue
        rest = line[match.end():].strip(" :*`-\t")
        if rest.lower().startswith("is "):
            rest = rest[3:]
        if rest.strip(" .*`"):
            return rest.strip(" .*`")
        for later in lines[i + 1:i + 6]:
            value = later.strip()
            if not value or _FENCE.match(later):
                continue
            return value.strip("`*")
    return None
