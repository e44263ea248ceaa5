"""core/run_names.py: a run is named by its question and start time, never by its hex id."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import pytest

from core.run_names import run_file_stem, run_title, short_question


@pytest.fixture(autouse=True)
def utc():
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


STARTED = 1764597780.0          # 2025-12-01 14:03 UTC


def test_title_is_question_and_time():
    run = {"id": "24953504aa", "question": "How many ERROR lines are in webshop.log?", "created_utc": STARTED}
    assert run_title(run) == "How many ERROR lines are in webshop.log? · 1 Dec 14:03"


def test_seconds_tell_two_runs_of_a_minute_apart():
    run = {"question": "Sum the sales", "created_utc": STARTED + 27}
    assert run_title(run, seconds=True) == "Sum the sales · 1 Dec 14:03:27"


def test_long_question_is_cut_at_a_word():
    q = ("Find the outage in the web shop log: when did card payments start failing and when did "
         "they work again, how many orders failed")
    title = run_title({"question": q, "created_utc": STARTED})
    assert title == "Find the outage in the web shop log: when did card payments… · 1 Dec 14:03"
    assert "24953504" not in title


def test_objects_and_missing_fields():
    @dataclass
    class Record:
        run_id: str
        question: str

    assert run_title(Record("abcdef1234", "Sum the sales\nper region")) == "Sum the sales per region"
    assert run_title({"id": "abcdef1234", "question": "", "created_utc": STARTED}) == "run abcdef12 · 1 Dec 14:03"
    assert short_question("a\x1b]52;c;evil\x07 b") == "a\\u001b]52;c;evil\\u0007 b"


def test_file_stem():
    run = {"id": "24953504", "question": "How many ERROR lines are in webshop.log?", "created_utc": STARTED}
    assert run_file_stem(run) == "how-many-error-lines-are-2025-12-01-1403"
    assert run_file_stem({"id": "ab/../cd", "question": "Ünïcode? ../../etc", "created_utc": STARTED}) \
        == "unicode-etc-2025-12-01-1403"
    assert run_file_stem({"id": "24953504", "question": "???"}) == "run-24953504"
