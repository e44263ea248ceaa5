"""Reading a root reply only as far as it is useful (DESIGN section 5).

The root's reply is streamed; a `ReplyReader` sees every piece as it arrives and
says when to stop reading (the client then closes the stream, so a local server
stops generating and a paid one stops billing). It stops:

- **block**: a runnable code block has closed and what follows is not more code:
  more than `AFTER_BLOCK_CHARS` non-blank characters of text after the last closed
  block without a new fence opening (a model that writes prose between blocks
  still gets its next block, one that invents the block's output or rambles does
  not). With `one_block=True` (a per-model setting) it stops at the first closing
  fence.
- **final**: the reply gave its final answer: a closed block that calls
  FINAL/FINAL_VAR (or `final`/`final_var`, which the worker takes as those), or a
  line outside code that starts with `FINAL(` / `FINAL_VAR(` and has ended with `)`.
  Nothing after it could run: a FINAL in code ends the run at that cell.
- **repetition**: the last `REPEAT_SPAN` characters (`REPEAT_SPAN_IN_CODE` inside an
  open code block) are one piece of at most `REPEAT_PERIOD` characters repeated (`>>> >>> >>> ...`, a line printed over and
  over): the model has degenerated.

What is kept (`kept`): the reply up to the end of the closed block or the final
line; for repetition, up to the end of the last closed block when the repetition
came after it, else up to where the repetition began. What was cut never enters
the next prompt. The rules are deliberately conservative; the limits are module
constants so a measurement on a real model can move them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.fences import FENCE as _FENCE, RUNNABLE_TAGS, inline_fence
from core.local_defaults import one_block_default

AFTER_BLOCK_CHARS = 400      # text allowed after a closed block while waiting for another fence
REPEAT_SPAN = 400            # how much of the tail must be one repeated piece
REPEAT_SPAN_IN_CODE = 2_000  # inside an open code block (a long literal is rarer than a loop of text)
REPEAT_PERIOD = 40           # the longest piece counted as "repeated"
_CHECK_EVERY = 32            # look for repetition each time this many characters arrived
_FINAL_CALL = re.compile(r"(?<![\w.])(FINAL|FINAL_VAR|final|final_var|Final|Final_var|Final_Var)\s*\(")

REASONS = {"block": "after its code block", "final": "after its final answer",
           "repetition": "where it began repeating itself"}


@dataclass(frozen=True)
class Cut:
    reason: str              # "block" | "final" | "repetition"
    kept_chars: int          # the reply's length as kept
    received_chars: int      # what had arrived when reading stopped
    piece: str = ""          # the repeated piece (reason "repetition")


def describe(cut: dict, max_tokens: int | None = None) -> str:
    """'reply cut after its code block: 1,230 of up to 8,192 tokens' (a RootReplied.cut)."""
    where = REASONS.get(cut.get("reason", ""), "")
    tokens, cap = cut.get("tokens"), cut.get("max_tokens", max_tokens)
    text = f"reply cut {where}".rstrip()
    if tokens is not None and cap:
        text += f": {int(tokens):,} of up to {int(cap):,} tokens"
    elif tokens is not None:
        text += f": {int(tokens):,} tokens"
    if cut.get("reason") == "repetition" and cut.get("piece"):
        text += f" ({cut['piece']!r} over and over)"
    return text


class ReplyReader:
    def __init__(self, *, one_block: bool = False) -> None:
        self.one_block = one_block
        self.reset()

    def reset(self) -> None:
        """A retried call starts its reply over."""
        self.text = ""
        self.cut: Cut | None = None
        self._pos = 0                       # start of the first line not yet read whole
        self._fence: str | None = None      # the open fence's marker
        self._runnable = False
        self._block: list[str] = []
        self._block_end: int | None = None  # just after the last closed runnable block
        self._final_lines: bool = False     # inside a FINAL( line that has not closed yet
        self._checked = 0

    @property
    def kept(self) -> str:
        return self.text[: self.cut.kept_chars] if self.cut else self.text

    def feed(self, piece: str) -> bool:
        """Take one streamed piece; True when reading should stop (see `cut`)."""
        if self.cut is not None:
            return True
        self.text += piece
        while self.cut is None:
            newline = self.text.find("\n", self._pos)
            if newline < 0:
                break
            line, end = self.text[self._pos:newline], newline + 1
            self._pos = end
            self._line(line, end)
        if self.cut is None and self._fence is None and self._block_end is not None:
            after = self.text[self._block_end:]
            if len(after.strip()) > AFTER_BLOCK_CHARS and not self._final_lines:
                self._stop("block", self._block_end)
        if self.cut is None and len(self.text) - self._checked >= _CHECK_EVERY:
            self._checked = len(self.text)
            self._repetition()
        return self.cut is not None

    # -- rules

    def _line(self, line: str, end: int) -> None:
        if self._fence is not None:
            stripped = line.strip()
            if stripped.startswith(self._fence[0] * len(self._fence)) and stripped.strip(self._fence[0]) == "":
                self._fence = None
                if self._runnable and any(b.strip() for b in self._block):
                    self._block_end = end
                    if _FINAL_CALL.search("\n".join(self._block)):
                        self._stop("final", end)
                    elif self.one_block:
                        self._stop("block", end)
            else:
                self._block.append(line)
            return
        match = _FENCE.match(line)
        if match and not self._final_lines:
            self._fence, self._block = match.group(1), []
            self._runnable = match.group(2).lower() in RUNNABLE_TAGS
            return
        inline = None if match or self._final_lines else inline_fence(line)
        if inline:                          # "... text. ```repl": parse.py reads it the same way
            self._fence, self._block, self._runnable = inline[1], [], True
            return
        stripped = line.strip()
        if self._final_lines or stripped.startswith(("FINAL(", "FINAL_VAR(")):
            self._final_lines = True
            if stripped.endswith(")"):
                self._stop("final", end)

    def _repetition(self) -> None:
        span = REPEAT_SPAN if self._fence is None else REPEAT_SPAN_IN_CODE
        tail = self.text[-span:]
        if len(tail) < span:
            return
        for period in range(1, REPEAT_PERIOD + 1):
            if tail[period:] == tail[:-period]:
                break
        else:
            return
        start = len(self.text) - span
        while start > 0 and self.text[start - 1] == self.text[start - 1 + period]:
            start -= 1
        piece = self.text[start:start + period]
        keep = start
        if self._block_end is not None and start >= self._block_end:
            keep = self._block_end      # junk after (or in a block after) the last closed block
        self._stop("repetition", keep, piece)

    def _stop(self, reason: str, keep: int, piece: str = "") -> None:
        self.cut = Cut(reason, keep, len(self.text), piece)


def reader_for(config: object, model: str) -> ReplyReader | None:
    """The reader of `model`'s root replies under a RunConfig; None when reading is not cut.
    One block per turn is the model's setting (RunConfig.one_block_per_turn), else the
    default for its size (core/local_defaults.py: on for models of at most 4B)."""
    if not getattr(config, "cut_replies", True):
        return None
    setting = (getattr(config, "one_block_per_turn", None) or {}).get(model)
    return ReplyReader(one_block=one_block_default(model) if setting is None else bool(setting))


def record(reader: ReplyReader | None, output_tokens: int, max_tokens: int) -> dict | None:
    """RootReplied.cut: {reason, tokens, max_tokens, kept_chars, received_chars[, piece]}, or None."""
    if reader is None or reader.cut is None:
        return None
    c = reader.cut
    out = {"reason": c.reason, "tokens": int(output_tokens), "max_tokens": int(max_tokens),
           "kept_chars": c.kept_chars, "received_chars": c.received_chars}
    if c.piece:
        out["piece"] = c.piece
    return out


def note_for_root(cut: dict) -> str | None:
    """What the root is told about its own cut reply (None when nothing needs saying)."""
    if cut["reason"] == "repetition":
        return ("Your reply started repeating the same text over and over, so it was cut there; "
                "what came after was not read. Write one short block and stop.")
    if cut["reason"] == "block":
        return ("Your reply was read up to the end of its code block; the text after it was not "
                "read. Write a block, then stop and wait for its output.")
    return None


def sentence(cut: dict) -> str:
    """`describe` as the transcript's sentence: 'Reply cut after its code block: ...'."""
    text = describe(cut)
    return text[:1].upper() + text[1:] + "."
