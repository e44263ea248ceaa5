"""Where a reply's code fences are: which lines open and close runnable code, and the
reply's prose without them. A leaf (re only): the engine's parser (core/engine/parse.py),
its streaming reader and the record's fold (core/run_nodes.py) all read it."""

from __future__ import annotations

import re

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


_BLANKS = re.compile(r"\n{3,}")


def display_prose(text: str) -> str:
    """The reply without its runnable code fences (those are shown as cells);
    other fences (```text, ```json ...) stay. An unclosed runnable fence at the
    end (still streaming, or cut off) is dropped too."""
    out: list[str] = []
    fence: str | None = None
    runnable = False
    for line in text.splitlines():
        if fence is None:
            match = FENCE.match(line)
            inline = None if match else inline_fence(line)
            if match:
                fence, runnable = match.group(1), match.group(2).lower() in RUNNABLE_TAGS
                if not runnable:
                    out.append(line)
            elif inline:
                out.append(inline[0])
                fence, runnable = inline[1], True
            else:
                out.append(line)
            continue
        stripped = line.strip()
        closes = stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == ""
        if not runnable:
            out.append(line)
        if closes:
            fence = None
    return _BLANKS.sub("\n\n", "\n".join(out)).strip()
