"""From events to rows: the `events` log, the `calls` tree and the `runs` totals.

The writer thread calls `Projection.apply(db, events)` inside one transaction per
batch. Each run's events go through the one fold of the record (core/run_record.py,
without its texts): a call's `subtree_cost_usd` is the fold's, written on the call's row
and on every ancestor row whose subtree it changed. Streamed RootTokens deltas are coalesced: within a batch, deltas of one
turn become one row (at the seq of the first); when the turn's RootReplied
(or its RootCallFailed: a cut or cancelled call) arrives, that turn's earlier token rows
are folded into its first row. Order by
seq stays meaningful: a turn's tokens still come before its RootReplied.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Iterable

import sqlite_utils

from core import events as ev
from core.limits import summary
from core.run_record import ROOT_ID, RunRecord

log = logging.getLogger(__name__)

TOTAL_COLUMNS = ("cost_usd", "input_tokens", "output_tokens", "iterations", "sub_calls",
                 "cells", "syntax_errors", "wall_ms")
COUNTERS = ("iterations", "cells", "syntax_errors")


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


@dataclass
class _RunDelta:
    inc: dict[str, int] = field(default_factory=dict)
    set: dict[str, Any] = field(default_factory=dict)

    def add(self, column: str, n: int = 1) -> None:
        if n:
            self.inc[column] = self.inc.get(column, 0) + n

    def put(self, **values: Any) -> None:
        for column, value in values.items():
            self.set[column] = value
            self.inc.pop(column, None)     # a value set later wins over earlier increments


@dataclass
class _Turn:
    """Token rows already committed for one streaming turn."""
    first_seq: int
    text: list[str]
    extra_seqs: list[int] = field(default_factory=list)


class Projection:
    def __init__(self, owner: Any = None) -> None:
        self.owner = owner                     # OwnerLock of this process (token, pid, host)
        self._turns: dict[tuple[str, str], _Turn] = {}
        self._records: dict[str, RunRecord] = {}      # runs being written: their call tree and costs

    def apply(self, db: sqlite_utils.Database, events: Iterable[ev.Event]) -> int:
        """Write a batch; returns the number of event rows written. If the batch fails (its
        transaction is rolled back and the writer tries it again), the streamed-token state
        is put back as it was, so a retried batch appends no root text twice."""
        saved = {key: (turn, len(turn.text), len(turn.extra_seqs)) for key, turn in self._turns.items()}
        try:
            return self._apply(db, list(events))
        except BaseException:
            self._turns = {}
            for key, (turn, texts, extras) in saved.items():
                del turn.text[texts:], turn.extra_seqs[extras:]
                self._turns[key] = turn
            raise

    def _apply(self, db: sqlite_utils.Database, events: list[ev.Event]) -> int:
        rows: list[list[Any] | None] = []
        batch_tokens: dict[tuple[str, str], int] = {}     # (run, call) -> index in rows
        deltas: dict[str, _RunDelta] = {}
        subtrees: dict[tuple[str, str], float] = {}       # (run, call) -> its subtree cost, as folded
        for event in events:
            key = (event.run_id, event.call_id or "")
            if isinstance(event, ev.RootTokens):
                index = batch_tokens.get(key)
                if index is not None:
                    rows[index][6].append(event.delta)
                    continue
                batch_tokens[key] = len(rows)
                rows.append([event.run_id, event.seq, event.type, event.call_id, event.parent_id,
                             event.ts, [event.delta]])
                continue
            index = batch_tokens.pop(key, None)
            turn = self._turns.get(key)
            # a turn's end (a reply, or a failed or cancelled call) folds its tokens into one row
            if index is not None and turn is not None and isinstance(event, (ev.RootReplied, ev.RootCallFailed)):
                turn.text.extend(rows[index][6])      # folded into the turn's first token row
                rows[index] = None
            rows.append([event.run_id, event.seq, event.type, event.call_id, event.parent_id,
                         event.ts, event.payload()])
            try:
                self._fold(event, subtrees)
                self._project(db, event, deltas.setdefault(event.run_id, _RunDelta()))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                # A malformed event must not cost the batch: the event row is still kept.
                log.error("could not project %s seq %s of run %s: %s", event.type, event.seq, event.run_id, exc)
        self._remember_tokens(rows, batch_tokens)
        db.conn.executemany(
            "INSERT INTO events (run_id, seq, type, call_id, parent_id, ts_utc, payload_json) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [r[:6] + [dumps({"delta": "".join(r[6])} if r[2] == "RootTokens" else r[6])]
             for r in rows if r is not None])
        db.conn.executemany("UPDATE calls SET subtree_cost_usd = ? WHERE run_id = ? AND id = ?",
                            [(usd, run_id, call_id) for (run_id, call_id), usd in subtrees.items()])
        for run_id, delta in deltas.items():
            self._update_run(db, run_id, delta)
        for event in events:              # a run that ended needs its record no more
            if event.type in ev.TERMINAL_TYPES:
                self._records.pop(event.run_id, None)
        return sum(r is not None for r in rows)

    def _fold(self, event: ev.Event, subtrees: dict[tuple[str, str], float]) -> None:
        """Fold `event` into its run's record; a call's cost marks its row and its ancestors'
        rows for a new subtree_cost_usd. (A batch tried again folds its events again: a
        call's cost is set, not added, so nothing counts twice.)"""
        record = self._records.get(event.run_id)
        if record is None:
            record = self._records[event.run_id] = RunRecord(keep_texts=False)
        record.apply(event)
        if isinstance(event, (ev.RootReplied, ev.RootCallFailed, ev.SubCallFinished)):
            node = record.nodes.get(event.call_id or "")
            while node is not None and node.id != ROOT_ID:
                if node.kind != "cell":                   # cells have no row of their own
                    subtrees[(event.run_id, node.id)] = node.subtree_cost_usd
                node = node.parent

    # -- streamed tokens ---------------------------------------------------------------
    def _remember_tokens(self, rows: list[list[Any]], batch_tokens: dict[tuple[str, str], int]) -> None:
        """Token rows of turns still streaming, so their RootReplied can fold them."""
        for key, index in batch_tokens.items():
            row = rows[index]
            turn = self._turns.get(key)
            if turn is None:
                self._turns[key] = _Turn(first_seq=row[1], text=list(row[6]))
            else:
                turn.extra_seqs.append(row[1])
                turn.text.extend(row[6])

    def _fold_tokens(self, db: sqlite_utils.Database, run_id: str, call_id: str) -> None:
        turn = self._turns.pop((run_id, call_id), None)
        if turn is None:
            return
        db.execute("UPDATE events SET payload_json = ? WHERE run_id = ? AND seq = ? AND type = 'RootTokens'",
                   [dumps({"delta": "".join(turn.text)}), run_id, turn.first_seq])
        if turn.extra_seqs:
            db.conn.executemany("DELETE FROM events WHERE run_id = ? AND seq = ? AND type = 'RootTokens'",
                                [(run_id, seq) for seq in turn.extra_seqs])

    # -- one event -> runs/calls -------------------------------------------------------
    def _project(self, db: sqlite_utils.Database, e: ev.Event, delta: _RunDelta) -> None:
        if isinstance(e, ev.RunStarted):
            self._run_started(db, e)
        elif isinstance(e, ev.RootTurnStarted):
            db.execute(
                "INSERT OR REPLACE INTO calls (run_id, id, parent_id, depth, kind, model, iteration, "
                "status, seq, started_utc) VALUES (?, ?, ?, ?, 'root', ?, ?, 'running', ?, ?)",
                [e.run_id, e.call_id, e.parent_id, e.depth, e.model, e.iteration, e.seq, e.ts])
        elif isinstance(e, ev.RootReplied):
            self._fold_tokens(db, e.run_id, e.call_id or "")
            db.execute(
                "UPDATE calls SET response = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, "
                "duration_ms = ?, model = ?, status = 'ok', finished_utc = ? WHERE run_id = ? AND id = ?",
                [e.text, e.input_tokens, e.output_tokens, e.cost_usd, e.duration_ms, e.model, e.ts,
                 e.run_id, e.call_id])
            if e.parent_id == "R":
                delta.add("iterations")
        elif isinstance(e, ev.RootCallFailed):
            self._fold_tokens(db, e.run_id, e.call_id or "")
            db.execute(
                "UPDATE calls SET status = ?, error = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, "
                "duration_ms = ?, model = ?, finished_utc = ? WHERE run_id = ? AND id = ?",
                [e.status, e.error, e.input_tokens, e.output_tokens, e.cost_usd, e.duration_ms, e.model, e.ts,
                 e.run_id, e.call_id])
        elif isinstance(e, ev.CellExecuted):
            delta.add("cells")
            delta.add("syntax_errors", int(bool(e.is_syntax_error)))
        elif isinstance(e, ev.SubCallStarted):
            db.execute(
                "INSERT OR REPLACE INTO calls (run_id, id, parent_id, depth, kind, model, prompt, "
                "status, seq, started_utc) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                [e.run_id, e.call_id, e.parent_id, e.depth + 1, "rlm" if e.kind == "rlm" else "sub",
                 e.model, e.prompt, e.seq, e.ts])
        elif isinstance(e, ev.SubCallFinished):
            db.execute(
                "UPDATE calls SET status = ?, response = ?, error = ?, input_tokens = ?, output_tokens = ?, "
                "cost_usd = ?, duration_ms = ?, model = ?, finished_utc = ? WHERE run_id = ? AND id = ?",
                [e.status, e.response, e.error, e.input_tokens, e.output_tokens, e.cost_usd, e.duration_ms,
                 e.model, e.ts, e.run_id, e.call_id])
        elif isinstance(e, ev.BudgetChanged):
            delta.put(cost_usd=e.spent_usd, input_tokens=e.input_tokens, output_tokens=e.output_tokens,
                      sub_calls=e.sub_calls)
        elif isinstance(e, (ev.RunFinished, ev.RunFailed)):
            totals = dict(e.totals or {})
            delta.put(status=e.status, answer=e.answer, error=getattr(e, "error", None),
                      finished_utc=e.ts, totals_json=dumps(totals), limited=summary(totals.get("limited")),
                      unpriced=", ".join(totals.get("unpriced_models") or []) or None,
                      **{k: totals[k] for k in TOTAL_COLUMNS if totals.get(k) is not None})
            db.execute("UPDATE calls SET status = 'unfinished' WHERE run_id = ? AND status = 'running'",
                       [e.run_id])
            for key in [k for k in self._turns if k[0] == e.run_id]:
                self._fold_tokens(db, *key)

    def _run_started(self, db: sqlite_utils.Database, e: ev.RunStarted) -> None:
        config = dict(e.config or {})
        labels = config.get("model_labels") if isinstance(config.get("model_labels"), dict) else {}
        owner = self.owner
        db.execute(
            "INSERT INTO runs (id, question, status, root_model, sub_model, max_depth, max_iterations, "
            "max_cost_usd, max_sub_calls, config_json, documents, total_chars, created_utc, version, "
            "parent_run_id, owner_pid, owner_host, owner_token, root_model_label, sub_model_label, evaluation_id, "
            "fork_turn) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO NOTHING",
            [e.run_id, e.question, e.root_model, e.sub_model, config.get("max_depth"),
             config.get("max_iterations"), config.get("max_cost_usd"), config.get("max_sub_calls"),
             dumps(config), len(e.documents or ()), e.total_chars, e.ts, e.version,
             getattr(e, "parent_run_id", None),
             getattr(owner, "pid", None), getattr(owner, "host", None), getattr(owner, "token", None),
             labels.get(e.root_model), labels.get(e.sub_model), getattr(e, "evaluation_id", None),
             (getattr(e, "forked_from", None) or {}).get("turn")])

    @staticmethod
    def _update_run(db: sqlite_utils.Database, run_id: str, delta: _RunDelta) -> None:
        parts, params = [], []
        for column, n in delta.inc.items():
            parts.append(f"{column} = {column} + ?")
            params.append(n)
        for column, value in delta.set.items():
            parts.append(f"{column} = ?")
            params.append(value)
        if parts:
            db.execute(f"UPDATE runs SET {', '.join(parts)} WHERE id = ?", [*params, run_id])
