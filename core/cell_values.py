"""A CSV cell as a value, and a CSV text's delimiter: shared by the tables parsed at ingestion
(core/ingest/formats/tables.py) and the big tables the REPL worker reads from `context`
(core/repl/table_rows.py), outside core/ingest so the worker does not import the ingestion
(15 MB resident) to read a row.

Cells: empty -> None; numbers -> int or float ("1,234.5" and "007" stay text: a thousands
separator or a leading zero is not a plain number).
"""

from __future__ import annotations

import re

_INT = re.compile(r"^[+-]?(?:0|[1-9]\d*)$")
_FLOAT = re.compile(r"^[+-]?(?:0|[1-9]\d*)?\.\d+(?:[eE][+-]?\d+)?$|^[+-]?(?:0|[1-9]\d*)(?:\.\d*)?[eE][+-]?\d+$|^[+-]?(?:0|[1-9]\d*)\.\d*$")


_NUMBER_START = frozenset("+-.0123456789")


def typed(text: str) -> object:
    """A CSV cell as a value: None, int, float or the text itself."""
    if not text:
        return None
    if text[0] not in _NUMBER_START:          # most text cells: decided by one character
        if not text[0].isspace():
            return text
        value = text.strip()
        if not value:
            return None
        if value[0] not in _NUMBER_START:
            return text
    else:
        value = text.strip() if text[-1].isspace() else text
    if value.isascii():
        if value.isdigit():                   # the common cases without a regex
            return int(value) if len(value) < 19 and (value[0] != "0" or len(value) == 1) \
                else text
        head, dot, tail = value.partition(".")
        if dot and tail.isdigit() and (head.isdigit() or not head) and \
                (len(head) < 2 or head[0] != "0"):
            return float(value)
        if "-" in value[1:] and "e" not in value and "E" not in value:
            return text                       # dates, ranges, phone numbers
    if len(value) < 19 and _INT.match(value):
        return int(value)
    if len(value) < 40 and _FLOAT.match(value):
        number = float(value)
        if number == number and number not in (float("inf"), float("-inf")):
            return number
    return text


def sniff_delimiter(text: str) -> str:
    """The delimiter of CSV text among , ; | (the one most steady over its first lines)."""
    sample = text[:20000]
    lines = [line for line in sample.splitlines()[:20] if line.strip()]
    best, score = ",", -1
    for candidate in (",", ";", "|"):
        counts = [line.count(candidate) for line in lines]
        if counts and min(counts) > 0:
            steady = sum(1 for c in counts if c == counts[0])
            if steady > score:
                best, score = candidate, steady
    return best
