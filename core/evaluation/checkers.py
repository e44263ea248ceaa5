"""Is an answer right? One function per checker of a question set.

- exact:    the same text after trimming, case folding, collapsing whitespace and
            dropping surrounding quotes, backticks and a final full stop.
- number:   some number written in the answer equals `expected` (thousands
            separators allowed; within `tolerance` if given, else 1e-6 relative).
- contains: every expected text appears in the answer (case-insensitive).
- regex:    `re.search(expected, answer, IGNORECASE | DOTALL)` matches.
- judge:    a model the user names reads question, expected and answer and says
            CORRECT or WRONG (check_with_judge); its cost is reported with the verdict.
No answer at all (a capped or failed run) is always wrong.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from core.evaluation.questions import Question

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class CheckResult:
    correct: bool
    detail: str
    judge_cost_usd: float = 0.0


def normalize(text: str) -> str:
    text = " ".join(str(text).split()).casefold()
    for _ in range(3):
        text = text.strip().strip("\"'`*").rstrip(".").strip()
    return text


def numbers_in(text: str) -> list[float]:
    found = []
    for match in _NUMBER.finditer(text):
        try:
            found.append(float(match.group(0).replace(",", "")))
        except ValueError:
            continue
    return found


def check(question: Question, answer: str | None) -> CheckResult:
    if answer is None or not str(answer).strip():
        return CheckResult(False, "no answer")
    answer = str(answer)
    kind, expected = question.checker, question.expected
    if kind == "exact":
        ok = normalize(answer) == normalize(str(expected))
        return CheckResult(ok, "same text" if ok else f"expected {str(expected)!r}")
    if kind == "number":
        target = float(str(expected).replace(",", ""))
        found = numbers_in(answer)
        for value in found:
            if question.tolerance is not None:
                if abs(value - target) <= question.tolerance:
                    return CheckResult(True, f"found {value:g}")
            elif math.isclose(value, target, rel_tol=1e-6, abs_tol=1e-9):
                return CheckResult(True, f"found {value:g}")
        shown = ", ".join(f"{v:g}" for v in found[:5]) or "no number"
        return CheckResult(False, f"expected {target:g}, found {shown}")
    if kind == "contains":
        items = expected if isinstance(expected, list) else [expected]
        folded = answer.casefold()
        missing = [str(i) for i in items if str(i).casefold() not in folded]
        if missing:
            return CheckResult(False, "missing " + ", ".join(map(repr, missing)))
        extra = [a for a in question.absent if a.casefold() in folded]
        return CheckResult(not extra, "all found" if not extra else "also names " + ", ".join(map(repr, extra)))
    if kind == "regex":
        ok = re.search(str(expected), answer, re.IGNORECASE | re.DOTALL) is not None
        return CheckResult(ok, "matches" if ok else f"no match for /{expected}/")
    raise ValueError(f"checker {kind!r} needs check_with_judge")


# (messages) -> (reply text, cost in USD)
JudgeCall = Callable[[list[dict]], Awaitable[tuple[str, float]]]


async def check_with_judge(question: Question, answer: str | None, judge: JudgeCall | None) -> CheckResult:
    """Like check(); questions with checker 'judge' ask the judge model."""
    if question.checker != "judge":
        return check(question, answer)
    if answer is None or not str(answer).strip():
        return CheckResult(False, "no answer")
    if judge is None:
        raise ValueError(f"question {question.id!r} needs a judge model (--judge MODEL)")
    from core.engine.prompts import fill
    prompt = fill("judge.md", question=question.question, expected=question.expected, answer=answer)
    reply, cost = await judge([{"role": "user", "content": prompt}])
    verdict = reply.strip().upper()
    correct = verdict.startswith("CORRECT") or ("CORRECT" in verdict and "WRONG" not in verdict)
    return CheckResult(correct, f"judge said {reply.strip()[:80]!r}", judge_cost_usd=cost)


def describe(question: Question) -> str:
    expected: Any = question.expected
    return f"{question.checker}: {expected!r}"
