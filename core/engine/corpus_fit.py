"""Whether the documents fit in the REPL worker's memory, decided before the run.

    check_fits(documents, memory_limit_mb)     # raises CorpusTooLarge, in words

CPython stores a string at 1, 2 or 4 bytes per character, by its widest character. The
worker holds the documents once (core/repl/context_file.py): as one joined `context`
(the documents cut their text from it when read), or, when joining would widen a large
corpus (a few documents with emoji), as one string per document, each at its own width.
It reads the file a block at a time into the growing string, so it needs about

    BASE_MB + held + min(held, GROW_MB) + a block read and decoded

where held is the joined string (widest width x all characters) or the strings apart
(each document's width x its characters), and min(held, GROW_MB) is room for a copy of
the growing string should CPython not resize it in place (context_file._joined: before
its line is specialised the interpreter copies; measured up to 128 MB). A corpus
whose need passes FILL of the limit is refused: the rest is left for the model's own code
(a findall over `context`, lists of chunks). The estimate reads no text: a string's
width comes from its size in memory (sys.getsizeof).
"""

from __future__ import annotations

from typing import Any, Sequence

from core.repl.context_file import BLOCK_BYTES, context_form, text_width, width_and_chars

BASE_MB = 128        # the worker's interpreter, its modules and the protocol (VmSize ~110 MB measured)
GROW_MB = 128        # room for a copy of the growing string (see the module's docstring)
FILL = 0.9           # the share of the limit the documents may take
MB = 1024 * 1024


class CorpusTooLarge(ValueError):
    """The documents would not fit in the REPL worker's memory limit (the message says what to do)."""


def width(text: str) -> int:
    """Bytes per character CPython stores `text` with: 1, 2 or 4."""
    return text_width(text)


def need_bytes(documents: Sequence[Any]) -> tuple[int, int, int]:
    """(bytes the worker needs at its peak, UTF-8 bytes at most, documents with characters
    above U+FFFF that widen the joined `context`: 0 when the documents are held apart)."""
    chars = utf8 = apart = 0
    widest = 1
    wide_docs = 0
    sizes = []
    for d in documents:
        w, n = width_and_chars(d)                            # reads no text a Document knows the width of
        sizes.append((w, n))
        chars += n + len(d.path) + 9                         # "=== PATH ===\n" and the joins
        apart += w * n
        utf8 += n if w == 1 else n * (2 if w == 2 else 4)
        widest = max(widest, w)
        wide_docs += w == 4
    if context_form(sizes) == "str":
        held, grow = widest * chars, min(widest * chars, GROW_MB * MB)
    else:
        held, grow, wide_docs = apart, max((w * n for w, n in sizes), default=0), 0
    block = min(BLOCK_BYTES, utf8)
    peak = BASE_MB * MB + held + grow + block * (1 + widest)   # the read block, its decoded piece
    return peak, utf8, wide_docs


def check_fits(documents: Sequence[Any], memory_limit_mb: int | None) -> None:
    if not memory_limit_mb:
        return
    peak, utf8, wide_docs = need_bytes(documents)
    limit = memory_limit_mb * MB
    if peak <= limit * FILL:
        return
    chars = sum(width_and_chars(d)[1] for d in documents)
    why = ""
    if wide_docs:
        why = (f" ({wide_docs:,} document{'s hold' if wide_docs != 1 else ' holds'} characters beyond U+FFFF, "
               "such as emoji, which makes every character of `context` take 4 bytes)")
    raise CorpusTooLarge(
        f"The documents are too large for the REPL worker's memory: {len(documents):,} "
        f"document{'s' if len(documents) != 1 else ''}, "
        f"{chars:,} characters (up to {utf8 / MB:,.0f} MB of text), need about {peak / MB:,.0f} MB in the "
        f"worker{why}, and its memory limit is {memory_limit_mb:,} MB. Raise the memory limit "
        f"(Settings > Caps, or --memory-limit-mb) to at least {-(-int(peak / FILL) // MB):,} MB, "
        "ask about a narrower folder, or leave files out with a .rlmignore file.")
