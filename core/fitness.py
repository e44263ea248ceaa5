"""Fitness per model across stored runs: which root (and sub) model actually works.

    stats = model_fitness(store.db)        # {"roots": [...], "subs": [...]} plain dicts

Per root model (as the user picked it: ROOT_NAME below), over every stored run except imported ones:
  runs; finished / capped / failed (failed and interrupted together) / stopped (the
  user's Stop: the model's fault in none of them, so no rate counts a stopped run);
  answer_rate = finished runs with a non-empty answer / runs not stopped;
  cells, syntax_errors, syntax_error_rate = syntax errors / cells;
  runtime_errors (from the run totals), runtime_error_rate = runtime errors / cells;
  refused_cells (cells the engine would not run: copied feedback, reassigned `context`);
  cut_replies (root replies read only as far as useful: core/engine/reply_reader.py) and
  unsupported_answers (answers stating values nothing the run read holds: core/support.py);
  turns_to_answer = mean root turns of the finished runs;
  cost_per_run_usd, seconds_per_run (mean wall time of runs that ended);
  root input/output tokens (calls of kind root with this model) and thinking tokens
  where the provider reported them (RootReplied.reasoning_tokens), else None.
Per sub model (calls of kind sub): calls, runs, errors (calls that failed), cancelled
  (their cell ended, or the user stopped the run) and refused (by a cap or limit: never
  sent) apart, error_rate = errors / calls sent (neither cancelled nor refused), mean
  seconds per call, cost, input and output tokens.
"""

from __future__ import annotations

import json
from typing import Any

FAILED = ("failed", "interrupted")

# Models are named as the user picked them ("lab/coder-7b"), not as they were routed to
# litellm ("openai/coder-7b"): runs.root_model_label / sub_model_label (migration m003),
# NULL when the two are the same. A call's model is matched to its run's root or sub model.
ROOT_NAME = "COALESCE(root_model_label, root_model)"
CALL_NAME = ("CASE WHEN c.model = r.sub_model AND r.sub_model_label IS NOT NULL THEN r.sub_model_label "
             "WHEN c.model = r.root_model AND r.root_model_label IS NOT NULL THEN r.root_model_label "
             "ELSE c.model END")
EVENT_NAME = CALL_NAME.replace("c.model", "json_extract(e.payload_json, '$.model')")
STOPPED = "cancelled"            # the run status of a user's Stop


def _rate(num: float, den: float) -> float | None:
    return round(num / den, 4) if den else None


def model_fitness(db: Any) -> dict[str, list[dict[str, Any]]]:
    return {"roots": root_fitness(db), "subs": sub_fitness(db)}


def root_fitness(db: Any) -> list[dict[str, Any]]:
    per: dict[str, dict[str, Any]] = {}
    runs = db.execute(
        f"SELECT id, {ROOT_NAME}, status, answer, iterations, cells, syntax_errors, cost_usd, wall_ms, "
        "totals_json FROM runs WHERE imported_utc IS NULL AND status != 'running' AND root_model IS NOT NULL "
        "ORDER BY created_utc").fetchall()
    for run_id, model, status, answer, iterations, cells, syntax, cost, wall_ms, totals_json in runs:
        m = per.setdefault(model, {"model": model, "runs": 0, "finished": 0, "capped": 0, "failed": 0,
                                   "stopped": 0, "answered": 0, "cells": 0, "syntax_errors": 0,
                                   "runtime_errors": 0, "refused_cells": 0, "cut_replies": 0,
                                   "unsupported_answers": 0, "_turns": [], "_cost": 0.0, "_wall": []})
        totals = _totals(totals_json)
        m["runs"] += 1
        if status == "finished":
            m["finished"] += 1
            m["_turns"].append(int(iterations or 0))
            if answer and str(answer).strip():
                m["answered"] += 1
        elif status == "capped":
            m["capped"] += 1
        elif status in FAILED:
            m["failed"] += 1
        elif status == STOPPED:
            m["stopped"] += 1
        m["cells"] += int(cells or 0)
        m["syntax_errors"] += int(syntax or 0)
        m["runtime_errors"] += int(totals.get("runtime_errors") or 0)
        m["refused_cells"] += int(totals.get("refused_cells") or 0)
        m["cut_replies"] += int(totals.get("cut_replies") or 0)
        m["unsupported_answers"] += 1 if totals.get("unsupported") else 0
        m["_cost"] += float(cost or 0.0)
        if wall_ms is not None:
            m["_wall"].append(int(wall_ms))
    tokens = {row[0]: row[1:] for row in db.execute(
        f"SELECT {CALL_NAME}, sum(c.input_tokens), sum(c.output_tokens), count(*) FROM calls c "
        "JOIN runs r ON r.id = c.run_id WHERE c.kind = 'root' AND r.imported_utc IS NULL GROUP BY 1")}
    thinking = {row[0]: row[1:] for row in db.execute(
        f"SELECT {EVENT_NAME}, sum(json_extract(e.payload_json, '$.reasoning_tokens')), "
        "count(json_extract(e.payload_json, '$.reasoning_tokens')) FROM events e JOIN runs r ON r.id = e.run_id "
        "WHERE e.type = 'RootReplied' GROUP BY 1")}
    out = []
    for model, m in per.items():
        turns, wall = m.pop("_turns"), m.pop("_wall")
        cost = m.pop("_cost")
        t_in, t_out, root_calls = tokens.get(model, (0, 0, 0))
        think, reported = thinking.get(model, (None, 0))
        m.update(
            answer_rate=_rate(m["answered"], m["runs"] - m["stopped"]),
            syntax_error_rate=_rate(m["syntax_errors"], m["cells"]),
            runtime_error_rate=_rate(m["runtime_errors"], m["cells"]),
            turns_to_answer=round(sum(turns) / len(turns), 3) if turns else None,
            cost_usd=round(cost, 8), cost_per_run_usd=round(cost / m["runs"], 8),
            seconds_per_run=round(sum(wall) / len(wall) / 1000, 3) if wall else None,
            root_calls=int(root_calls or 0), root_input_tokens=int(t_in or 0), root_output_tokens=int(t_out or 0),
            thinking_tokens=int(think) if reported else None)
        out.append(m)
    out.sort(key=lambda m: (-m["runs"], m["model"]))
    return out


def sub_fitness(db: Any) -> list[dict[str, Any]]:
    rows = db.execute(
        f"SELECT {CALL_NAME} AS name, count(*), count(DISTINCT c.run_id), sum(c.status = 'error'), "
        "sum(c.status = 'cancelled'), sum(c.status = 'refused'), avg(c.duration_ms), "
        "sum(c.cost_usd), sum(c.input_tokens), sum(c.output_tokens) FROM calls c JOIN runs r ON r.id = c.run_id "
        "WHERE c.kind = 'sub' AND r.imported_utc IS NULL GROUP BY name "
        "ORDER BY count(*) DESC, name").fetchall()
    return [{"model": model, "calls": calls, "runs": runs, "errors": int(errors or 0),
             "cancelled": int(cancelled or 0), "refused": int(refused or 0),
             "error_rate": _rate(int(errors or 0), calls - int(cancelled or 0) - int(refused or 0)),
             "seconds_per_call": round(avg_ms / 1000, 3) if avg_ms is not None else None,
             "cost_usd": round(float(cost or 0.0), 8), "input_tokens": int(t_in or 0),
             "output_tokens": int(t_out or 0)}
            for model, calls, runs, errors, cancelled, refused, avg_ms, cost, t_in, t_out in rows]


def _totals(text: str | None) -> dict[str, Any]:
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def render_fitness(stats: dict[str, list[dict[str, Any]]]) -> str:
    """Two plain-text tables for the terminal."""
    def table(heads: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
        rows = [heads, *rows]
        widths = [max(len(r[i]) for r in rows) for i in range(len(heads))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)

    def num(v: Any, fmt: str = "{:g}") -> str:
        return "-" if v is None else fmt.format(v)

    roots = [(m["model"], str(m["runs"]), f"{m['finished']}/{m['capped']}/{m['failed']}/{m['stopped']}",
              _pct(m["answer_rate"]),
              str(m["cells"]), f"{_pct(m['syntax_error_rate'])} ({m['syntax_errors']})",
              f"{_pct(m['runtime_error_rate'])} ({m['runtime_errors']})", num(m["turns_to_answer"]),
              str(m["cut_replies"]), str(m["unsupported_answers"]),
              num(m["cost_per_run_usd"], "{:.4f}"), num(m["seconds_per_run"], "{:.1f}"),
              str(m["root_output_tokens"]), num(m["thinking_tokens"]))
             for m in stats["roots"]]
    text = ["Root models", table(("model", "runs", "fin/cap/fail/stop", "answered", "cells", "syntax err",
                                  "runtime err", "turns", "cut", "unsupported", "$/run", "s/run", "out tok",
                                  "thinking tok"), roots)]
    if stats["subs"]:
        subs = [(m["model"], str(m["calls"]), str(m["runs"]), f"{_pct(m['error_rate'])} ({m['errors']})",
                 str(m["cancelled"]), str(m["refused"]),
                 num(m["seconds_per_call"], "{:.2f}"), f"{m['cost_usd']:.4f}", str(m["output_tokens"]))
                for m in stats["subs"]]
        text += ["", "Sub models", table(("model", "calls", "runs", "errors", "cancelled", "refused", "s/call", "cost $", "out tok"), subs)]
    return "\n".join(text)


def guide_numbers(db: Any, evaluations: int = 3) -> str:
    """The Guide's "your numbers" paragraph (Markdown): the RLM beside the direct call in
    the latest evaluations that had both, and the size of the inputs of the stored runs."""
    lines: list[str] = []
    found = db.execute(
        "SELECT e.id, e.name, e.documents_json FROM evaluations e WHERE EXISTS (SELECT 1 FROM evaluation_runs r "
        "WHERE r.evaluation_id = e.id AND r.mode = 'direct') ORDER BY e.updated_utc DESC LIMIT ?",
        [evaluations]).fetchall()
    for evaluation_id, name, documents_json in found:
        docs = json.loads(documents_json or "[]")
        chars = sum(int(d.get("chars") or 0) for d in docs)
        groups = db.execute(
            "SELECT root_model, mode, count(*), sum(correct), avg(cost_usd), avg(wall_ms), "
            "sum(status = 'too_large'), max(error) FROM evaluation_runs WHERE evaluation_id = ? "
            "GROUP BY root_model, mode ORDER BY root_model, mode DESC", [evaluation_id]).fetchall()
        parts = []
        for root, mode, n, correct, cost, wall, too_large, error in groups:
            label = f"RLM with root {root}" if mode == "rlm" else f"one plain call to {root}"
            if mode == "direct" and too_large == n:
                parts.append(f"{label}: not possible ({error})")
                continue
            seconds = f", {wall / 1000:.1f} s" if wall is not None else ""
            parts.append(f"{label}: {int(correct or 0)} of {n} right, ${cost or 0:.4f} per answer{seconds}")
        lines.append(f"- On your question set *{name}* over {len(docs):,} documents ({chars:,} characters): "
                     + "; ".join(parts) + ".")
    size = db.execute("SELECT count(*), max(total_chars) FROM runs WHERE imported_utc IS NULL").fetchone()
    if size and size[0]:
        sizes = sorted(r[0] for r in db.execute("SELECT total_chars FROM runs WHERE imported_utc IS NULL"))
        median = sizes[len(sizes) // 2]
        lines.append(f"- Your {size[0]:,} stored runs read a median of {median:,} characters of documents "
                     f"(the largest {size[1]:,}); about 4 characters make one token.")
    if not lines:
        return ""
    return "**Your numbers.**\n\n" + "\n".join(lines)
