"""A grid's cells as ordinary runs: each cell a RunRequest on RunService (its one document,
the column's question, the grid's shared budget), from the CLI and the window alike.

    cells = GridCells(RunService(store=store))
    grid = GridRun(db, grid_id, documents, config, run_cell=cells.run_cell, concurrency=8)
"""

from __future__ import annotations

from typing import Any

from app.run_service import RunHandle, RunRequest, RunService


class GridCells:
    def __init__(self, service: RunService) -> None:
        self.service = service

    async def run_cell(self, question: str, document: Any, config: Any, budget: Any, run_id: str) -> Any:
        """One cell's run; a cancel of the awaiting task stops it (recorded as cancelled)."""
        request = RunRequest.ask(question, [document], config, run_id=run_id, shared_budget=budget)
        return await self.service.run(request, handle=RunHandle())
