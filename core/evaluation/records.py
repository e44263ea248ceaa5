"""Evaluations in the runs database (tables `evaluations` and `evaluation_runs`,
migration m002_evaluations). Functions take the store's sqlite-utils Database.

The same question set (by content) over the same documents (by path and text) is
the same evaluation: running it again adds repeats instead of a new evaluation.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Sequence

from core.evaluation.questions import QuestionSet
from core.store.db import write_transaction


@dataclass(frozen=True)
class Row:
    """One answered question of an evaluation (an RLM run or a direct call)."""
    pair: str
    mode: str                  # rlm | auto | direct
    root_model: str
    sub_model: str | None
    question_id: str
    repeat: int
    run_id: str | None
    status: str
    answer: str | None
    correct: bool
    detail: str
    cost_usd: float = 0.0
    judge_cost_usd: float = 0.0
    wall_ms: int | None = None
    iterations: int = 0
    cells: int = 0
    syntax_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None


def documents_fingerprint(documents: Sequence[Any]) -> list[dict[str, Any]]:
    return [{"path": d.path, "chars": len(d.text),
             "sha256": hashlib.sha256(d.text.encode("utf-8", "surrogatepass")).hexdigest()}
            for d in documents]


def open_evaluation(db: Any, qset: QuestionSet, documents: Sequence[Any]) -> tuple[str, bool]:
    """The id of this evaluation, creating it if new. Returns (id, created)."""
    docs = documents_fingerprint(documents)
    key = hashlib.sha256((qset.sha256 + json.dumps(sorted((d["path"], d["sha256"]) for d in docs)))
                         .encode()).hexdigest()
    found = db.execute("SELECT id FROM evaluations WHERE key = ?", [key]).fetchone()
    if found:
        return found[0], False
    evaluation_id = uuid.uuid4().hex
    now = time.time()
    with write_transaction(db):
        db.execute(
            "INSERT INTO evaluations (id, key, name, set_path, set_sha256, set_json, documents_json, "
            "created_utc, updated_utc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [evaluation_id, key, qset.name, qset.path, qset.sha256,
             json.dumps([q.public_dict() for q in qset.questions], ensure_ascii=False),
             json.dumps(docs), now, now])
    return evaluation_id, True


def next_repeat(db: Any, evaluation_id: str, pair: str, mode: str) -> int:
    row = db.execute("SELECT max(repeat) FROM evaluation_runs WHERE evaluation_id = ? AND pair = ? "
                     "AND mode = ?", [evaluation_id, pair, mode]).fetchone()
    return int(row[0] or 0) + 1


def add_row(db: Any, evaluation_id: str, row: Row) -> None:
    values = dict(row.__dict__)
    values["correct"] = int(row.correct)
    columns = ["evaluation_id", *values, "created_utc"]
    with write_transaction(db):
        db.execute(f"INSERT INTO evaluation_runs ({', '.join(columns)}) VALUES "
                   f"({', '.join('?' for _ in columns)})", [evaluation_id, *values.values(), time.time()])
        db.execute("UPDATE evaluations SET updated_utc = ? WHERE id = ?", [time.time(), evaluation_id])


def rows(db: Any, evaluation_id: str) -> list[Row]:
    fields = list(Row.__dataclass_fields__)
    found = db.execute(f"SELECT {', '.join(fields)} FROM evaluation_runs WHERE evaluation_id = ? "
                       "ORDER BY id", [evaluation_id]).fetchall()
    out = []
    for values in found:
        data = dict(zip(fields, values))
        data["correct"] = bool(data["correct"])
        out.append(Row(**data))
    return out


def save_scorecard(db: Any, evaluation_id: str, card: dict[str, Any]) -> None:
    with write_transaction(db):
        db.execute("UPDATE evaluations SET scorecard_json = ? WHERE id = ?",
                   [json.dumps(card, ensure_ascii=False), evaluation_id])


def get_evaluation(db: Any, evaluation_id: str) -> dict[str, Any] | None:
    cursor = db.execute("SELECT * FROM evaluations WHERE id = ?", [evaluation_id])
    found = cursor.fetchone()
    if found is None:
        return None
    return dict(zip([c[0] for c in cursor.description], found))


def list_evaluations(db: Any) -> list[dict[str, Any]]:
    cursor = db.execute(
        "SELECT e.id, e.name, e.created_utc, e.updated_utc, count(r.id) AS answers, "
        "count(DISTINCT r.pair || '/' || r.mode) AS pairs, max(r.repeat) AS repeats "
        "FROM evaluations e LEFT JOIN evaluation_runs r ON r.evaluation_id = e.id "
        "GROUP BY e.id ORDER BY e.updated_utc DESC")
    names = [c[0] for c in cursor.description]
    return [dict(zip(names, r)) for r in cursor.fetchall()]


def resolve_evaluation(db: Any, prefix: str) -> str:
    found = [r[0] for r in db.execute("SELECT id FROM evaluations WHERE id LIKE ?", [prefix + "%"])]
    if not found:
        raise KeyError(f"no evaluation with id {prefix!r} (see `rlm-studio scorecards`)")
    if len(found) > 1:
        raise KeyError(f"the id {prefix!r} is ambiguous: {len(found)} evaluations start with it")
    return found[0]
