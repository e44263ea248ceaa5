"""The shipped question set over the sample documents: every expected answer is
computed again here from the files, independently of the set."""

import csv
import re
from collections import Counter

from core.evaluation import check, load_question_set
from core.samples import samples_dir


def test_every_expected_answer_holds_for_the_sample_files():
    root = samples_dir()
    qset = load_question_set(root / "eval_questions.jsonl")
    docs = root / "documents"
    log = (docs / "webshop.log").read_text(encoding="utf-8").splitlines()
    rows = list(csv.DictReader((docs / "sales.csv").open(encoding="utf-8")))
    revenue = Counter()
    for row in rows:
        revenue[row["product"]] += float(row["revenue_usd"])
    reports = {p.stem: p.read_text(encoding="utf-8") for p in (docs / "reports").iterdir()}
    truth = {
        "failed-card-payments": str(sum(1 for line in log if "card payment failed" in line)),
        "outage-cause": next(line for line in log if "card payment failed" in line),
        "error-lines": str(sum(1 for line in log if re.match(r"\S+ \S+ ERROR ", line))),
        "top-product": revenue.most_common(1)[0][0],
        "revenue-2024": f"{sum(float(r['revenue_usd']) for r in rows if r['month'].startswith('2024')):.1f}",
        "report-371822": next(name for name, text in reports.items() if "$371,822" in text),
    }
    assert {q.id for q in qset.questions} == set(truth)
    for question in qset.questions:
        assert check(question, truth[question.id]).correct, (question.id, truth[question.id])
    assert truth["failed-card-payments"] == "92" and truth["error-lines"] == "95"
