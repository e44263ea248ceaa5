"""`rlm-studio runs verify|fork|compare|coverage|citations`, and the approval flags of `ask`.

    runs verify ID [--json]            re-run the cells with every sub-call answered from the record
    runs fork ID --turn N [--root M] [--sub M] [--max-cost USD] [--edit-code FILE] [--json]
    runs compare A B [--json]          two runs side by side, and where they first differ
    runs coverage ID [--json]          which parts of the documents the run looked at
    runs citations ID [--json]         the answer's [doc:PATH:ADDRESS] citations, checked
(`runs export ID --format csv -o FILE` writes the results table; see core/trust/results.py.)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from app.cli_common import add_flags, error_exit as _fail, parse_prices, run_request


def register_trust(actions: argparse._SubParsersAction) -> None:
    p = actions.add_parser("verify", help="re-run a run's code with sub-calls answered from the record",
                           description="Re-execute every code cell of a stored run in a fresh REPL, each "
                                       "llm_query answered from the record (no model calls, no cost), and "
                                       "report whether each cell and the answer come out the same.")
    p.add_argument("id", metavar="ID")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=cmd_verify)

    p = actions.add_parser("fork", help="continue a run live from one of its root turns",
                           description="Rebuild the REPL of a stored run up to root turn N by re-execution, "
                                       "then let the root continue live from turn N (a new run linked to it).")
    p.add_argument("id", metavar="ID")
    p.add_argument("--turn", type=int, required=True, metavar="N", help="the root turn to take again")
    p.add_argument("--root", metavar="M", help="another root model")
    p.add_argument("--sub", metavar="M", help="another sub model")
    add_flags(p, "--max-cost", "--max-iterations", "--price")
    p.add_argument("--edit-code", metavar="FILE", help="run this code as turn N instead of asking the root")
    add_flags(p, "--json", "--quiet")
    p.set_defaults(handler=cmd_fork)

    p = actions.add_parser("compare", help="two runs side by side and their first difference")
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_compare)

    p = actions.add_parser("coverage", help="which parts of the documents a run looked at")
    p.add_argument("id", metavar="ID")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_coverage)

    p = actions.add_parser("citations", help="check the [doc:PATH:ADDRESS] citations of a run's answer")
    p.add_argument("id", metavar="ID")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_citations)


def _with_run(prefixes: list[str], body: Callable[..., int]) -> int:
    # lazy: +191 modules in the command (where it runs)
    from core.store import AmbiguousRunId, MissingTextsError, RunNotFound, RunStore
    # lazy: +16 modules in the command (where it runs)
    from core.engine.rebuild import RebuildError
    with RunStore.open() as store:
        try:
            ids = [store.resolve_id(p) for p in prefixes]
            return body(store, *ids)
        except (RunNotFound, AmbiguousRunId, MissingTextsError, RebuildError) as exc:
            return _fail(str(exc))


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=1))


# -- verify -------------------------------------------------------------------------------
def cmd_verify(args: argparse.Namespace) -> int:
    def body(store: Any, run_id: str) -> int:
        # lazy: +89 modules in the command (where it runs)
        from core.trust.verify import verify_run
        on_cell = None if args.json else (lambda c: print(
            f"{c.cell_id:<10} {'same' if c.same else 'DIFFERS'}  ({c.served} sub-call(s) from the record)",
            file=sys.stderr))
        # lazy: +59 modules in the command (where it runs)
        import asyncio
        report = asyncio.run(verify_run(store, run_id, on_cell=on_cell))
        if args.json:
            _print_json(report.to_dict())
        else:
            for note in report.notes:
                print(f"note: {note}")
            if report.first_divergence is not None:
                c = report.first_divergence
                print(f"first divergence: {c.cell_id} (turn {c.turn}, cell {c.index})\n{c.diff}")
            if not report.answer_same:
                print(f"answer differs:\n  recorded: {report.answer_recorded!r}\n  replayed: {report.answer_replayed!r}")
            print(f"{'VERIFIED' if report.matches else 'DIVERGED'}: {len(report.cells)} cell(s) re-run, "
                  f"{report.sub_calls_served} sub-call(s) answered from the record, {report.duration_ms} ms")
        return 0 if report.matches else 1
    return _with_run([args.id], body)


# -- fork -----------------------------------------------------------------------------------
def cmd_fork(args: argparse.Namespace) -> int:
    edited = None
    if args.edit_code:
        try:
            edited = Path(args.edit_code).read_text(encoding="utf-8")
        except OSError as exc:
            return _fail(f"cannot read {args.edit_code}: {exc.strerror or exc}")

    def body(store: Any, run_id: str) -> int:
        # lazy: +59 modules in the command (where it runs)
        import asyncio
        return asyncio.run(_fork(args, store, run_id, edited))
    return _with_run([args.id], body)


async def _fork(args: argparse.Namespace, store: Any, run_id: str, edited: str | None) -> int:
    # lazy: +70 modules in the command (where it runs)
    from app.run_service import RunRequest, RunService
    # lazy: +33 modules in the command (where it runs)
    from core.engine.prepare import fork_config
    # lazy: free here, core.engine.prepare (above) imports it
    from core.engine.rebuild import load_record
    try:
        # lazy: +30 modules in the command (where it runs)
        from app.settings import load_settings, priced_now
        config = fork_config(load_record(store, run_id), root_model=args.root, sub_model=args.sub,
                             max_cost_usd=args.max_cost, max_iterations=args.max_iterations)
        # billed at the prices in force now (the settings, then --price), never the parent's
        config = priced_now(config, load_settings(), parse_prices(args.price))
    except ValueError as exc:
        return _fail(f"cannot fork: {exc}")
    request = RunRequest.fork(run_id, args.turn, config=config, edited_code=edited)
    return await run_request(request, args, RunService(store=store),
                             show=not (args.quiet or args.json))


# -- compare, coverage, citations ----------------------------------------------------------
def cmd_compare(args: argparse.Namespace) -> int:
    def body(store: Any, a: str, b: str) -> int:
        # lazy: +89 modules in the command (where it runs)
        from core.trust.compare import compare_runs
        result = compare_runs(store, a, b)
        if args.json:
            _print_json(result.to_dict())
            return 0
        rows = [("status", "status"), ("root model", "root_model"), ("sub model", "sub_model"),
                ("cost USD", "cost_usd"), ("turns", "turns"), ("cells", "cells"), ("sub-calls", "sub_calls"),
                ("failed sub-calls", "sub_call_errors")]
        print(f"{'':<18}{result.a.run_id[:12]:<16}{result.b.run_id[:12]:<16}")
        for label, key in rows:
            va, vb = getattr(result.a, key), getattr(result.b, key)
            fmt = (lambda v: f"{v:.4f}") if key == "cost_usd" else str
            print(f"{label:<18}{fmt(va):<16}{fmt(vb):<16}")
        print(f"shared sub-call prompts: {result.shared_prompts}")
        for note in result.notes:
            print(f"note: {note}")
        if not result.same_question:
            print("the questions differ")
        print("answers: same" if result.same_answer else f"answers differ:\n{result.answer_diff}")
        d = result.first_difference
        if d is None:
            print("no difference in the turns")
        else:
            where = f"turn {d.turn}" + (f", cell {d.cell}" if d.cell else "")
            print(f"first difference: {where} ({d.what})\n{d.diff}")
        return 0
    return _with_run([args.a, args.b], body)


def cmd_coverage(args: argparse.Namespace) -> int:
    def body(store: Any, run_id: str) -> int:
        # lazy: +17 modules in the command (where it runs)
        from core.trust.coverage import coverage_of_run
        report = coverage_of_run(store, run_id)
        if args.json:
            _print_json(report.to_dict())
            return 0
        for d in report.documents:
            print(f"{d.percent:6.1f}%  {d.read_chars:>10,} of {d.chars:>10,}  {d.path}")
        print(f"{report.percent:6.1f}%  total ({report.read_chars:,} of {report.total_chars:,} characters)")
        for warning in report.warnings:
            print(f"warning: {warning}")
        return 0
    return _with_run([args.id], body)


def cmd_citations(args: argparse.Namespace) -> int:
    def body(store: Any, run_id: str) -> int:
        # lazy: +112 modules in the command (where it runs)
        from core.ingest.citations import resolve_citations
        run = store.get_run(run_id)
        cites = resolve_citations(run.get("answer") or "", store.documents(run_id))
        if args.json:
            _print_json([c.to_dict() for c in cites])
        else:
            if not cites:
                print("the answer cites no document")
            for c in cites:
                print(f"{'ok     ' if c.ok else 'BROKEN '} [{c.text}]" + (f"  {c.problem}" if c.problem else ""))
        return 0 if all(c.ok for c in cites) else 1
    return _with_run([args.id], body)


