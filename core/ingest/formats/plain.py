"""Text, Markdown, source code, CSV and TSV: decoded and newline-normalised, kept as is.

CSV/TSV stay as their text (one row per line), so a model can split or parse
them itself; addresses say "row N" from the line number (header = row 1).
"""

from __future__ import annotations

import re

from core.ingest.decode import decode_bytes
from core.ingest.model import BINARY, ExtractError, Extracted

# Control characters but tab, newline, form feed, carriage return and escape; DEL; U+FFFD.
# One regex pass in C: a per-character generator took 5-25 ms per file, most of reading a
# folder of text files (tests/bench/bench_gigabytes.py).
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f\ufffd]")


def decode_text(data: bytes) -> str:
    """Decode and refuse text that is really binary (control characters or
    replacement characters over 5% of a sample after decoding)."""
    text, encoding = decode_bytes(data)
    sample = text[:65536]
    if sample:
        bad = len(_CONTROL.findall(sample))
        if bad > 0.05 * len(sample):
            raise ExtractError(BINARY, f"decoded as {encoding} but {bad} of {len(sample)} "
                                       "characters are control or replacement characters")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def extract(data: bytes, fmt: str) -> Extracted:
    return Extracted(fmt, decode_text(data))
