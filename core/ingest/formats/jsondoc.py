"""JSON and JSON Lines: kept as the file's text (offsets and lines stay true to
the file), after checking that it parses. A file that does not parse is not
thrown away: it is kept as format "text" (its words are still readable)."""

from __future__ import annotations

import json
import logging

from core.ingest.formats.plain import decode_text
from core.ingest.model import Extracted

log = logging.getLogger(__name__)

VALIDATE_LIMIT = 64 * 1024 * 1024   # larger files are trusted by their extension


def extract(data: bytes, fmt: str) -> Extracted:
    text = decode_text(data)
    if len(text) > VALIDATE_LIMIT:
        return Extracted(fmt, text)
    try:
        if fmt == "jsonl":
            for number, line in enumerate(text.split("\n"), 1):
                if line.strip():
                    try:
                        json.loads(line)
                    except ValueError as exc:
                        raise ValueError(f"line {number}: {exc}") from None
        else:
            json.loads(text)
    except (ValueError, RecursionError) as exc:
        log.info("not valid %s, kept as text: %s", fmt, exc)
        return Extracted("text", text)
    return Extracted(fmt, text)
