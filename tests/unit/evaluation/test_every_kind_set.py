"""The shipped question set of every kind (resources/evalsets/every_kind/): the files are what
the generator writes, it has at least 24 questions over eight kinds and inputs of 5k to 500k
characters, and every expected answer is computed again here from the files, independently
of the generator."""

import csv
import re
from pathlib import Path

from core.evaluation import check, load_question_set
from core.evaluation.questions import Question, documents_for

ROOT = Path(__file__).resolve().parents[3] / "resources" / "evalsets" / "every_kind"
KINDS = {"lookup", "list", "count", "sum", "date", "compare", "two-hop", "not-found"}


class Doc:
    def __init__(self, path: Path) -> None:
        self.path, self.text = path.name, path.read_text(encoding="utf-8")


def test_the_files_are_what_the_generator_writes():
    from resources.evalsets.every_kind.generate import build
    files, questions = build()
    for name, text in files.items():
        assert (ROOT / "documents" / name).read_text(encoding="utf-8") == text, name
    assert len(load_question_set(ROOT / "questions.jsonl").questions) == len(questions)


def test_at_least_24_questions_of_eight_kinds_over_5k_to_500k_characters():
    qset = load_question_set(ROOT / "questions.jsonl")
    docs = [Doc(p) for p in sorted((ROOT / "documents").iterdir())]
    assert len(qset.questions) >= 24
    kinds = {q.kind for q in qset.questions}
    assert kinds == KINDS and all(sum(q.kind == k for q in qset.questions) >= 3 for k in KINDS)
    sizes = [sum(len(d.text) for d in documents_for(q, docs)) for q in qset.questions]
    assert min(sizes) >= 5_000 and max(sizes) >= 500_000


def test_every_expected_answer_holds_for_the_files():
    qset = load_question_set(ROOT / "questions.jsonl")
    docs = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "documents").iterdir()}
    log = docs["ferry_log.txt"].splitlines()
    rows = list(csv.DictReader(docs["fares.csv"].splitlines()))
    y23, y24 = docs["inspections_2023.md"], docs["inspections_2024.md"]
    people = lambda text: set(re.findall(r"Inspector: ([A-Z]\w+ [A-Z]\w+)\.", text))   # noqa: E731
    roster, registry = docs["crew_roster.txt"], docs["vessel_registry.txt"]

    def port_of(code):
        return re.search(rf"{code}: [^,]+, home port ([A-Z]\w+(?: [A-Z]\w+)?),", registry).group(1)

    gannet = [int(r["passengers"]) for r in rows if r["route"] == "Sorrel Point - Gannet Isle"]
    truth = {
        "memo-gritting": re.search(r"Gritting\. (.*?)\n", docs["memo.txt"]).group(1),
        "memo-parking": re.search(r"Parking on the quay\. (.*?)\n", docs["memo.txt"]).group(1),
        "memo-storm": re.search(r"Storm rule\. (.*?)\n", docs["memo.txt"]).group(1),
        "archive-first-ferry": next(line for line in docs["archive.txt"].splitlines() if "roll-on" in line),
        "keepers": next(line for line in docs["archive.txt"].splitlines() if "lighthouse keepers" in line),
        "vessels": ", ".join(re.findall(r"VX-\d+: (MV \w+)", registry)),
        "inspectors-2024": ", ".join(sorted(people(y24))),
        "delayed": str(sum(" DELAYED " in line for line in log)),
        "cancelled": str(sum(" CANCELLED " in line for line in log)),
        "failed-2023": str(y23.count("Result: failed")),
        "passengers-total": str(sum(int(r["passengers"]) for r in rows)),
        "revenue-july": f"{sum(float(r['revenue_eur']) for r in rows if r['month'] == '2024-07'):.2f}",
        "avg-gannet": f"{sum(gannet) / len(gannet):.2f}",
        "fault-day": next(line for line in log if "FAULT" in line and "MV Petrel" in line).split()[0],
        "storm-year": re.search(r"storm of (\d{4}) tore the pier", docs["archive.txt"]).group(1),
        "winter-start": re.search(r"Winter timetable\. From (the first Monday of November)", docs["memo.txt"]).group(1),
        "more-failed": "2023" if y23.count("Result: failed") > y24.count("Result: failed") else "2024",
        "both-years": ", ".join(sorted(people(y23) & people(y24))),
        "new-2024": ", ".join(sorted(people(y24) - people(y23))),
        "varga-port": port_of(re.search(r"Master Ilse Varga commands vessel (VX-\d+)", roster).group(1)),
        "sark-vessel": re.search(rf"{re.search(r'Ruben Sark serves on vessel (VX-[0-9]+)', roster).group(1)}: (MV \w+)",
                                 registry).group(1),
        "kessel-port": port_of(re.search(r"Master Marit Kessel commands vessel (VX-\d+)", roster).group(1)),
        "no-ticket-price": "The memo does not mention ticket prices.",
        "no-keeper-1990": "This is not in the documents.",
        "no-diesel": "The documents do not give diesel use.",
    }
    assert {q.id for q in qset.questions} == set(truth)
    for question in qset.questions:
        assert check(question, truth[question.id]).correct, (question.id, truth[question.id])
    # ... and a count, a made-up sum or a plausible wrong answer does not pass
    wrong = {"delayed": "1", "passengers-total": "12", "varga-port": "Kelp Bay", "no-diesel": "4,200 litres",
             "fault-day": "2024-09-18", "more-failed": "2024" if truth["more-failed"] == "2023" else "2023"}
    for question in qset.questions:
        if question.id in wrong:
            assert not check(question, wrong[question.id]).correct, question.id


def test_a_question_over_a_file_not_given_is_refused_in_words():
    import pytest
    from core.evaluation.questions import QuestionSetError
    q = Question(id="x", question="?", expected="a", documents=("missing.txt",))
    with pytest.raises(QuestionSetError, match="question 'x' is asked over missing.txt, which is not among the 1 "):
        documents_for(q, [Doc(ROOT / "documents" / "memo.txt")])
