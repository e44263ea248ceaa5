"""A question set: one JSON object per line of a .jsonl file.

    {"question": "...", "expected": 92, "checker": "number"}
    {"id": "cause", "question": "...", "expected": "certificate", "checker": "contains"}

Fields: `question` (text), `expected` (text or number; for `contains` also a list
of texts that must all appear), `checker` (exact | number | contains | regex |
judge; default exact), optional `id` (default q1, q2 ... by line), optional
`tolerance` (number checker: absolute; default 1e-6 relative). Blank lines and
lines starting with `#` are skipped. Every problem is reported with its line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHECKERS = ("exact", "number", "contains", "regex", "judge")


class QuestionSetError(ValueError):
    """The question set cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    expected: Any
    checker: str = "exact"
    tolerance: float | None = None

    def public_dict(self) -> dict[str, Any]:
        data = {"id": self.id, "question": self.question, "expected": self.expected,
                "checker": self.checker}
        if self.tolerance is not None:
            data["tolerance"] = self.tolerance
        return data


@dataclass(frozen=True)
class QuestionSet:
    name: str
    path: str
    sha256: str
    questions: tuple[Question, ...] = field(default_factory=tuple)

    @property
    def needs_judge(self) -> bool:
        return any(q.checker == "judge" for q in self.questions)


def load_question_set(path: Path) -> QuestionSet:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise QuestionSetError(f"cannot read the question set {path}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise QuestionSetError(f"{path} is not UTF-8 text (byte {exc.start})") from exc
    questions: list[Question] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path.name} line {number}"
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise QuestionSetError(f"{where}: not a JSON object ({exc.msg})") from None
        question = _question(data, where, default_id=f"q{len(questions) + 1}")
        if question.id in seen:
            raise QuestionSetError(f"{where}: the id {question.id!r} is used twice")
        seen.add(question.id)
        questions.append(question)
    if not questions:
        raise QuestionSetError(f"{path} holds no questions (one JSON object per line)")
    return QuestionSet(name=path.stem, path=str(path.resolve()), sha256=hashlib.sha256(raw).hexdigest(),
                       questions=tuple(questions))


def _question(data: Any, where: str, default_id: str) -> Question:
    if not isinstance(data, dict):
        raise QuestionSetError(f"{where}: expected a JSON object, got {type(data).__name__}")
    text = data.get("question")
    if not isinstance(text, str) or not text.strip():
        raise QuestionSetError(f"{where}: 'question' must be a non-empty text")
    if "expected" not in data or data["expected"] is None:
        raise QuestionSetError(f"{where}: 'expected' is missing")
    checker = str(data.get("checker") or "exact").strip().lower()
    if checker not in CHECKERS:
        raise QuestionSetError(f"{where}: unknown checker {data.get('checker')!r}; use one of "
                               + ", ".join(CHECKERS))
    expected = data["expected"]
    if checker == "number":
        try:
            float(str(expected).replace(",", ""))
        except ValueError:
            raise QuestionSetError(f"{where}: checker 'number' needs a number as 'expected', "
                                   f"got {expected!r}") from None
    elif checker == "contains":
        items = expected if isinstance(expected, list) else [expected]
        if not items or not all(isinstance(i, (str, int, float)) and str(i).strip() for i in items):
            raise QuestionSetError(f"{where}: checker 'contains' needs a text or a list of texts")
    elif checker == "regex":
        import re
        try:
            re.compile(str(expected))
        except re.error as exc:
            raise QuestionSetError(f"{where}: 'expected' is not a valid regular expression: {exc}") from None
    tolerance = data.get("tolerance")
    if tolerance is not None:
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or tolerance < 0:
            raise QuestionSetError(f"{where}: 'tolerance' must be a number >= 0")
        tolerance = float(tolerance)
    qid = str(data.get("id") or default_id).strip()
    return Question(id=qid, question=text.strip(), expected=expected, checker=checker, tolerance=tolerance)
