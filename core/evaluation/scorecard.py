"""The scorecard of an evaluation: one line per pair and mode (RLM or direct call).

    card = build_scorecard(rows, questions)   # plain dict, JSON-safe, saved with the evaluation
    print(render_text(card)); render_csv(card); render_markdown(card)

Per line: answers, correct, accuracy (correct / answers), the spread of accuracy over
repeats (each repeat's accuracy over the questions it answered: min, max, standard
deviation), answer rate (runs that finished with an answer; capped and failed runs
do not count), cost (total and mean per answer, judge cost apart), mean and max
wall time, mean root turns, and the syntax-error rate per cell (syntax errors / cells).
When the questions carry a `kind` (lookup, count, ...), each line also has `by_kind`: per
kind, its answers, correct ones and accuracy.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import defaultdict
from typing import Any, Iterable, Sequence

from core.evaluation.records import Row

COLUMNS = ("pair", "mode", "answers", "correct", "accuracy", "accuracy_min", "accuracy_max",
           "accuracy_stdev", "repeats", "answer_rate", "cost_usd", "cost_per_answer_usd", "judge_cost_usd",
           "mean_seconds", "max_seconds", "mean_turns", "cells", "syntax_errors", "syntax_error_rate")


def _rate(num: float, den: float) -> float | None:
    return round(num / den, 4) if den else None


def build_scorecard(rows: Iterable[Row], questions: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    rows = list(rows)
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    stopped: dict[tuple[str, str], int] = defaultdict(int)
    for row in rows:
        if row.status == "cancelled":      # the user's Stop: no answer of the model's to score
            stopped[(row.pair, row.mode)] += 1
            continue
        groups[(row.pair, row.mode)].append(row)
    kinds = {q.get("id"): q.get("kind") for q in questions if isinstance(q, dict) and q.get("kind")}
    lines = []
    # Each root model's RLM lines, its Auto lines, then its direct line beside them.
    rank = {"rlm": 0, "auto": 1}
    order = sorted(groups.items(), key=lambda kv: (kv[1][0].root_model, rank.get(kv[0][1], 2), kv[0][0]))
    for (pair, mode), items in order:
        by_repeat: dict[int, list[Row]] = defaultdict(list)
        for row in items:
            by_repeat[row.repeat].append(row)
        per_repeat = [sum(r.correct for r in rs) / len(rs) for _, rs in sorted(by_repeat.items())]
        seconds = [r.wall_ms / 1000 for r in items if r.wall_ms is not None]
        cells = sum(r.cells for r in items)
        syntax = sum(r.syntax_errors for r in items)
        cost = sum(r.cost_usd for r in items)
        answered = sum(1 for r in items if r.status in ("finished", "answered") and r.answer)
        lines.append({
            "pair": pair, "mode": mode, "answers": len(items), "stopped": stopped.get((pair, mode), 0),
            "correct": sum(r.correct for r in items),
            "accuracy": _rate(sum(r.correct for r in items), len(items)),
            "accuracy_min": round(min(per_repeat), 4), "accuracy_max": round(max(per_repeat), 4),
            "accuracy_stdev": round(statistics.pstdev(per_repeat), 4) if len(per_repeat) > 1 else 0.0,
            "repeats": len(by_repeat), "answer_rate": _rate(answered, len(items)),
            "cost_usd": round(cost, 8), "cost_per_answer_usd": round(cost / len(items), 8),
            "judge_cost_usd": round(sum(r.judge_cost_usd for r in items), 8),
            "mean_seconds": round(statistics.fmean(seconds), 3) if seconds else None,
            "max_seconds": round(max(seconds), 3) if seconds else None,
            "mean_turns": (round(statistics.fmean(r.iterations for r in items), 3)
                           if mode in ("rlm", "auto") else None),
            "cells": cells, "syntax_errors": syntax, "syntax_error_rate": _rate(syntax, cells),
        })
        if kinds:
            lines[-1]["by_kind"] = _by_kind(items, kinds)
            lines[-1]["by_kind_text"] = by_kind_text(lines[-1])
    latest: dict[tuple[str, str, str], Row] = {}
    for row in rows:
        latest[(row.question_id, row.pair, row.mode)] = row
    answers = [{"question_id": q, "pair": p, "mode": m, "repeat": r.repeat, "status": r.status,
                "correct": r.correct, "answer": r.answer, "detail": r.detail, "cost_usd": r.cost_usd,
                "error": r.error}
               for (q, p, m), r in latest.items()]
    return {"lines": lines, "questions": list(questions), "latest_answers": answers,
            "stopped": sum(stopped.values())}           # answers the user stopped, in no line's accuracy


def _by_kind(items: list[Row], kinds: dict[str, str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in items:
        kind = kinds.get(row.question_id) or "other"
        entry = out.setdefault(kind, {"answers": 0, "correct": 0})
        entry["answers"] += 1
        entry["correct"] += int(row.correct)
    for entry in out.values():
        entry["accuracy"] = _rate(entry["correct"], entry["answers"])
    return dict(sorted(out.items()))


def by_kind_text(line: dict[str, Any]) -> str:
    """'count 2/3 · lookup 3/3 · not-found 0/3' for a scorecard line with kinds, else ''."""
    return " · ".join(f"{kind} {e['correct']}/{e['answers']}" for kind, e in (line.get("by_kind") or {}).items())


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def render_text(card: dict[str, Any]) -> str:
    heads = ("pair", "mode", "n", "accuracy", "spread", "answered", "cost $", "$/answer", "mean s",
             "turns", "syntax err/cell")
    table = [heads]
    for ln in card["lines"]:
        spread = (f"{ln['accuracy_min']:.0%}-{ln['accuracy_max']:.0%} over {ln['repeats']}"
                  if ln["repeats"] > 1 else "1 repeat")
        table.append((ln["pair"], ln["mode"], str(ln["answers"]), _pct(ln["accuracy"]), spread,
                      _pct(ln["answer_rate"]), f"{ln['cost_usd']:.4f}", f"{ln['cost_per_answer_usd']:.5f}",
                      _cell(ln["mean_seconds"]), _cell(ln["mean_turns"]),
                      f"{_pct(ln['syntax_error_rate'])} ({ln['syntax_errors']}/{ln['cells']})"))
    widths = [max(len(r[i]) for r in table) for i in range(len(heads))]
    text = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table)
    kinds = [f"{ln['pair']} {ln['mode']}, by kind: {by_kind_text(ln)}" for ln in card["lines"] if ln.get("by_kind")]
    return text + ("\n\n" + "\n".join(kinds) if kinds else "")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def render_csv(card: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for ln in card["lines"]:
        writer.writerow(["" if ln[c] is None else ln[c] for c in COLUMNS])
    return out.getvalue()


def render_markdown(card: dict[str, Any], title: str = "Scorecard") -> str:
    heads = ["Pair", "Mode", "Answers", "Accuracy", "Spread over repeats", "Answer rate", "Cost (USD)",
             "Per answer (USD)", "Mean s", "Turns", "Syntax errors / cell"]
    lines = [f"# {title}", "", "| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for ln in card["lines"]:
        lines.append("| " + " | ".join([
            f"`{ln['pair']}`", ln["mode"], str(ln["answers"]), _pct(ln["accuracy"]),
            f"{_pct(ln['accuracy_min'])}-{_pct(ln['accuracy_max'])} ({ln['repeats']} repeats, "
            f"sd {ln['accuracy_stdev']:.2f})", _pct(ln["answer_rate"]), f"{ln['cost_usd']:.4f}",
            f"{ln['cost_per_answer_usd']:.5f}", _cell(ln["mean_seconds"]), _cell(ln["mean_turns"]),
            f"{_pct(ln['syntax_error_rate'])} ({ln['syntax_errors']}/{ln['cells']})"]) + " |")
    kinds = [f"- `{ln['pair']}` {ln['mode']}: {by_kind_text(ln)}" for ln in card["lines"] if ln.get("by_kind")]
    if kinds:
        lines += ["", "## By kind of question", ""] + kinds
    if card.get("latest_answers"):
        lines += ["", "## Latest answers", "", "| Question | Pair | Mode | Right | Answer |", "|---|---|---|---|---|"]
        for a in card["latest_answers"]:
            text = (a["answer"] or a.get("error") or a["status"] or "").replace("\n", " ").replace("|", "\\|")
            lines.append(f"| {a['question_id']} | `{a['pair']}` | {a['mode']} | "
                         f"{'yes' if a['correct'] else 'no'} | {text[:160]} |")
    return "\n".join(lines) + "\n"
