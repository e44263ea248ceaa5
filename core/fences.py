"""The one fence grammar: where a reply's code fences are, which lines open and close
runnable code, and the reply's prose without them. A leaf (re only): the engine's parser
(core/engine/parse.py), its streaming reader, the record's fold (core/run_nodes.py), the
fork's edit (core/engine/prepare.py) and the export renderer (core/exports/answer_render.py)
all read it.

    for piece in split_fences(text):      # str: a line of prose; Block: a fenced block
        ...

A fence opens on a line of up to three spaces and three or more backticks or tildes, with
an optional tag; it closes on a line of the same character, at least as many, and nothing
else. A fence left open at the end runs to the end of the text (`Block.closed` is False).
With `inline=True` (replies, not Markdown) a line of text that ends by opening a runnable
fence ("I will count.```repl") opens one too; its text is `Block.prefix`.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Union

RUNNABLE_TAGS = frozenset({"", "repl", "python", "py", "python3", "ipython", "pycon"})
TAG_LINES = frozenset({"repl", "python", "py", "python3"})
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)[^\n]*$")
# A fence opened at the end of a line of text ("... the app. ```repl"): the real 1.5B model
# wrote every reply of a run that way, so nothing ran for seven turns. Only a runnable tag
# at the very end of the line counts; "```" alone or a mention mid-sentence does not.
_INLINE_FENCE = re.compile(r"^(.*\S)[ \t]*(`{3,})(repl|python|py|python3)[ \t]*$", re.IGNORECASE)


def inline_fence(line: str) -> tuple[str, str, str] | None:
    """(text before, fence marker, tag) for a line that ends by opening a runnable fence."""
    if FENCE.match(line):
        return None
    match = _INLINE_FENCE.match(line)
    if match is None or "`" in match.group(1).replace("``", ""):
        return None
    return match.group(1), match.group(2), match.group(3).lower()


def closes(line: str, marker: str) -> bool:
    """Whether `line` closes a fence opened with `marker` (same character, at least as many)."""
    stripped = line.strip()
    return stripped.startswith(marker[0] * len(marker)) and stripped.strip(marker[0]) == ""


@dataclass(frozen=True)
class Block:
    """One fenced block of a text."""
    marker: str                 # "```", "~~~~" ...
    tag: str                    # lower-cased; "" for a bare fence
    opening: str                # the opening line as written (after the prefix, for an inline fence)
    body: tuple[str, ...]       # the lines between the fences
    closing: str | None         # the closing line as written; None when the block is left open
    prefix: str | None = None   # the text before an inline fence

    @property
    def closed(self) -> bool:
        return self.closing is not None

    @property
    def runnable(self) -> bool:
        return self.tag in RUNNABLE_TAGS

    def code(self) -> str:
        """The body as a cell runs it: a bare fence whose first line is only a tag
        (```\\nrepl\\n...) drops that line; a body indented as a whole is dedented (the real
        1.5B model wrote ` FINAL('...')` with one space before it: IndentationError)."""
        body = list(self.body)
        if not self.tag and body and body[0].strip().lower() in TAG_LINES:
            body = body[1:]
        return textwrap.dedent("\n".join(body))

    def lines(self) -> list[str]:
        """The block's own lines as written (without an inline fence's prefix)."""
        return [self.opening, *self.body] + ([self.closing] if self.closing is not None else [])


Piece = Union[str, Block]


def split_fences(text: str, *, inline: bool = True) -> list[Piece]:
    """The text as prose lines (str) and fenced blocks (Block), in order."""
    pieces: list[Piece] = []
    open_: dict | None = None
    for line in (text or "").splitlines():
        if open_ is None:
            match = FENCE.match(line)
            found = None if match or not inline else inline_fence(line)
            if match:
                open_ = dict(marker=match.group(1), tag=match.group(2).lower(), opening=line,
                             body=[], prefix=None)
            elif found:
                open_ = dict(marker=found[1], tag=found[2], opening=found[1] + found[2], body=[],
                             prefix=found[0])
            else:
                pieces.append(line)
            continue
        if closes(line, open_["marker"]):
            pieces.append(Block(**{**open_, "body": tuple(open_["body"])}, closing=line))
            open_ = None
        else:
            open_["body"].append(line)
    if open_ is not None:
        pieces.append(Block(**{**open_, "body": tuple(open_["body"])}, closing=None))
    return pieces


def replace_runnable(text: str, code: str) -> str:
    """The text with its runnable blocks replaced by one ```repl block holding `code`
    (where the first one was; an inline fence's text stays on its own line); appended
    when the text has none. Other blocks (```text, ```json ...) stay as written."""
    block = ["```repl", *code.rstrip().split("\n"), "```"]
    out, placed = _without_runnable(text, instead=block)
    if not placed:
        out = (["\n".join(out).rstrip()] if "".join(out).strip() else []) + block
    return "\n".join(out)


def _without_runnable(text: str, instead: list[str] | None = None) -> tuple[list[str], bool]:
    """The text's lines without its runnable blocks (an inline fence's text kept), `instead`
    put where the first one was; and whether there was one."""
    out: list[str] = []
    placed = False
    for piece in split_fences(text):
        if isinstance(piece, str):
            out.append(piece)
            continue
        if piece.prefix is not None:
            out.append(piece.prefix)
        if not piece.runnable:
            out.extend(piece.lines())
        elif not placed:
            out.extend(instead or [])
            placed = True
    return out, placed


_BLANKS = re.compile(r"\n{3,}")


def display_prose(text: str) -> str:
    """The reply without its runnable code fences (those are shown as cells);
    other fences (```text, ```json ...) stay. An unclosed runnable fence at the
    end (still streaming, or cut off) is dropped too."""
    return _BLANKS.sub("\n\n", "\n".join(_without_runnable(text)[0])).strip()
