"""Two stored runs as the Compare window shows them to an analyst (core.trust.compare
shaped for ui/compare_view.py): each run named by its question, start time and models;
the answers; the figures in words and units; the first difference in turn names, with
the code diff kept for the "Code" section (its headers name run A and B, never ids)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.run_names import title_of
from ui.compare_view import ComparisonShown, RunHeading


def compare_shown(store: Any, left: str, right: str) -> ComparisonShown:
    # lazy: +10 modules in the window (where it runs)
    from core.trust.compare import compare_runs
    # lazy: free in the window (where it runs)
    from ui.cost_meter import money
    result = compare_runs(store, left, right)
    a, b = result.a, result.b
    runs = store.get_run(left) or {}, store.get_run(right) or {}
    headings = tuple(_heading(store, run, side, letter)
                     for run, side, letter in ((runs[0], a, "A"), (runs[1], b, "B")))

    def cost(side: Any, run: dict) -> str:
        return money(side.cost_usd) + (" + unknown" if run.get("unpriced") else "")

    def row(label: str, x: Any, y: Any, same: bool | None = None) -> tuple[str, str, str, bool]:
        return (label, str(x), str(y), x == y if same is None else same)
    rows = [row("Cost", cost(a, runs[0]), cost(b, runs[1])),
            row("Time", _duration(runs[0]), _duration(runs[1])),
            row("Turns", a.turns, b.turns),
            row("Sub-calls", _sub_calls(a), _sub_calls(b)),
            row("Tokens in", f"{a.input_tokens:,}", f"{b.input_tokens:,}"),
            row("Tokens out", f"{a.output_tokens:,}", f"{b.output_tokens:,}"),
            row("Code cells", a.cells, b.cells),
            row("Status", a.status, b.status)]
    first, diff = "", ""
    d = result.first_difference
    if d is not None:
        first = {"reply": f"turn {d.turn}: the root's reply differs",
                 "cell": f"turn {d.turn}, cell {d.cell}: the output differs",
                 "turns": f"turn {d.turn}: one run has more turns"}.get(d.what, f"turn {d.turn}: {d.what}")
        diff = _named_diff(d.diff, d.turn, d.what, d.cell)
    elif not result.same_answer:
        first = "the final answer"
    notes = []
    for side, letter, other in ((a, "A", b), (b, "B", a)):
        if side.parent_run_id and side.parent_run_id == other.run_id:
            notes.append(f"Run {letter} continues run {'B' if letter == 'A' else 'A'}: its turns are "
                         "numbered from where it was forked.")
        elif side.parent_run_id:
            notes.append(f"Run {letter} continues “{title_of(store, side.parent_run_id)}”.")
    return ComparisonShown(headings[0], headings[1], rows, first, (a.answer or "", b.answer or ""),
                           diff=diff, notes=tuple(notes))


def _heading(store: Any, run: dict, side: Any, letter: str) -> RunHeading:
    when = ""
    created = run.get("created_utc")
    if isinstance(created, (int, float)) and created > 0:
        moment = datetime.fromtimestamp(float(created))
        when = f"{moment.day} {moment.strftime('%b %Y, %H:%M:%S')}"
    models = side.root_model if side.sub_model in ("", side.root_model) else \
        f"{side.root_model} (root) · {side.sub_model} (sub)"
    return RunHeading(f"Run {letter}", side.question or title_of(store, side.run_id), when, models)


def _duration(run: dict) -> str:
    ms = run.get("wall_ms")
    if ms is None and run.get("created_utc") and run.get("finished_utc"):
        ms = (float(run["finished_utc"]) - float(run["created_utc"])) * 1000
    if ms is None:
        return "unknown"
    seconds = ms / 1000
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds // 60)} min {int(seconds % 60)} s"


def _sub_calls(side: Any) -> str:
    failed = f", {side.sub_call_errors} failed" if side.sub_call_errors else ""
    return f"{side.sub_calls}{failed}"


def _named_diff(diff: str, turn: int, what: str, cell: int | None) -> str:
    """The unified diff with its two file lines naming the runs and the turn, not the ids."""
    if not diff.startswith("---"):
        return diff
    part = f"turn {turn}, " + ("the root's reply" if what == "reply" else f"cell {cell} output")
    lines = diff.splitlines(keepends=True)
    if len(lines) >= 2 and lines[1].startswith("+++"):
        lines[0], lines[1] = f"--- run A, {part}\n", f"+++ run B, {part}\n"
    return "".join(lines)
