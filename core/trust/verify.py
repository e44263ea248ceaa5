"""Verify by re-execution: run a stored run's code cells again, in order, in a fresh
REPL worker over the stored documents, every sub-call answered from the record (no
model calls, no cost), and report whether each cell and the final answer come out
the same, with the first divergence and its diff.

    report = await verify_run(store, run_id)
    report.matches, report.first_divergence, report.to_dict()
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from core.engine.rebuild import PrefixReport, default_timeout, load_record, replay_inherited
from core.engine.replay import RecordedAnswers, cell_differences, replay_cell
from core.run_record import RunRecord


@dataclass(frozen=True)
class CellCheck:
    cell_id: str                 # "R.t2.c1"
    turn: int
    index: int
    same: bool
    diff: str                    # unified diff of stdout/stderr/error; "" when same
    served: int                  # sub-calls answered from the record
    unmatched: list[str] = field(default_factory=list)   # prompts the record does not have
    recorded_stdout: str = ""
    replayed_stdout: str = ""


@dataclass(frozen=True)
class VerifyReport:
    run_id: str
    matches: bool                # every cell and the answer came out the same
    cells: list[CellCheck]
    answer_recorded: str | None
    answer_replayed: str | None
    answer_same: bool
    first_divergence: CellCheck | None
    inherited_cells: int = 0     # cells of parent runs replayed first (forks, follow-ups)
    notes: list[str] = field(default_factory=list)
    duration_ms: int = 0

    @property
    def sub_calls_served(self) -> int:
        return sum(c.served for c in self.cells)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["sub_calls_served"] = self.sub_calls_served
        return data


async def verify_run(store: Any, run_id: str, *, worker_command: list[str] | None = None,
                     on_cell: Callable[[CellCheck], None] | None = None) -> VerifyReport:
    """Verify a stored run (documents come from the store's blobs)."""
    record = load_record(store, run_id)
    return await verify_record(record, store.documents(run_id), store=store, worker_command=worker_command,
                               on_cell=on_cell)


async def verify_record(record: RunRecord, documents: list[Any], *, store: Any = None,
                        worker_command: list[str] | None = None,
                        on_cell: Callable[[CellCheck], None] | None = None) -> VerifyReport:
    from core.engine.parse import parse_reply
    from core.repl.client import ReplClient
    started = time.monotonic()
    config = record.meta.config
    answers = RecordedAnswers(depth_zero=int(config.get("max_depth", 1)) == 0)
    repl = ReplClient(on_sub_call=answers, memory_limit_mb=config.get("memory_limit_mb", 4096),
                      worker_command=worker_command,
                      require_full_sandbox=bool(config.get("require_full_sandbox", False)))
    checks: list[CellCheck] = []
    notes: list[str] = []
    prefix = PrefixReport()
    answer: str | None = None
    answered = False
    try:
        await repl.start()
        await repl.load_context(documents)
        if store is not None:
            await replay_inherited(store, record, repl, answers, report=prefix)
            if prefix.unmatched:
                notes.append("the inherited state left the parent's record at " + ", ".join(prefix.unmatched))
        timeout = default_timeout(record)
        for turn in record.top_turns():
            if answered:
                break
            final: dict | None = None
            for cell in turn.cells:
                if not cell.done:
                    notes.append(f"{cell.id} never finished in the record; not replayed")
                    continue
                done = await replay_cell(repl, answers, cell.code, cell.sub_calls(), timeout_s=timeout)
                diff = cell_differences(cell, done)
                check = CellCheck(cell.id, turn.iteration, cell.index, not diff, diff, done.served,
                                  done.unmatched, cell.stdout or "", done.stdout)
                checks.append(check)
                if on_cell is not None:
                    on_cell(check)
                if done.final is not None:
                    final = done.final
                    break
            if final is not None:
                answer, answered = str(final.get("value", "")), True
            elif turn.reply is not None:
                parsed = parse_reply(turn.reply).final
                if parsed is not None and parsed.kind == "FINAL":
                    answer, answered = parsed.value, True
                elif parsed is not None:
                    found, value, _error = await repl.get_var(parsed.value)
                    if found:
                        answer, answered = value or "", True
    finally:
        await repl.close()
    if record.status == "running":
        notes.append("the recorded run never finished; only its cells are compared")
    answer_same = answer == record.answer or (record.status == "running" and not answered)
    first = next((c for c in checks if not c.same), None)
    return VerifyReport(record.meta.run_id, first is None and answer_same, checks, record.answer, answer,
                        answer_same, first, prefix.cells, notes, int((time.monotonic() - started) * 1000))
