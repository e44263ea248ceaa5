"""RunRecord: the one fold of a run's events into its call tree.

Every reader of a run folds its events here, event by event, live or from the store:
the window's live view (core/runview.py adds what only the panes need), the store's
projection into `calls` rows, the trust record (verify, fork, compare, rebuild), coverage,
the cost projection and the reports.

    record = RunRecord()
    for event in events: change = record.apply(event)       # a Change: what it added, updated

State kept:
  meta      question, models, caps (RunStarted)
  nodes     the call tree (ids as in core/events.py, typed by core/call_ids.py): the RLM "R",
            turns, cells, sub-calls and nested RLMs, each with its parent and children. A
            node whose parent is not known hangs under "R" instead of failing; a missing
            cell is made up from its id when its turn is known.
  turns     every root turn of every RLM (text streamed by RootTokens, replaced by
            RootReplied.text, which is authoritative), with its cells
  costs     each node's own cost (`cost_usd`: a nested RLM makes no call itself, so 0) and
            `subtree_cost_usd`: its own and every node's below, each added once
  figures   cells, syntax/runtime errors, faults, sub-calls, top-level turns
  budget    the last BudgetChanged, then the totals of the terminal event
  notices, status, answer, error, totals

`keep_texts=False` keeps the tree and the figures without prompts, replies and cell
output (the store's writer: those are in the database already).
"""

from __future__ import annotations

from typing import Any

from core import events as ev
from core.call_ids import CallId, parse as parse_call_id, turn_of_cell
from core.run_nodes import (  # noqa: F401  (re-exported: the readers of the record use them)
    ROOT_ID, TERMINAL_STATUSES, Budget, Cell, Change, Figures, Meta, Node, NoticeItem, Turn)

_PREVIEW_CHARS = 160


class RunRecord:
    """Fold of one run's events. `apply(event)` returns a `Change`."""

    def __init__(self, *, keep_texts: bool = True) -> None:
        self.keep_texts = keep_texts
        self.meta = Meta()
        self.status = "idle"             # idle|running|finished|capped|failed|cancelled
        self.answer: str | None = None
        self.error: str | None = None
        self.totals: dict[str, Any] = {}
        self.turns: dict[str, Turn] = {}
        self.cells: dict[str, Cell] = {}
        self.nodes: dict[str, Node] = {}
        self.node_list: list[Node] = []  # by serial
        self.budget = Budget()
        self.figures = Figures()
        self.notices: list[NoticeItem] = []
        self.events_applied = 0
        self.started_ts: float | None = None
        self.ended_ts: float | None = None
        self.last_ts: float | None = None
        self._handlers = {
            "RunStarted": self._run_started, "RootTurnStarted": self._turn_started,
            "RootTokens": self._tokens, "RootReplied": self._replied, "RootCallFailed": self._root_failed,
            "CellStarted": self._cell_started, "CellExecuted": self._cell_executed,
            "SubCallStarted": self._sub_started, "SubCallFinished": self._sub_finished,
            "BudgetChanged": self._budget, "Notice": self._notice, "SubCallWaiting": self._sub_waiting,
            "RunFinished": self._terminal, "RunFailed": self._terminal,
        }

    # ---- queries -------------------------------------------------------
    @property
    def root(self) -> Node | None:
        return self.nodes.get(ROOT_ID)

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def top_turns(self) -> list[Turn]:
        """The top-level RLM's turns, in the order they started."""
        return [t for t in self.turns.values() if t.top]

    def sub_calls(self) -> list[Node]:
        """Every sub-call and nested RLM, any depth, in the order they started."""
        return [n for n in self.node_list if n.kind in ("llm", "rlm") and n.parent is not None]

    def top_turn(self, iteration: int) -> Turn | None:
        """The top-level RLM's turn `iteration`."""
        return next((t for t in self.top_turns() if t.iteration == iteration), None)

    def top_cells(self) -> list[Cell]:
        """The cells of the top-level RLM's turns, in order."""
        return [c for t in self.top_turns() for c in t.cells]

    def conversation(self, upto: int | None = None) -> list[dict[str, Any]]:
        """The top-level root's messages: every turn's new messages and reply; with `upto`=N
        the conversation as the root saw it when turn N was asked (without N's reply)."""
        messages: list[dict[str, Any]] = []
        for t in self.top_turns():
            if upto is not None and t.iteration > upto:
                break
            messages += [dict(m) for m in t.new_messages]
            if upto is not None and t.iteration == upto:
                break
            if t.reply is not None:
                messages.append({"role": "assistant", "content": t.reply})
        return messages

    # ---- the fold ------------------------------------------------------
    def apply(self, event: ev.Event) -> Change:
        self.events_applied += 1
        ts = event.ts
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts
        handler = self._handlers.get(event.type)
        if handler is None:
            return Change("ignored")
        return handler(event)

    def apply_many(self, events: list[ev.Event]) -> list[Change]:
        apply = self.apply
        return [apply(e) for e in events]

    # ---- tree helpers --------------------------------------------------
    def _ensure_root(self, added: list[str]) -> Node:
        root = self.nodes.get(ROOT_ID)
        if root is None:
            root = self._new_node(ROOT_ID, "rlm", None, added, label="RLM")
        return root

    def _new_node(self, node_id: str, kind: str, parent: Node | None, added: list[str], *,
                  label: str = "") -> Node:
        node = Node(id=node_id, kind=kind, serial=len(self.node_list), parent=parent, label=label or kind)
        if parent is not None:
            node.row = len(parent.children)
            node.depth = parent.depth if kind != "rlm" else parent.depth + 1
            parent.children.append(node)
        self.nodes[node_id] = node
        self.node_list.append(node)
        added.append(node_id)
        return node

    def _parent_for(self, parent_id: str | None, fallback_id: str | None, added: list[str]) -> Node:
        """The parent node; a missing cell is made up when its turn exists,
        anything else unknown hangs under the root."""
        for pid in (parent_id, fallback_id):
            if not pid:
                continue
            node = self.nodes.get(pid)
            if node is not None:
                return node
            parsed = parse_call_id(pid)
            if parsed is not None and parsed.kind == "cell" and parsed.turn_id in self.turns:
                return self._ensure_cell(pid, parsed.turn_id, parsed.cell, added)
        return self._ensure_root(added)

    def _ensure_turn(self, turn_id: str, parent_id: str | None, added: list[str]) -> Turn:
        turn = self.turns.get(turn_id)
        if turn is not None:
            return turn
        parsed = parse_call_id(turn_id)
        rlm_id, n = (parsed.owner, parsed.turn) if parsed is not None and parsed.kind == "turn" else (ROOT_ID, None)
        parent = self._parent_for(parent_id, rlm_id, added)
        iteration = n if n is not None else len(parent.children) + 1
        node = self._new_node(turn_id, "turn", parent, added, label=f"turn {iteration}")
        turn = Turn(id=turn_id, rlm_id=rlm_id, iteration=iteration, depth=node.depth)
        self.turns[turn_id] = turn
        if turn.rlm_id == ROOT_ID:
            self.figures.iterations += 1
            self._top_turn_added(turn)
        return turn

    def _top_turn_added(self, turn: Turn) -> None:
        """A top-level turn joined the record (the live view lists it)."""

    def _ensure_cell(self, cell_id: str, turn_id: str | None, index: int, added: list[str]) -> Node:
        node = self.nodes.get(cell_id)
        if node is not None:
            return node
        if not turn_id:
            turn_id = turn_of_cell(cell_id)
        turn = self.turns.get(turn_id) if turn_id else None
        if turn is None and turn_id:
            turn = self._ensure_turn(turn_id, None, added)
        parent = self.nodes[turn.id] if turn is not None else self._ensure_root(added)
        node = self._new_node(cell_id, "cell", parent, added, label=f"cell {index}")
        cell = Cell(id=cell_id, turn_id=turn.id if turn else "", index=index, node=node)
        self.cells[cell_id] = cell
        if turn is not None:
            turn.cells.append(cell)
        return node

    def _set_own_cost(self, node: Node, usd: float) -> None:
        """A call's own cost, added once to its subtree and every ancestor's."""
        step = usd - node.cost_usd
        node.cost_usd = usd
        walk: Node | None = node
        while walk is not None and step:
            walk.subtree_cost_usd += step
            walk = walk.parent

    # ---- handlers ------------------------------------------------------
    def _run_started(self, e: ev.RunStarted) -> Change:
        m = self.meta
        m.run_id, m.question, m.root_model, m.sub_model = e.run_id, e.question, e.root_model, e.sub_model
        m.config, m.documents, m.total_chars, m.version = dict(e.config or {}), list(e.documents), e.total_chars, e.version
        m.parent_run_id = getattr(e, "parent_run_id", None)
        m.forked_from = getattr(e, "forked_from", None)
        self.status = "running"
        self.started_ts = e.ts
        self.budget.cap_usd = m.config.get("max_cost_usd")
        self.budget.unpriced = tuple(m.label(x) for x in getattr(e, "unpriced_models", None) or ())
        added: list[str] = []
        root = self._ensure_root(added)
        root.model, root.routed_model, root.prompt = m.label(e.root_model), e.root_model, e.question
        root.preview = _preview(e.question)
        root.started_ts = e.ts
        return Change("run_started", added=tuple(added), updated=(ROOT_ID,))

    def _turn_started(self, e: ev.RootTurnStarted) -> Change:
        added: list[str] = []
        turn_id = e.call_id or CallId.for_turn(ROOT_ID, e.iteration)
        turn = self._ensure_turn(turn_id, e.parent_id, added)
        model = self.meta.label(e.model)
        turn.iteration, turn.depth, turn.model, turn.final_request = e.iteration, e.depth, model, e.final_request
        if self.keep_texts:
            turn.new_messages = list(e.new_messages)
        node = self.nodes[turn_id]
        node.model, node.routed_model, node.started_ts, node.label = model, e.model, e.ts, f"turn {e.iteration}"
        if e.final_request:
            node.label += " (final)"
        return Change("turn_added", turn_id=turn_id, added=tuple(added), updated=(turn_id,))

    def _tokens(self, e: ev.RootTokens) -> Change:
        turn_id = e.call_id or ""
        turn = self.turns.get(turn_id)
        added: list[str] = []
        if turn is None:
            turn = self._ensure_turn(turn_id or CallId.for_turn(ROOT_ID, self.figures.iterations + 1), e.parent_id, added)
        if turn.replied or not self.keep_texts:
            return Change("ignored", turn_id=turn.id, added=tuple(added))
        turn.stream(e.delta)
        return Change("tokens", turn_id=turn.id, added=tuple(added), delta=e.delta)

    def _replied(self, e: ev.RootReplied) -> Change:
        added: list[str] = []
        turn_id = e.call_id or CallId.for_turn(ROOT_ID, max(self.figures.iterations, 1))
        turn = self._ensure_turn(turn_id, e.parent_id, added)
        text = e.text if self.keep_texts else ""
        turn.set_reply(text)
        turn.input_tokens, turn.output_tokens = e.input_tokens, e.output_tokens
        turn.cost_usd, turn.duration_ms = e.cost_usd, e.duration_ms
        turn.model = self.meta.label(e.model) or turn.model
        node = self.nodes[turn.id]
        node.status = "ok"
        node.model, node.routed_model = turn.model, e.model or node.routed_model
        if text:
            node.response = text
            node.preview = _preview(turn.prose) or _preview(text)
        node.input_tokens, node.output_tokens = e.input_tokens, e.output_tokens
        self._set_own_cost(node, e.cost_usd)
        node.duration_ms = e.duration_ms
        return Change("turn_replied", turn_id=turn.id, added=tuple(added), updated=(turn.id,))

    def _root_failed(self, e: ev.RootCallFailed) -> Change:
        added: list[str] = []
        turn = self._ensure_turn(e.call_id or CallId.for_turn(ROOT_ID, max(self.figures.iterations, 1)), e.parent_id, added)
        turn.cost_usd, turn.duration_ms = e.cost_usd, e.duration_ms
        node = self.nodes[turn.id]
        node.status, node.error = e.status, e.error
        node.input_tokens, node.output_tokens, node.duration_ms = e.input_tokens, e.output_tokens, e.duration_ms
        node.routed_model = e.model or node.routed_model
        self._set_own_cost(node, e.cost_usd)
        return Change("node_updated", turn_id=turn.id, added=tuple(added), updated=(turn.id,))

    def _cell_node(self, e: ev.CellStarted | ev.CellExecuted, added: list[str]) -> Node:
        turn_id = e.parent_id or (turn_of_cell(e.call_id) if e.call_id else None)
        cell_id = e.call_id or CallId.for_cell(turn_id or ROOT_ID, e.index)
        if turn_id and turn_id not in self.turns:
            self._ensure_turn(turn_id, None, added)
        return self._ensure_cell(cell_id, turn_id, e.index, added)

    def _cell_started(self, e: ev.CellStarted) -> Change:
        added: list[str] = []
        node = self._cell_node(e, added)
        cell = self.cells[node.id]
        node.started_ts = e.ts
        if self.keep_texts:
            cell.code = node.prompt = e.code
            node.preview = _preview(e.code)
        return Change("cell_started", turn_id=cell.turn_id, cell_id=node.id, added=tuple(added),
                      updated=(node.id,))

    def _cell_executed(self, e: ev.CellExecuted) -> Change:
        added: list[str] = []
        node = self._cell_node(e, added)
        cell = self.cells[node.id]
        first = not cell.done
        cell.error, cell.is_syntax_error, cell.fault, cell.restarted = e.error, e.is_syntax_error, e.fault, e.restarted
        cell.duration_ms, cell.done = e.duration_ms, True
        if self.keep_texts:
            cell.code, cell.stdout, cell.stderr, cell.output_for_model = e.code, e.stdout, e.stderr, e.output_for_model
            node.prompt, node.preview, node.response = e.code, _preview(e.code), cell.output
        node.error, node.duration_ms = e.error or "", e.duration_ms
        kind = cell.error_kind
        node.status = {"fault": e.fault or "fault", "syntax": "syntax error", "runtime": "error"}.get(kind or "", "ok")
        if first:
            f = self.figures
            f.cells += 1
            if kind == "syntax":
                f.syntax_errors += 1
            elif kind == "runtime":
                f.runtime_errors += 1
            elif kind == "fault":
                f.faults += 1
        return Change("cell_added", turn_id=cell.turn_id, cell_id=node.id, added=tuple(added),
                      updated=(node.id,))

    def _sub_node(self, e: ev.SubCallStarted | ev.SubCallFinished, added: list[str]) -> Node:
        call_id = e.call_id or f"{ROOT_ID}.s?{len(self.node_list)}"
        node = self.nodes.get(call_id)
        if node is None:
            parent = self._parent_for(e.parent_id, None, added)
            node = self._new_node(call_id, "rlm" if e.kind == "rlm" else "llm", parent, added, label=e.kind)
            self.figures.sub_calls += 1
        return node

    def _sub_started(self, e: ev.SubCallStarted) -> Change:
        added: list[str] = []
        node = self._sub_node(e, added)
        node.model, node.routed_model, node.started_ts = self.meta.label(e.model), e.model, e.ts
        if self.keep_texts:
            node.prompt, node.preview = e.prompt, _preview(e.prompt)
        node.status = "running"
        return Change("node_added", added=tuple(added), updated=(node.id,))

    def _sub_finished(self, e: ev.SubCallFinished) -> Change:
        added: list[str] = []
        node = self._sub_node(e, added)
        if not added and not node.running:
            self._count_sub_status(node.status, -1)
        node.status, node.error_type, node.from_record = e.status, e.error_type, e.from_record
        node.model = self.meta.label(e.model) or node.model
        node.routed_model = e.model or node.routed_model
        if self.keep_texts:
            node.response = e.response or ""
        node.error = e.error or ""
        node.input_tokens, node.output_tokens = e.input_tokens, e.output_tokens
        self._set_own_cost(node, e.cost_usd)
        node.duration_ms = e.duration_ms
        self._count_sub_status(e.status, 1)
        return Change("node_updated", added=tuple(added), updated=(node.id,))

    def _sub_waiting(self, e: ev.SubCallWaiting) -> Change:
        """A sub-call waits for budget ("waiting": neither running nor finished), or goes on."""
        node = self.nodes.get(e.call_id or "")
        if node is None or node.status not in ("running", "waiting"):
            return Change("ignored")
        node.status = "waiting" if e.waiting else "running"
        return Change("node_updated", updated=(node.id,))

    def _count_sub_status(self, status: str, step: int) -> None:
        if status == "error":
            self.figures.sub_call_errors += step
        elif status == "refused":
            self.figures.refused_calls += step

    def _budget(self, e: ev.BudgetChanged) -> Change:
        b = self.budget
        b.spent_usd, b.reserved_usd = e.spent_usd, e.reserved_usd
        if e.cap_usd is not None or b.cap_usd is None:
            b.cap_usd = e.cap_usd
        b.input_tokens, b.output_tokens = e.input_tokens, e.output_tokens
        b.sub_calls, b.in_flight = e.sub_calls, e.in_flight
        b.overrun_usd, b.estimated_usage_calls = e.overrun_usd, e.estimated_usage_calls
        b.nested_running, b.nested_waiting = e.nested_running, e.nested_waiting
        b.waiting_for_budget = getattr(e, "waiting_for_budget", 0)
        b.waiting_worst_usd = getattr(e, "waiting_worst_usd", 0.0)
        self.figures.cost_usd = e.spent_usd
        return Change("budget")

    def _notice(self, e: ev.Notice) -> Change:
        self.notices.append(NoticeItem(e.level, e.message, e.call_id, e.ts))
        return Change("notice")

    def _terminal(self, e: ev.RunFinished | ev.RunFailed) -> Change:
        self.status = e.status
        self.answer = e.answer
        self.error = getattr(e, "error", None)
        self.totals = dict(e.totals or {})
        self.ended_ts = e.ts
        added: list[str] = []
        root = self._ensure_root(added)
        root.status = e.status
        root.response = e.answer or ""
        root.error = self.error or ""
        t, f, b = self.totals, self.figures, self.budget
        f.cost_usd = float(t.get("cost_usd", f.cost_usd))
        f.wall_s = t["wall_ms"] / 1000 if "wall_ms" in t else max((e.ts - (self.started_ts or e.ts)), 0.0)
        b.spent_usd = f.cost_usd if "cost_usd" in t else b.spent_usd
        b.input_tokens = int(t.get("input_tokens", b.input_tokens))
        b.output_tokens = int(t.get("output_tokens", b.output_tokens))
        b.sub_calls = int(t.get("sub_calls", b.sub_calls))
        b.reserved_usd, b.in_flight, b.nested_running, b.nested_waiting = 0.0, 0, 0, 0
        b.waiting_for_budget, b.waiting_worst_usd = 0, 0.0
        b.overrun_usd = float(t.get("overrun_usd", b.overrun_usd))
        b.estimated_usage_calls = int(t.get("estimated_usage_calls", b.estimated_usage_calls))
        if t.get("unpriced_models"):
            b.unpriced = tuple(self.meta.label(m) for m in t["unpriced_models"])
        return Change("finished", added=tuple(added), updated=(ROOT_ID,))


def fold_record(events: Any, **kw: Any) -> RunRecord:
    """A RunRecord with every event of `events` applied."""
    record = RunRecord(**kw)
    for event in events:
        record.apply(event)
    return record


def _preview(text: str) -> str:
    return " ".join(text[:_PREVIEW_CHARS * 2].split())[:_PREVIEW_CHARS]
