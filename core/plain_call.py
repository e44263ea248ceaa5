"""A run that was one plain call, said as one: "one plain call: 9,356 tokens in, 41 out".

    plain_call_line(totals)      # None for an RLM run

A plain call has no cells, syntax errors or root turns to count: the answer card, History,
the exports and `rlm-studio runs` show this line in their place. `totals` is a run's totals
(RunResult.totals, runs.totals_json): "mode" is "direct" for a plain call (core/engine/mode.py).
"""

from __future__ import annotations

from typing import Any


def is_plain_call(totals: dict[str, Any] | None) -> bool:
    return (totals or {}).get("mode") == "direct"


def plain_call_line(totals: dict[str, Any] | None) -> str | None:
    if not is_plain_call(totals):
        return None
    t = totals or {}
    return f"one plain call: {int(t.get('input_tokens') or 0):,} tokens in, {int(t.get('output_tokens') or 0):,} out"
