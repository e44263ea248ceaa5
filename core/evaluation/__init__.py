"""Question sets, answer checkers, evaluation runs and scorecards (docs/fitness.md).

    qset = load_question_set(Path("set.jsonl"))
    result = check(question, answer)                  # exact | number | contains | regex
    card = scorecard(store.db, evaluation_id)         # per pair and mode: accuracy, cost, time ...
"""

from core.evaluation.checkers import CheckResult, check, check_with_judge
from core.evaluation.questions import CHECKERS, Question, QuestionSet, QuestionSetError, load_question_set

__all__ = ["CHECKERS", "CheckResult", "Question", "QuestionSet", "QuestionSetError", "check",
           "check_with_judge", "load_question_set"]
