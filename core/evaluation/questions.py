"""A question set: one JSON object per line of a .jsonl file.

    {"question": "...", "expected": 92, "checker": "number"}
    {"id": "cause", "question": "...", "expected": "certificate", "checker": "contains"}

Fields: `question` (text), `expected` (text or number; for `contains` also a list
of texts that must all appear), `checker` (exact | number | contains | regex |
judge; default exact), optional `id` (default q1, q2 ... by line), optional
`tolerance` (number checker: absolute; default 1e-6 relative), optional `kind` (what
the question asks for: lookup, list, count, sum, date, compare, two-hop, not-found...;
the scorecard gives each kind its own score), optional `documents` (a list of file
names: the question is asked over those of the given documents only, so one set can ask
over inputs of different sizes; default all of them), optional `absent` (contains checker: texts a
right answer must not hold, like the one inspector a "which do not appear" question excludes).
Blank lines and
lines starting with `#` are skipped. Every problem is reported with its line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

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
    kind: str = ""
    documents: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()

    def public_dict(self) -> dict[str, Any]:
        data = {"id": self.id, "question": self.question, "expected": self.expected,
                "checker": self.checker}
        if self.kind:
            data["kind"] = self.kind
        if self.documents:
            data["documents"] = list(self.documents)
        if self.tolerance is not None:
            data["tolerance"] = self.tolerance
        if self.absent:
            data["absent"] = list(self.absent)
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
    kind = data.get("kind") or ""
    if not isinstance(kind, str):
        raise QuestionSetError(f"{where}: 'kind' must be a text, like \"count\" or \"lookup\"")
    names = data.get("documents") or []
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
        raise QuestionSetError(f"{where}: 'documents' must be a list of file names")
    absent = data.get("absent") or []
    if not isinstance(absent, list) or not all(isinstance(a, str) and a.strip() for a in absent) or (
            absent and checker != "contains"):
        raise QuestionSetError(f"{where}: 'absent' must be a list of texts, with the checker 'contains'")
    return Question(id=qid, question=text.strip(), expected=expected, checker=checker, tolerance=tolerance,
                    kind=kind.strip().lower(), documents=tuple(n.strip() for n in names),
                    absent=tuple(a.strip() for a in absent))


def documents_for(question: Question, documents: Sequence[Any]) -> list[Any]:
    """The documents `question` is asked over: those its `documents` names (a path equal to a
    name or ending in /name), else all. Raises QuestionSetError when a name matches none."""
    if not question.documents:
        return list(documents)
    picked = []
    for name in question.documents:
        found = [d for d in documents if d.path == name or d.path.endswith("/" + name)]
        if not found:
            raise QuestionSetError(f"question {question.id!r} is asked over {name}, which is not among the "
                                   f"{len(documents):,} documents given")
        picked += [d for d in found if all(d is not p for p in picked)]
    return picked
