"""A readable live transcript of a run for the terminal (the CLI's stderr)."""

from __future__ import annotations

import sys
from collections import Counter
from typing import TextIO

from core import events as ev
from core.control_chars import escape_controls
from core.run_names import fork_line

CELL_OUTPUT_CHARS = 1500


class TranscriptPrinter:
    def __init__(self, stream: TextIO | None = None, *, live_tokens: bool | None = None) -> None:
        self.out = stream or sys.stderr
        self.live = self.out.isatty() if live_tokens is None else live_tokens
        self._streamed: set[str] = set()
        self._subcalls: Counter[str] = Counter()
        self._suberrors: Counter[str] = Counter()
        self._told_waiting = False          # "sub-calls wait for budget" is said once

    def _w(self, text: str) -> None:
        self.out.write(escape_controls(text))   # model, cell and file-name text: inert on a terminal
        self.out.flush()

    def __call__(self, event: ev.Event) -> None:
        handler = getattr(self, "on_" + event.type, None)
        if handler is not None:
            handler(event)

    def on_RunStarted(self, e: ev.RunStarted) -> None:
        self._w(f"run {e.run_id[:12]}: {len(e.documents)} document(s), {e.total_chars:,} chars; "
                f"root {e.root_model}, sub {e.sub_model}, depth {e.config.get('max_depth')}\n")
        fork = fork_line(getattr(e, "forked_from", None))
        if fork:
            self._w(f"{escape_controls(fork)}\n")

    def on_SubCallWaiting(self, e: ev.SubCallWaiting) -> None:
        """Said once per run: sub-calls wait for budget (the cap throttles them)."""
        if e.waiting and not self._told_waiting:
            self._told_waiting = True
            self._w(f"[budget] sub-calls wait for budget: the dollar cap leaves room for fewer calls in "
                    f"flight than the concurrency; each may cost up to ${e.worst_usd:.4f}, and waits until "
                    "calls in flight settle\n")

    def on_RootTurnStarted(self, e: ev.RootTurnStarted) -> None:
        indent = "  " * e.depth
        label = "final answer request" if e.final_request else f"turn {e.iteration}"
        where = "" if e.depth == 0 else f" (nested RLM {e.parent_id}, depth {e.depth})"
        self._w(f"\n{indent}── {label}{where} ──\n")

    def on_RootTokens(self, e: ev.RootTokens) -> None:
        if self.live and e.call_id:
            self._streamed.add(e.call_id)
            self._w(e.delta)

    def on_RootReplied(self, e: ev.RootReplied) -> None:
        if e.call_id in self._streamed:
            self._w("\n")
        else:
            self._w(e.text.rstrip() + "\n")
        self._w(f"   [{e.model}: {e.input_tokens:,} in / {e.output_tokens:,} out, ${e.cost_usd:.4f}, "
                f"{e.duration_ms} ms]\n")

    def on_SubCallFinished(self, e: ev.SubCallFinished) -> None:
        self._subcalls[e.parent_id or ""] += 1
        if e.status != "ok":
            self._suberrors[e.parent_id or ""] += 1

    def on_CellExecuted(self, e: ev.CellExecuted) -> None:
        state = "syntax error" if e.is_syntax_error else (e.fault or ("error" if e.error else "ok"))
        calls = self._subcalls.pop(e.call_id or "", 0)
        errors = self._suberrors.pop(e.call_id or "", 0)
        extra = f", {calls} sub-call(s)" + (f", {errors} failed" if errors else "") if calls else ""
        self._w(f"▶ cell {e.index}: {state} ({e.duration_ms} ms{extra})\n")
        text = e.output_for_model
        if len(text) > CELL_OUTPUT_CHARS:
            text = text[:CELL_OUTPUT_CHARS] + f"\n  [... {len(text) - CELL_OUTPUT_CHARS:,} more chars]"
        self._w("  " + text.replace("\n", "\n  ").rstrip() + "\n")

    def on_Notice(self, e: ev.Notice) -> None:
        self._w(f"[{e.level}] {e.message}\n")

    def _totals(self, t: dict) -> str:
        return (f"{t.get('iterations', 0)} turn(s), {t.get('cells', 0)} cell(s), "
                f"{t.get('syntax_errors', 0)} syntax error(s), {t.get('sub_calls', 0)} sub-call(s), "
                f"{t.get('input_tokens', 0):,} in / {t.get('output_tokens', 0):,} out tokens, "
                f"${t.get('cost_usd', 0):.4f}, {t.get('wall_ms', 0) / 1000:.1f} s")

    def on_RunFinished(self, e: ev.RunFinished) -> None:
        self._w(f"\n== {e.status}: {self._totals(e.totals)}\n")

    def on_RunFailed(self, e: ev.RunFailed) -> None:
        self._w(f"\n== {e.status}: {e.error}\n   {self._totals(e.totals)}\n")
