"""Whether the documents fit in the REPL worker's memory, decided before the run.

    check_fits(documents, memory_limit_mb)     # raises CorpusTooLarge, in words

The worker holds `context` (all documents joined, each under a header line) and
`documents` (one string per file). CPython stores a string at 1, 2 or 4 bytes per
character, by its widest character, so one emoji (above U+FFFF) makes the whole of
`context` take 4 bytes per character. While `context` is decoded the mapped file is held
beside it. So the worker needs about

    BASE_MB + max(file + context, context + documents)

where file is the UTF-8 size, context = widest width x characters, and documents =
each document's own width x its characters. A corpus whose need passes FILL of the
limit is refused: the rest is left for the model's own code (a findall over `context`,
lists of chunks). The estimate reads no text: a string's width comes from its size in
memory (sys.getsizeof), so a 2 GB corpus is checked in microseconds per document.
"""

from __future__ import annotations

import sys
from typing import Any, Sequence

BASE_MB = 128        # the worker's interpreter, its modules and the protocol (VmSize ~110 MB measured)
FILL = 0.9           # the share of the limit the documents may take
MB = 1024 * 1024
_EMPTY = sys.getsizeof("")


class CorpusTooLarge(ValueError):
    """The documents would not fit in the REPL worker's memory limit (the message says what to do)."""


def width(text: str) -> int:
    """Bytes per character CPython stores `text` with: 1, 2 or 4."""
    if text.isascii():
        return 1
    per = (sys.getsizeof(text) - _EMPTY) / (len(text) + 1)
    return 4 if per > 2.5 else 2 if per > 1.5 else 1


def need_bytes(documents: Sequence[Any]) -> tuple[int, int, int]:
    """(bytes the worker needs at its peak, UTF-8 bytes at most, documents with characters above U+FFFF)."""
    chars = utf8 = docs = 0
    widest = 1
    wide_docs = 0
    for d in documents:
        text = d.text
        w = width(text)
        n = len(text) + len(d.path) + 9                      # "=== PATH ===\n" and the joins
        chars += n
        docs += w * len(text)
        utf8 += len(text) if w == 1 else len(text) * (2 if w == 2 else 4)
        widest = max(widest, w)
        wide_docs += w == 4
    context = widest * chars
    peak = BASE_MB * MB + max(utf8 + context + (chars if widest > 1 else 0), context + docs)
    return peak, utf8, wide_docs


def check_fits(documents: Sequence[Any], memory_limit_mb: int | None) -> None:
    if not memory_limit_mb:
        return
    peak, utf8, wide_docs = need_bytes(documents)
    limit = memory_limit_mb * MB
    if peak <= limit * FILL:
        return
    chars = sum(len(d.text) for d in documents)
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
