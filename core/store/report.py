"""The shape the Markdown and HTML reports are drawn from: turns with their cells,
and the call tree with the cost of every node."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.run_nodes import Node as FoldNode
from core.run_record import RunRecord, fold_record
from core.store.errors import MissingTextsError, RunNotFound


@dataclass
class Cell:
    id: str
    index: int
    code: str
    output: str                       # what the root was shown
    error: str | None
    is_syntax_error: bool
    fault: str | None
    duration_ms: int


@dataclass
class Node:
    """A calls row (root turn, sub-call or nested RLM) and what hangs below it, with the
    costs of the one fold of the record (core/run_record.py)."""
    call: dict[str, Any]
    cells: list[Cell] = field(default_factory=list)          # turns only
    children: list["Node"] = field(default_factory=list)
    own_cost: float = 0.0             # what its own model call cost (a nested RLM makes none: 0)
    subtree_cost: float = 0.0         # own cost plus every node below, each counted once


@dataclass
class Report:
    run: dict[str, Any]
    config: dict[str, Any]
    totals: dict[str, Any]
    sources: list[dict[str, Any]]
    tree: list[Node]                  # the top-level RLM's turns, in order
    notices: list[dict[str, Any]]
    documents: list[Any] = field(default_factory=list)   # with texts, for cited passages
    forked_from: dict[str, Any] | None = None           # a fork: RunStarted.forked_from
    texts_stored: bool = True            # False: imported without texts (citations unchecked)

    def model_line(self, which: str) -> str:
        """"ollama/qwen2.5-coder:7b (sent as openai/qwen2.5-coder:7b to http://...)": the
        name the user chose first, the route as a detail."""
        run = self.run
        routed = run.get(f"{which}_model") or ""
        chosen = run.get(f"{which}_model_label") or routed
        if chosen == routed:
            return routed
        base = self.config.get("sub_api_base" if which == "sub" else "api_base") \
            or self.config.get("api_base")
        return f"{chosen} (sent as {routed}" + (f" to {base})" if base else ")")


def build(store: Any, run_id: str) -> Report:
    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run with id {run_id!r}")
    labels = (run.get("config") or {}).get("model_labels") or {}
    rows = {c["id"]: c for c in store.calls(run_id)}
    for c in rows.values():              # the name the user chose, the routed one beside it
        c["routed_model"] = c.get("model")
        c["model"] = labels.get(c.get("model"), c.get("model"))
    record = fold_record(store.iter_events(run_id))
    tree = [node for child in (record.root.children if record.root else []) for node in _nodes(child, rows, record)]
    try:
        documents, stored = list(store.documents(run_id)), True
    except MissingTextsError:            # imported without texts: citations stay as text
        documents, stored = [], False
    notices = [{"level": n.level, "message": n.message, "call_id": n.node_id, "ts": n.ts} for n in record.notices]
    return Report(run=run, config=run.get("config") or {}, totals=run.get("totals") or {},
                  sources=store.sources(run_id), tree=tree, notices=notices, documents=documents,
                  texts_stored=stored, forked_from=record.meta.forked_from)


def _nodes(node: FoldNode, rows: dict[str, dict[str, Any]], record: RunRecord) -> list[Node]:
    """The report's nodes for a node of the fold: a call with a row is one; a cell is none
    (its calls hang on its turn)."""
    if node.kind == "cell":
        return [n for child in node.children for n in _nodes(child, rows, record)]
    row = rows.get(node.id)
    if row is None:                      # in the events but not in calls: nothing to show
        return []
    out = Node(row, own_cost=node.cost_usd, subtree_cost=node.subtree_cost_usd)
    turn = record.turns.get(node.id)
    if turn is not None:
        out.cells = [Cell(id=c.id, index=c.index, code=c.code, output=c.output_for_model, error=c.error,
                          is_syntax_error=c.is_syntax_error, fault=c.fault, duration_ms=c.duration_ms or 0)
                     for c in turn.cells if c.done]
    out.children = [n for child in node.children for n in _nodes(child, rows, record)]
    return [out]


def label(call: dict[str, Any]) -> str:
    if call["kind"] == "root":
        depth = call.get("depth") or 0
        return f"turn {call.get('iteration')}" + (f" (depth {depth})" if depth else "")
    return ("nested RLM " if call["kind"] == "rlm" else "sub-call ") + call["id"]


def usage(call: dict[str, Any]) -> str:
    """Model, tokens, own cost and time; a nested RLM's figures are its subtree's."""
    seconds = (call.get("duration_ms") or 0) / 1000
    whose = "subtree " if call.get("kind") == "rlm" else ""      # it makes no call itself
    cost = call.get("subtree_cost_usd") if whose else call.get("cost_usd")
    return (f"{call.get('model') or '?'}, {whose}{call.get('input_tokens') or 0:,} in / "
            f"{call.get('output_tokens') or 0:,} out, {whose}${cost or 0:.4f}, {seconds:.1f} s")


def preview(text: str | None, limit: int) -> str:
    text = text or ""
    if len(text) <= limit:
        return text
    return text[:limit] + f" [... {len(text) - limit:,} more chars]"


CAP_KEYS = ("max_depth", "max_iterations", "max_cost_usd", "max_sub_calls", "max_wall_seconds",
            "cell_timeout_s", "concurrency", "max_output_chars", "root_max_tokens", "sub_max_tokens")
# How a person reads each cap: a label and a unit ("Cost cap: none", "Cell time limit: 60 s").
CAP_LABELS = {"max_depth": ("Recursion depth", ""), "max_iterations": ("Root turns at most", ""),
              "max_cost_usd": ("Cost cap", "$"), "max_sub_calls": ("Sub-calls at most", ""),
              "max_wall_seconds": ("Run time limit", "s"), "cell_timeout_s": ("Cell time limit", "s"),
              "concurrency": ("Sub-calls at once", ""),
              "max_output_chars": ("Cell output shown to the root", "characters"),
              "root_max_tokens": ("Root reply limit", "tokens"), "sub_max_tokens": ("Sub-call reply limit", "tokens")}


def money(value: float | None) -> str:
    """Dollars as the window shows them: "$0.00", "$0.0060", "$12.50"."""
    v = float(value or 0)
    return f"${v:,.2f}" if v == 0 or abs(v) >= 1 else f"${v:.4f}"


def _amount(value: Any, unit: str) -> str:
    if value is None or value == "" or (unit == "$" and not value):
        return "none"
    if unit == "$":
        return money(value)
    number = f"{value:,}" if isinstance(value, int) else f"{value:,g}" if isinstance(value, float) else str(value)
    return f"{number} {unit}".strip()


def cap_rows(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value with its unit) for each cap the run was given, in CAP_KEYS order."""
    return [(CAP_LABELS[k][0], _amount(config.get(k), CAP_LABELS[k][1])) for k in CAP_KEYS if k in config]


def price_rows(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value): the price each model of the run was billed at, by the name the user
    picked (its spec, core/models.py), and where it came from; prices a run stored under
    routed names that could not be tied to one of its models are said as such."""
    rows: list[tuple[str, str]] = []
    specs = [s for s in config.get("specs") or () if isinstance(s, dict)]
    prices = config.get("prices") if isinstance(config.get("prices"), dict) else {}
    for spec in specs:
        price = prices.get(spec.get("name"), spec.get("price"))
        rows.append((f"price of {spec.get('name')}", _price_words(price, spec.get("price_from") or "")))
    if not specs:
        rows += [(f"price of {name}", _price_words(price, "")) for name, price in prices.items()]
    unresolved = config.get("prices_unresolved")
    if isinstance(unresolved, dict) and unresolved:
        rows.append(("prices not tied to this run's models",
                     "; ".join(f"{name} {_price_words(p, '')}" for name, p in unresolved.items())
                     + " (stored under the routed name, before prices were kept per endpoint)"))
    return rows


def _price_words(price: Any, source: str) -> str:
    if not (isinstance(price, (list, tuple)) and len(price) == 2):
        return "unknown"
    where = f" ({source})" if source and source != "unknown" else ""
    if not price[0] and not price[1]:
        return f"free{where}"
    return f"${price[0]:g} in · ${price[1]:g} out per M tokens{where}"


def total_value(totals: dict[str, Any], key: str) -> Any:
    """A total as an export shows it: a cost with an unpriced model in it is "unknown"
    (or "N + unknown"), never 0."""
    value = totals.get(key)
    if key == "cost_usd" and totals.get("unpriced_models"):
        return f"{money(value)} + unknown" if value else "unknown"
    if value is None:
        return "-"
    if key == "cost_usd":
        return money(value)
    if key == "wall_ms":
        return f"{value / 1000:,.1f} s"
    return f"{value:,}" if isinstance(value, int) else value


TOTAL_LABELS = (("cost_usd", "Cost"), ("input_tokens", "Input tokens"), ("output_tokens", "Output tokens"),
                ("iterations", "Root turns"), ("sub_calls", "Sub-calls"), ("cells", "Code cells"),
                ("syntax_errors", "Syntax errors"), ("wall_ms", "Wall time"))


def total_rows(totals: dict[str, Any]) -> list[tuple[str, Any]]:
    """The Totals table of an export: for a plain call, its cost, the one call and its wall time
    (core/plain_call.py) instead of turns, sub-calls, cells and syntax errors."""
    from core.plain_call import plain_call_line
    line = plain_call_line(totals)
    if line:
        return [("Cost", total_value(totals, "cost_usd")), ("Work", line), ("Wall time", total_value(totals, "wall_ms"))]
    return [(name, total_value(totals, key)) for key, name in TOTAL_LABELS]


def export_file_name(run: Any, fmt: str) -> str:
    """The file name an export of `run` is offered under: its question's first words and
    its start time ("when-did-card-payments-fail-2026-12-01-1403.html"), never its hex id.
    The one place export names are made (the window's save dialogs; the CLI takes a path)."""
    from core.run_names import run_file_stem
    return f"{run_file_stem(run)}.{fmt}"
