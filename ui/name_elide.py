"""File names cut where they are alike, not where they differ.

A list of "2024-Q1-report-with-a-long-name.md", "2024-Q2-report-…" cut in the middle
reads "2024-…name.md" on every row. `differing_parts` finds, for each name, the part
that tells it from the others (past the longest start and end it shares with any other
name); `elide_name` keeps that part, the start when there is room, and the extension:

    "2024-Q1-report-with-a-long-name.md"  ->  "2024-Q1-report…md"  /  "…24-Q1….md"
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

ELLIPSIS = "…"


def _common_start(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def differing_parts(names: Iterable[str]) -> dict[str, tuple[int, int]]:
    """name -> (start, end): name[start:end] is what no other name shares at its start or
    its end (neighbours in sorted order have the longest shared start, and in the order
    of the reversed names the longest shared end). A name alone is all its own."""
    unique = sorted(set(names))
    starts = dict.fromkeys(unique, 0)
    ends = dict.fromkeys(unique, 0)
    for a, b in zip(unique, unique[1:]):
        n = _common_start(a, b)
        starts[a], starts[b] = max(starts[a], n), max(starts[b], n)
    backwards = sorted(unique, key=lambda s: s[::-1])
    for a, b in zip(backwards, backwards[1:]):
        n = _common_start(a[::-1], b[::-1])
        ends[a], ends[b] = max(ends[a], n), max(ends[b], n)
    parts = {}
    for name in unique:
        start, end = starts[name], len(name) - ends[name]
        parts[name] = (min(start, end), max(start, end))
    return parts


def _extension(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:] if 0 < dot and len(name) - dot <= 8 else ""


def elide_name(name: str, part: tuple[int, int], fits: Callable[[str], bool]) -> str | None:
    """`name` cut to what `fits`, keeping `part` (from differing_parts) and the extension
    (when even that is too wide: the start of the part); None when nothing of it fits
    (the caller cuts as it would anyway)."""
    if fits(name):
        return name
    start, end = part
    ext = _extension(name)
    body = len(name) - len(ext)
    if end < body:      # the name's own part ends before the extension: cut its shared end
        for keep in range(len(name) - end - 1, len(ext) - 1, -1):     # as much of the end as fits
            text = name[:end] + ELLIPSIS + name[len(name) - keep:]
            if fits(text):
                return text
        body_end, tail = end, ELLIPSIS + ext
    else:               # it differs up to the end (or in the extension)
        body_end, tail = len(name), ""
    for back in (3, 2, 1, 0):       # a few shared characters before the own part, if they fit
        begin = max(0, start - back)
        text = (ELLIPSIS if begin else "") + name[begin:body_end] + tail
        if fits(text):
            return text
    if start > 0:                   # narrower still: the own part's start, without the extension
        for end in range(body_end, start, -1):
            text = ELLIPSIS + name[start:end] + ELLIPSIS
            if fits(text):
                return text
    return None
