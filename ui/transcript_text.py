"""Text helpers of the transcript (no Qt): long runs made breakable, REPL output
cut to its head, a retried call in one line, what an unfinished step says."""

from __future__ import annotations

import re

OUTPUT_LINES = 25            # REPL output shown before "Show all"
OUTPUT_CHARS = 1500
_LONG_RUN = re.compile(r"\S{120,}")
# What an unfinished turn or cell says once the run is over (never "running…" after the end).
ENDED_WORDS = {"cancelled": "stopped before it ended", "failed": "cut off: the run failed",
               "capped": "cut off at a cap", "finished": "not finished"}
RETRY_MARK = "; retrying (attempt "


def breakable(text: str) -> str:
    """Lets very long unbroken runs (base64, xxxx...) wrap in a label."""
    return _LONG_RUN.sub(lambda m: "\u200b".join(m.group(0)[i:i + 16] for i in range(0, len(m.group(0)), 16)),
                         text)


def retry_line(message: str) -> str:
    """"Root call failed (<long error>); retrying (attempt 3)." in one short line."""
    head, _, attempt = message.partition(RETRY_MARK)
    what, _, why = head.partition(" (")
    why = why.rstrip(")")
    if len(why) > 140:
        why = why[:140] + "…"
    return f"{what}: {why}. Retrying, attempt {attempt.rstrip('.').rstrip(')')}."


def truncate_output(text: str) -> tuple[str, bool]:
    """The head of a long REPL output, and whether anything was cut."""
    text = text.rstrip("\n")
    lines = text.splitlines()
    if len(lines) <= OUTPUT_LINES and len(text) <= OUTPUT_CHARS:
        return text, False
    head = "\n".join(lines[:OUTPUT_LINES])[:OUTPUT_CHARS]
    return head, True
