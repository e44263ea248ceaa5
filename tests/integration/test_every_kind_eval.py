"""The question set of every kind (resources/evalsets/every_kind/) run by `rlm-studio eval` as a
real process against the scripted server: each question is asked over its own documents, and
the scorecard reports a score per kind of question."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.evaluation import load_question_set
from tests.integration.test_cli_ask import cli_env

SET = Path(__file__).resolve().parents[2] / "resources" / "evalsets" / "every_kind"
RIGHT = {"count", "lookup", "list"}          # the scripted model answers these kinds right, the rest not


def answer(question):
    if question.kind not in RIGHT:
        return "I do not know."
    expected = question.expected
    return ", ".join(map(str, expected)) if isinstance(expected, list) else str(expected)


@pytest.mark.timeout(900)
def test_the_every_kind_set_runs_with_a_score_per_kind(server, tmp_path):
    qset = load_question_set(SET / "questions.jsonl")
    by_text = {json.dumps(q.question)[1:-1]: q for q in qset.questions}
    sizes = {}

    def root(request):
        text = json.dumps(request.messages)
        q = next(q for t, q in by_text.items() if t in text)
        first = request.messages[1]["content"]
        sizes[q.id] = first
        return f"FINAL({json.dumps(answer(q))})"
    server.script("good", fn=root)
    cmd = [sys.executable, "-m", "app.main", "eval", str(SET / "questions.jsonl"), str(SET / "documents"),
           "--api-base", server.url, "--pair", "openai/good:openai/good", "--price", "openai/good=1,2",
           "--max-iterations", "3", "--max-depth", "0", "--parallel", "4"]
    proc = subprocess.run(cmd + ["--json"], env=cli_env(tmp_path), capture_output=True, text=True, timeout=800)
    assert proc.returncode == 0, proc.stderr
    card = json.loads(proc.stdout)
    [line] = card["lines"]
    assert line["answers"] == 25
    kinds = line["by_kind"]
    assert set(kinds) == {"lookup", "list", "count", "sum", "date", "compare", "two-hop", "not-found"}
    for kind, entry in kinds.items():
        right = entry["answers"] if kind in RIGHT else 0
        assert (entry["correct"], entry["accuracy"]) == (right, right / entry["answers"]), kind
    # Each question was asked over its own documents: the memo alone, or all eight.
    assert "8 documents" not in sizes["memo-gritting"] and "memo.txt" in sizes["memo-gritting"]
    assert "ferry_log.txt" not in sizes["memo-gritting"]
    assert "ferry_log.txt" in sizes["no-diesel"] and "archive.txt" in sizes["no-diesel"]
    # The text scorecard says it per kind.
    shown = subprocess.run([sys.executable, "-m", "app.main", "scorecards", card["evaluation_id"]],
                           env=cli_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "by kind: compare 0/3 · count 3/3 · date 0/3 · list 3/3 · lookup 4/4 · not-found 0/3 · " \
           "sum 0/3 · two-hop 0/3" in shown.stdout, shown.stdout
