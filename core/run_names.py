"""How a run is named to a person: by its question and when it started, never by its hex id.

    run_title({"question": "How many ERROR lines are in webshop.log?", "created_utc": 1764597780.0})
    # 'How many ERROR lines are in webshop.log? · 1 Dec 14:03'
    run_file_stem(run)
    # 'how-many-error-lines-are-in-2025-12-01-1403'

`run` is a store row (RunStore.get_run / list_runs: `question`, `created_utc`, `id`), or any
object with those attributes (a RunRecord's `question`, a RunOutcome). Every place that names a
run (History's tooltips, the Compare pickers and dialogs, export titles and file names) uses
these two, so a run has one name everywhere. Times are local, as the window shows them.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Any

from core.control_chars import escape_controls

TITLE_CHARS = 60         # the question's share of a title
STEM_WORDS = 5           # words of the question in a file name
STEM_CHARS = 40


def _field(run: Any, name: str) -> Any:
    if isinstance(run, dict):
        return run.get(name)
    return getattr(run, name, None)


def _started(run: Any) -> datetime | None:
    for name in ("created_utc", "started_utc", "ts"):
        value = _field(run, name)
        if isinstance(value, (int, float)) and value > 0:
            return datetime.fromtimestamp(float(value))
        if isinstance(value, datetime):
            return value.astimezone() if value.tzinfo else value
    return None


def short_question(question: str | None, limit: int = TITLE_CHARS) -> str:
    """The question on one line, cut at a word with "…" when longer than `limit`."""
    text = " ".join(escape_controls(question or "").split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,.;:") + "…"


def run_title(run: Any, seconds: bool = False) -> str:
    """'How many ERROR lines… · 1 Dec 14:03' ('… 14:03:27' with `seconds`, to tell apart two runs
    of one question in one minute); a run without a question is named by its id."""
    question = short_question(_field(run, "question"))
    if not question:
        run_id = str(_field(run, "id") or _field(run, "run_id") or "")
        question = f"run {run_id[:8]}" if run_id else "run"
    when = _started(run)
    if when is None:
        return question
    return f"{question} · {when.day} {when.strftime('%b %H:%M:%S' if seconds else '%b %H:%M')}"


def fork_line(forked_from: Any) -> str:
    """"Forked from turn 3 of <run name>; turns 1–2 rebuilt from the record." ('' if not a fork)."""
    if not isinstance(forked_from, dict) or not forked_from.get("turn"):
        return ""
    turn = int(forked_from["turn"])
    title = forked_from.get("title") or f"run {str(forked_from.get('run_id') or '')[:8]}"
    rebuilt = ("nothing before it to rebuild" if turn <= 1 else
               f"turn 1 rebuilt from the record" if turn == 2 else f"turns 1–{turn - 1} rebuilt from the record")
    return f"Forked from turn {turn} of {title}; {rebuilt}."


def run_heading(run: Any) -> str:
    """A report's heading: the whole question on one line and when it started
    ('How many ERROR lines are in webshop.log, and which hours had most? · 1 Dec 14:03');
    run_title cuts the question for a window title or a list."""
    question = " ".join(escape_controls(str(_field(run, "question") or "")).split())
    if not question:
        return run_title(run)
    when = _started(run)
    return f"{question} · {when.day} {when.strftime('%b %H:%M')}" if when else question


def run_file_stem(run: Any) -> str:
    """A file name without extension: the question's first words and the start time,
    lower-case ASCII letters, digits and dashes ('how-many-error-lines-are-2025-12-01-1403')."""
    plain = unicodedata.normalize("NFKD", str(_field(run, "question") or ""))
    plain = plain.encode("ascii", "ignore").decode("ascii").lower()
    words = re.findall(r"[a-z0-9]+", plain)[:STEM_WORDS]
    stem = "-".join(words)[:STEM_CHARS].strip("-")
    if not stem:
        run_id = re.sub(r"[^0-9a-z]", "", str(_field(run, "id") or _field(run, "run_id") or "").lower())
        stem = f"run-{run_id[:8]}" if run_id else "run"
    when = _started(run)
    return f"{stem}-{when.strftime('%Y-%m-%d-%H%M')}" if when else stem


def title_of(store: Any, run_id: str | None, seconds: bool = False) -> str:
    """run_title of a stored run, by id (`store.get_run`); a run not in the store: 'run 1a2b3c4d'."""
    if not run_id:
        return "run"
    try:
        run = store.get_run(run_id) if store is not None else None
    except Exception:          # a name is never worth an error: the short id is a name too
        run = None
    return run_title(run or {"id": run_id}, seconds)
