"""The shipped samples: present, small, deterministic, with questions; the
follow-up helpers that need no window."""

from __future__ import annotations

import subprocess
import sys

from core.follow_up import fresh_question, rebuild_available
from core.samples import SamplesMissing, sample_set, samples_dir


def test_samples_are_there_with_questions_and_a_few_formats():
    s = sample_set()
    names = {p.suffix for p in s.files()}
    assert {".md", ".txt", ".csv", ".log"} <= names
    assert 2 <= len(s.questions) <= 3 and all(q.endswith("?") for q in s.questions)
    assert 100_000 < s.size() < 300_000
    assert len(s.files()) == 10


def test_the_generator_writes_the_same_bytes(tmp_path):
    before = {p.name: p.read_bytes() for p in sample_set().files()}
    subprocess.run([sys.executable, "-m", "resources.samples.generate"], check=True, cwd=samples_dir().parents[1])
    after = {p.name: p.read_bytes() for p in sample_set().files()}
    assert before == after


def test_missing_samples_say_so(tmp_path):
    try:
        sample_set(tmp_path)
    except SamplesMissing as exc:
        assert "questions.json" in str(exc)
    else:
        raise AssertionError("no error for a folder without samples")


def test_fresh_question_writes_the_background_openly():
    q = fresh_question("How many words?", "3", "And the last one?")
    assert q.startswith("Earlier question about these documents: How many words?")
    assert "Earlier answer: 3" in q and q.endswith("Follow-up question: And the last one?")
    assert "[…]" in fresh_question("q", "x" * 5000, "f", answer_limit=100)
    assert isinstance(rebuild_available(), bool)


def test_the_new_core_modules_import_no_qt():
    code = ("import sys, core.discovery, core.samples, core.follow_up; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync', 'ui', 'app', 'litellm')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=samples_dir().parents[1])
    assert done.returncode == 0, done.stdout + done.stderr
