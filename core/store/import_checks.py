"""What a run file may carry into the database: ids in the app's own form, numbers that are
finite and in range, sizes within bounds, and a config that decides nothing about where
calls go or whose key they carry.

A run file is hostile input (it may come from anyone). `checked_json` parses it so that a
number too large to be a number (a 5,000-digit integer, 1e400) is kept as a marker and
refused by `check_numbers` with the field's name, never a traceback. `clean_config` drops
every setting that names a URL or a key owner (`ROUTING_KEYS`) and any key that is no
setting at all, and returns what it dropped so the importer can say so.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# Run and call ids: the app writes 32 hex digits (uuid4) and call ids like R.t3.c2; a file
# may carry any word of letters, digits, '-' and '_' (dot-separated for call ids), never a
# path ("../../x") or a control character.
RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
CALL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,40}")

MAX_NUMBER = 10 ** 15            # any number in the file, in absolute value (tokens, dollars, ms, times)
MAX_TEXT_CHARS = 64 << 20        # one string field outside a source's text
MAX_ROWS = 2_000_000             # events or calls or sources
MAX_FILE_BYTES = 2 << 30         # the whole file

# Settings a run file never decides: the URLs its calls go to, whose key goes there, and the
# extra sub-call models with their URLs. A re-run takes these from the user's own settings.
ROUTING_KEYS = ("api_base", "sub_api_base", "api_key_from", "sub_call_models")
# Settings of the machine that runs, not of the question: the user's, never the file's.
LOCAL_KEYS = ("memory_limit_mb", "require_full_sandbox")


class HugeNumber:
    """A number in the file that no field may hold; `check_numbers` names the field."""

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-").split(".")[0].split("e")[0].split("E")[0])
        self.text = text[:20]

    def __repr__(self) -> str:
        return f"<number {self.text}... of {self.digits:,} digits>"


def _parse_int(text: str) -> int | HugeNumber:
    if len(text.lstrip("-")) > 18:
        return HugeNumber(text)
    return int(text)


def _parse_float(text: str) -> float | HugeNumber:
    value = float(text)
    return value if math.isfinite(value) else HugeNumber(text)


def checked_json(raw: bytes) -> Any:
    """json.loads where no number is ever built from more than 18 digits or overflows."""
    return json.loads(raw, parse_int=_parse_int, parse_float=_parse_float, parse_constant=HugeNumber)


def number_problem(value: Any) -> str | None:
    """Why `value` cannot be stored as a number, or None."""
    if isinstance(value, HugeNumber):
        if value.text.lstrip("-").lower() in ("nan", "infinity") or "e" in value.text.lower():
            return f"is {value.text}, not a finite number"
        return f"is a number of {value.digits:,} digits (at most {MAX_NUMBER:.0e} is accepted)"
    if isinstance(value, float) and not math.isfinite(value):
        return f"is {value}, not a finite number"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) > MAX_NUMBER:
        return f"is {value:.3g}, out of range (at most {MAX_NUMBER:.0e} is accepted)"
    return None


def check_numbers(value: Any, where: str) -> str | None:
    """The first field under `where` holding a number out of range, as a sentence; or None."""
    problem = number_problem(value)
    if problem:
        return f"{where} {problem}"
    if isinstance(value, dict):
        for key, item in value.items():
            found = check_numbers(item, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = check_numbers(item, f"{where}[{i}]")
            if found:
                return found
    return None


def check_sizes(value: Any, where: str, *, text_ok: tuple[str, ...] = ()) -> str | None:
    """The first string over MAX_TEXT_CHARS (fields named in `text_ok` excepted)."""
    if isinstance(value, str):
        if len(value) > MAX_TEXT_CHARS:
            return f"{where} is {len(value):,} characters long (at most {MAX_TEXT_CHARS:,})"
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in text_ok:
                found = check_sizes(item, f"{where}.{key}")
                if found:
                    return found
    elif isinstance(value, list):
        if len(value) > MAX_ROWS:
            return f"{where} has {len(value):,} entries (at most {MAX_ROWS:,})"
        for i, item in enumerate(value):
            found = check_sizes(item, f"{where}[{i}]", text_ok=text_ok)
            if found:
                return found
    return None


def clean_config(config: dict[str, Any], field_names: set[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the config without routing, local or unknown settings, what was dropped: name -> value)."""
    kept: dict[str, Any] = {}
    dropped: dict[str, Any] = {}
    for key, value in config.items():
        if key in ROUTING_KEYS or key in LOCAL_KEYS or key not in field_names:
            if value not in (None, {}, [], ""):
                dropped[key] = value
        else:
            kept[key] = value
    return kept, dropped


def describe_dropped(dropped: dict[str, Any]) -> str:
    """One line for the user: what of the file's config was not imported."""
    parts = []
    for key, value in dropped.items():
        shown = value if isinstance(value, str) else json.dumps(value, default=str)
        parts.append(f"{key} ({shown[:120]})")
    return ("not imported from the file (a run file never decides where calls go, whose key they "
            "carry, or this computer's limits; a re-run uses your settings): " + ", ".join(parts))
