"""Run a grid: every queued cell is one ordinary stored run over its one document,
asked the column's question, all of them reserving from one grid-wide budget.

    grid = GridRun(db, grid_id, documents, config, run_cell=..., concurrency=8, writer=writer)
    summary = await grid.run(on_cell=print)      # grid.stop(): no cell starts, the running ones stop

`writer` (an EventWriter, core/store/writer.py) is the one its cells' runs write their
events through (app/grid_runs.py): the grid's cell rows go through it too, in the same
commits, each after its run's events. Without it they are written on `db`, a commit each.
The caller supplies `run_cell(question, document, config, shared_budget, run_id) ->
RunOutcome` (app/grid_runs.py: a RunRequest on RunService, like every run), so this module
needs no app. Each cell's run is the engine's Auto: one plain call when the document takes
at most a quarter of the root model's window, the RLM otherwise (docs/dev/grid.md has the
measurements behind that). At most `concurrency` cells run at once, and only their
documents are read: memory follows the cells in flight, not the grid's size.

States: a cell whose run finished is done (its typed value parsed, or flagged); a run
that failed is failed (its error said); a run that the grid's dollar cap stopped or
shortened, or a cell the cap left no room to start, is limited. Stop puts the running
cells back in the queue; every ended cell is committed (within the writer's next batch).
A cell whose run ended in a process that died before the cell was written takes that
run's answer when the grid resumes (it is not asked again).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Awaitable, Callable, Sequence

from core.engine.budget import Budget
from core.grid import store as gs
from core.grid.model import cell_question
from core.grid.values import parse_value
from core.lifecycle import finish
from core.store.db import write_transaction

log = logging.getLogger(__name__)

# The grid's EventWriter waits this long after each batch: its cells' events share commits
# and wake-ups (core/store/writer.py); a kill -9 loses at most this much more of them.
WRITER_LINGER_S = 0.05

RunCell = Callable[[str, Any, Any, Budget, str], Awaitable[Any]]


@dataclass(frozen=True)
class CellEvent:
    """What the grid tells its watchers: a cell started or ended."""
    row: int
    col: int
    state: str
    cost_usd: float = 0.0
    answer: str | None = None
    flag: str | None = None
    error: str | None = None
    run_id: str | None = None
    value: Any = None


class GridRun:
    def __init__(self, db: Any, grid_id: str, documents: Sequence[Any | None], config: Any, *,
                 run_cell: RunCell, concurrency: int = 8, max_cost_usd: float | None = None,
                 writer: Any = None) -> None:
        """`documents[i]` is row i's document (None: the row could not be read)."""
        self.db = db
        self.grid_id = grid_id
        self.documents = list(documents)
        # A grid cap makes every cell's run check its models' prices, as a run's own cap does.
        self.config = config if max_cost_usd is None or config.max_cost_usd is not None else \
            config.replace(max_cost_usd=max_cost_usd)
        self.run_cell = run_cell
        self.concurrency = max(1, concurrency)
        data = gs.load_grid(db, grid_id, citations=False)
        self.columns, self.rows = data.columns, data.rows
        # One budget for the grid, across resumes: what earlier sessions spent counts.
        self.budget = Budget(max_cost_usd=max_cost_usd, max_sub_calls=None)
        self.budget.spent_usd = data.cost_usd
        self.stopped = False
        self.writer = writer
        self._tasks: set[asyncio.Task] = set()

    def _write(self, fn: Callable[[Any], None]) -> None:
        """Rows of the grid: through the writer (ordered after the runs' events, committed in
        its next batch), or on `db` at once."""
        if self.writer is None:
            with write_transaction(self.db):
                fn(self.db)
            return
        try:
            self.writer.submit(fn, _log_failure)
        except Exception as exc:                # the writer stopped: said in the log, the grid goes on
            log.error("a grid row could not be handed to the writer: %s", exc)

    async def _written(self) -> None:
        """Wait until every row handed to the writer is committed."""
        if self.writer is not None:
            try:
                await asyncio.to_thread(self.writer.flush, 120.0)
            except Exception as exc:            # StoreWriteError: the grid is read as it was committed
                log.error("the grid's rows could not all be written: %s", exc)

    def stop(self) -> None:
        """No cell starts after this; the running cells' runs are cancelled (call on the loop)."""
        self.stopped = True
        for task in list(self._tasks):
            task.cancel()

    async def run(self, on_cell: Callable[[CellEvent], None] | None = None, *,
                  citations: bool = True) -> gs.GridData:
        """Run the queued cells; the grid as it ends (`citations=False`: its cells without
        their citations, gs.load_grid)."""
        emit = on_cell or (lambda _e: None)
        self._write(lambda db: gs.set_status(db, self.grid_id, "running"))
        taken = self._take_interrupted(emit)
        pending = iter([cell for cell in gs.queued_cells(self.db, self.grid_id) if cell not in taken])

        async def worker() -> None:
            for row, col in pending:               # shared iterator: each cell taken once
                if self.stopped:
                    return
                task = asyncio.ensure_future(self._cell(row, col, emit))
                self._tasks.add(task)
                try:
                    await asyncio.wait({task})
                except asyncio.CancelledError:      # the grid itself cancelled: its cell ends first
                    task.cancel()
                    await finish(asyncio.wait({task}))
                    raise
                finally:
                    self._tasks.discard(task)
                if task.cancelled() and not self.stopped:
                    raise asyncio.CancelledError
        workers = [asyncio.ensure_future(worker()) for _ in range(self.concurrency)]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            self.stop()
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            self._write(lambda db: gs.set_status(db, self.grid_id, "stopped"))
            raise
        await self._written()
        status = "stopped" if self.stopped or gs.cell_counts(self.db, self.grid_id)["queued"] else "finished"
        self._write(lambda db: gs.set_status(db, self.grid_id, status))
        await self._written()
        return gs.load_grid(self.db, self.grid_id, citations=citations)

    def _take_interrupted(self, emit: Callable[[CellEvent], None]) -> set[tuple[int, int]]:
        """The cells whose run ended before a process died: ended with that run's answer."""
        taken = set()
        for cell in gs.interrupted_cells(self.db, self.grid_id):
            row, col, document = cell["row"], cell["col"], self.documents[cell["row"]]
            if document is None:
                continue
            totals = json.loads(cell["totals_json"] or "{}")
            outcome = SimpleNamespace(status=cell["status"], answer=cell["answer"], error=cell["error"],
                                      totals=totals, run_id=cell["run_id"])
            result = self._result(row, col, outcome, document)
            self.budget.spent_usd += result.cost_usd      # spent then, never counted in the grid's cost
            self._end(emit, result)
            taken.add((row, col))
        return taken

    def _room_left(self) -> bool:
        cap = self.budget.max_cost_usd
        return cap is None or self.budget.spent_usd < cap - 1e-9

    async def _cell(self, row: int, col: int, emit: Callable[[CellEvent], None]) -> None:
        column, document = self.columns[col], self.documents[row]
        if document is None:                    # read at open time as failed; a resume without it
            self._end(emit, gs.CellResult(row, col, "failed", error=self.rows[row].error or
                                          f"{self.rows[row].path} could not be read"))
            return
        if not self._room_left():
            self._end(emit, gs.CellResult(row, col, "limited", error=(
                f"not run: the grid's dollar cap ${self.budget.max_cost_usd:.4f} is spent")))
            return
        try:
            # The cell's document is held while its cell runs (read once, not once per reader),
            # and let go of when it ends: the texts in memory are those of the cells in flight.
            held = document if document.held else document.but(text=document.text)
        except OSError as exc:                  # changed or gone since it was read
            self._end(emit, gs.CellResult(row, col, "failed", error=str(exc)))
            return
        try:
            await self._held_cell(row, col, column, held, emit)
        finally:
            if held is not document:            # the finished run's objects keep the copy, not its text
                held.let_go_of_text(document.text_reader)

    async def _held_cell(self, row: int, col: int, column: Any, document: Any,
                         emit: Callable[[CellEvent], None]) -> None:
        run_id = uuid.uuid4().hex
        self._write(lambda db: gs.start_cell(db, self.grid_id, row, col, run_id))
        emit(CellEvent(row, col, "running", run_id=run_id))
        try:
            outcome = await self.run_cell(cell_question(column, document.path), document, self.config,
                                          self.budget, run_id)
        except asyncio.CancelledError:
            self._write(lambda db: gs.unstart_cell(db, self.grid_id, row, col))
            emit(CellEvent(row, col, "queued", run_id=run_id))
            raise
        except Exception as exc:                # refused before it ran: a sentence, the grid goes on
            log.info("grid %s cell %d,%d: %s", self.grid_id, row, col, exc)
            self._end(emit, gs.CellResult(row, col, "failed", error=str(exc) or type(exc).__name__,
                                          run_id=run_id))
            return
        if outcome.status == "cancelled" and self.stopped:
            self._write(lambda db: gs.unstart_cell(db, self.grid_id, row, col))
            emit(CellEvent(row, col, "queued", run_id=run_id))
            return
        self._end(emit, self._result(row, col, outcome, document))

    def _result(self, row: int, col: int, outcome: Any, document: Any) -> gs.CellResult:
        from core.limits import is_limited, summary
        totals = outcome.totals or {}
        cost = float(totals.get("cost_usd") or 0.0)
        answer = outcome.answer
        citations = cell_citations(answer, document)
        limited = totals.get("limited") or {}
        if outcome.status == "finished" and answer is not None:
            try:
                text = document.text if self.columns[col].type == "excerpt" else None
            except OSError:                     # changed since it was read: the excerpt is not checked
                text = None
            parsed = parse_value(self.columns[col].type, answer, text)
            state = "limited" if is_limited(limited) and _by_cost(limited) else "done"
            note = "; ".join(filter(None, [summary(limited) if state == "limited" else None, totals.get("retried")]))
            return gs.CellResult(row, col, state, answer, parsed.value, parsed.flag, note or None, cost,
                                 outcome.run_id, citations)
        state = "limited" if outcome.status == "capped" else "failed"
        error = "; ".join(filter(None, [outcome.error or outcome.status, totals.get("retried")]))
        return gs.CellResult(row, col, state, answer, None, None, error, cost, outcome.run_id, citations)

    def _end(self, emit: Callable[[CellEvent], None], result: gs.CellResult) -> None:
        self._write(lambda db: gs.finish_cell(db, self.grid_id, result))
        emit(CellEvent(result.row, result.col, result.state, result.cost_usd, result.answer, result.flag,
                       result.error, result.run_id, result.value))


def _log_failure(error: BaseException | None) -> None:
    if error is not None:
        log.error("a grid row could not be written: %s", error)


def _by_cost(limited: dict) -> bool:
    """Whether the dollar cap changed the run (refused or shortened calls)."""
    return bool(limited.get("shortened_calls") or (limited.get("refused_by") or {}).get("the dollar cap"))


def cell_citations(answer: str | None, document: Any) -> list[dict]:
    """The answer's citations against its one document, each with the passage it names."""
    if not answer:
        return []
    from core.ingest.citations import resolve_citations
    out = []
    try:
        cites = resolve_citations(answer, [document])
        text = document.text if any(c.ok for c in cites) else ""
    except OSError as exc:
        log.warning("citations of a grid cell could not be read back: %s", exc)
        return []
    for c in cites:
        item = {"reference": c.text, "path": c.path, "address": c.address, "ok": c.ok, "problem": c.problem,
                "start": c.start, "end": c.end}
        if c.ok and c.start is not None:
            item["passage"] = text[c.start:c.end][:2000]
        out.append(item)
    return out
