"""RunView: the window's live view of a run, over the one fold of its events.

Live runs and replays go through the same `RunView.apply(event)`, so a replayed run
looks exactly like the live one. The tree, the turns, the cells, their costs and the
figures are the fold's (core/run_record.py, which every reader of a run shares); this
adds only what the panes need beside it:

  timeline  what the transcript lists, in order: top-level turns, notices, final
  spend     (seconds since the start, dollars spent) each time the spend changed
  the end   a node still running when the run ended shows as cancelled

No Qt here: the widgets in ui/ are thin adapters that read this state and use the
returned `Change` to update incrementally (insert tree rows, append streamed text,
repaint the meter).
"""

from __future__ import annotations

from core import events as ev
from core.fences import display_prose  # noqa: F401  (re-exported: the panes use it)
from core.run_nodes import (  # noqa: F401  (re-exported: the panes use them)
    ROOT_ID, TERMINAL_STATUSES, Budget, Cell, Change, Figures, Meta, Node, NoticeItem, Turn)
from core.run_record import RunRecord


class RunView(RunRecord):
    """The fold of one run's events, with what the panes show beside it."""

    def __init__(self) -> None:
        super().__init__()
        # (seconds since the start, dollars spent) each time the spend changed: the meter's
        # spend-over-time picture. A few hundred points even for long runs.
        self.spend: list[tuple[float, float]] = []
        self.timeline: list[tuple[str, str | int | None]] = []  # ("turn", id) | ("notice", i) | ("final", None)
        self._handlers.update(BudgetChanged=self._budget, Notice=self._notice,
                              RunFinished=self._terminal, RunFailed=self._terminal)

    # ---- queries -------------------------------------------------------
    @property
    def iteration(self) -> int:
        """Top-level root turns started so far (k of `meta.max_iterations`)."""
        return self.figures.iterations

    def elapsed(self, now: float | None = None) -> float:
        """Seconds since RunStarted: to the terminal event if there is one, else
        to `now` (live) or to the last event seen (replay)."""
        if self.started_ts is None:
            return 0.0
        end = self.ended_ts if self.ended_ts is not None else (now if now is not None else self.last_ts)
        return max((end or self.started_ts) - self.started_ts, 0.0)

    def node_texts(self, node_id: str) -> list[tuple[str, str]]:
        """Titled texts that describe a node in full (for the detail panel)."""
        node = self.nodes.get(node_id)
        if node is None:
            return []
        if node.kind == "turn":
            turn = self.turns.get(node_id)
            return [("Reply" if (turn and turn.replied) else "Reply (streaming)", turn.text if turn else "")]
        if node.kind == "cell":
            cell = self.cells.get(node_id)
            if cell is None:
                return []
            parts = [("Code", cell.code), ("Output", cell.output)]
            if cell.error:
                parts.append(("Error", cell.error))
            return parts
        if node.id == ROOT_ID:
            parts = [("Question", self.meta.question), ("Answer", self.answer or "")]
            if self.error:
                parts.append(("Error", self.error))
            return parts
        parts = [("Prompt", node.prompt), ("Response", node.response)]
        if node.error:
            parts.append(("Error", node.error))
        return parts

    # ---- beside the fold ---------------------------------------------------
    def _top_turn_added(self, turn: Turn) -> None:
        self.timeline.append(("turn", turn.id))

    def _budget(self, e: ev.BudgetChanged) -> Change:
        if e.spent_usd != self.budget.spent_usd or not self.spend:
            self.spend.append((max(0.0, e.ts - (self.started_ts or e.ts)), e.spent_usd))
        return super()._budget(e)

    def _notice(self, e: ev.Notice) -> Change:
        change = super()._notice(e)
        self.timeline.append(("notice", len(self.notices) - 1))
        return change

    def _terminal(self, e: ev.RunFinished | ev.RunFailed) -> Change:
        first = not self.finished
        change = super()._terminal(e)
        updated = list(change.updated)
        for node in self.node_list:           # nothing stays "running" after the run ended
            if node.running:
                node.status = "cancelled"
                updated.append(node.id)
        if first:
            self.timeline.append(("final", None))
        return Change("finished", added=change.added, updated=tuple(updated))


def fold(events: list[ev.Event]) -> RunView:
    """A RunView with every event of `events` applied."""
    view = RunView()
    view.apply_many(events)
    return view
