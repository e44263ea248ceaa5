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
    p.add_argument("--max-cost", type=float, metavar="USD")
    p.add_argument("--max-iterations", type=int, metavar="N")
    p.add_argument("--price", action="append", default=[], metavar="MODEL=IN,OUT",
                   help="USD per million input,output tokens (0,0 marks a free local model)")
    p.add_argument("--edit-code", metavar="FILE", help="run this code as turn N instead of asking the root")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout at the end")
    p.add_argument("--quiet", action="store_true", help="no live transcript on stderr")
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


def _fail(message: str, code: int = 2) -> int:
    print(f"rlm-studio: {message}", file=sys.stderr)
    return code


def _with_run(prefixes: list[str], body: Callable[..., int]) -> int:
    from core.store import AmbiguousRunId, MissingTextsError, RunNotFound, RunStore
    from core.trust.rebuild import RebuildError
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
        from core.trust.verify import verify_run
        on_cell = None if args.json else (lambda c: print(
            f"{c.cell_id:<10} {'same' if c.same else 'DIFFERS'}  ({c.served} sub-call(s) from the record)",
            file=sys.stderr))
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
class LiveSubCaller:
    """For an edited turn's new prompts: plain calls to the fork's sub model, held to the
    fork's dollar cap exactly like the engine's sub-calls (worst case reserved first, a call
    that does not fit refused). What they spend is taken off the cap of the run that follows."""

    def __init__(self, config: Any, key_for: Callable[[str], str | None]) -> None:
        from core.engine.budget import Budget
        from core.llm.client import ModelClient
        from core.llm.pricing import PriceBook
        self.config = config
        self.prices = PriceBook(config.prices)
        self.budget = Budget(max_cost_usd=config.max_cost_usd, max_sub_calls=config.max_sub_calls)
        self.client = ModelClient(key_for=key_for, api_base_for=config.api_base_for,
                                  max_retries=config.max_retries, timeout_s=config.request_timeout_s)

    async def __call__(self, prompt: str, model: str | None) -> dict:
        from core.engine.budget import BudgetExceeded
        from core.llm.errors import LLMError
        from core.routing import ModelNotAllowed, sub_call_model
        try:
            model = sub_call_model(model, self.config)     # the fork's allow-list, as in a run
        except ModelNotAllowed as exc:
            return {"error": {"type": "ModelNotAllowed", "message": str(exc)}}
        messages = [{"role": "user", "content": prompt}]
        if self.budget.max_cost_usd is not None and self.prices.price(model) is None:
            return {"error": {"type": "BudgetExceeded",
                              "message": f"no price is known for {model} and a dollar cap is set"}}
        from core.engine.costs import CallMeter
        try:
            self.budget.count_sub_call()
        except BudgetExceeded as exc:
            return {"error": {"type": "BudgetExceeded", "message": str(exc)}}
        meter = CallMeter(self, model, messages, self.config.sub_max_tokens)   # reserves per attempt
        try:
            reply = await self.client.complete(model, messages, max_tokens=self.config.sub_max_tokens,
                                               meter=meter)
        except BudgetExceeded as exc:
            return {"error": {"type": "BudgetExceeded", "message": str(exc)}}
        except LLMError as exc:
            return {"error": {"type": "SubCallError", "message": str(exc)}}
        return {"ok": reply.text}

    def remaining_config(self, config: Any) -> Any:
        """`config` with its caps reduced by what these calls used."""
        if self.budget.sub_calls == 0:
            return config
        changes: dict[str, Any] = {}
        if config.max_cost_usd is not None:
            changes["max_cost_usd"] = max(config.max_cost_usd - self.budget.spent_usd, 0.0)
        if config.max_sub_calls is not None:
            changes["max_sub_calls"] = max(config.max_sub_calls - self.budget.sub_calls, 0)
        return config.replace(**changes)


def cmd_fork(args: argparse.Namespace) -> int:
    edited = None
    if args.edit_code:
        try:
            edited = Path(args.edit_code).read_text(encoding="utf-8")
        except OSError as exc:
            return _fail(f"cannot read {args.edit_code}: {exc.strerror or exc}")

    def body(store: Any, run_id: str) -> int:
        import asyncio
        return asyncio.run(_fork(args, store, run_id, edited))
    return _with_run([args.id], body)


async def _fork(args: argparse.Namespace, store: Any, run_id: str, edited: str | None) -> int:
    from app.cli_ask import report_outcome
    from app.runner import QuestionRun, default_key_for
    from app.transcript_printer import TranscriptPrinter
    from core.engine.run import ConfigError
    from core.repl.sandbox import harden_engine_process
    from core.trust.fork import fork_config, prepare_fork
    from core.trust.record import load_record

    from app.cli_ask import parse_prices
    harden_engine_process()
    try:
        record = load_record(store, run_id)
        config = fork_config(record, root_model=args.root, sub_model=args.sub, max_cost_usd=args.max_cost,
                             max_iterations=args.max_iterations)
        if args.price:
            config = config.replace(prices={**config.prices, **parse_prices(args.price)})
    except ValueError as exc:
        return _fail(f"cannot fork: {exc}")
    key_for = default_key_for(config)
    live = LiveSubCaller(config, key_for) if edited else None
    plan = await prepare_fork(store, run_id, args.turn, config=config, edited_code=edited,
                              live_sub_call=live)
    run_config = live.remaining_config(plan.config) if live else plan.config
    if not args.quiet and not args.json:
        print(f"rebuilt the REPL of {run_id[:12]} up to turn {args.turn} ({plan.replayed_cells} cell(s) re-run)",
              file=sys.stderr)
    for where in plan.unmatched:
        print(f"rlm-studio: warning: the rebuild left the record at {where}", file=sys.stderr)
    sinks = [] if (args.quiet or args.json) else [TranscriptPrinter(sys.stderr)]
    try:
        outcome = await QuestionRun(plan.question, documents=plan.documents, skipped=plan.skipped,
                                    config=run_config, sinks=sinks, store=store, key_for=key_for,
                                    parent_run_id=run_id, session=plan.session).execute()
    except (ConfigError, ValueError) as exc:
        return _fail(f"cannot start: {exc}")
    finally:
        await plan.close()          # the run closed it already unless it never started (idempotent)
    return report_outcome(outcome, as_json=args.json, parent_run_id=run_id, fork_turn=args.turn,
                          replayed_cells=plan.replayed_cells, unmatched=plan.unmatched,
                          edited_output=plan.edited_output)


# -- compare, coverage, citations ----------------------------------------------------------
def cmd_compare(args: argparse.Namespace) -> int:
    def body(store: Any, a: str, b: str) -> int:
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
        from core.trust.citations import resolve_citations
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


# -- the approval gate for `ask` ------------------------------------------------------------
def add_approval_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--approve-over", type=int, metavar="N",
                        help="ask on the terminal (y/N) before a batch of more than N sub-calls")
    parser.add_argument("--approve-over-usd", type=float, metavar="USD",
                        help="ask before a batch whose worst case costs more than USD")
    parser.add_argument("--yes", action="store_true", help="approve every batch without asking")


def with_approval(args: argparse.Namespace, config: Any) -> Any:
    """The config with the approval gate the flags ask for (unchanged without them)."""
    calls, usd = getattr(args, "approve_over", None), getattr(args, "approve_over_usd", None)
    if calls is None and usd is None:
        return config
    return config.replace(approve_batch_calls=calls, approve_batch_usd=usd,
                          approver=_always_yes if args.yes else terminal_approver())


async def _always_yes(info: dict) -> bool:
    return True


def terminal_approver(stdin: Any = None, stderr: Any = None) -> Callable[[dict], Any]:
    """Asks y/N on the terminal; no terminal (or EOF) means no."""
    import asyncio
    lock = asyncio.Lock()

    async def approve(info: dict) -> bool:
        inp, err = stdin or sys.stdin, stderr or sys.stderr
        async with lock:                   # one question at a time
            err.write(f"\nApprove a batch of {info['calls']} {info['kind']} sub-call(s) to {info['model']} "
                      f"({info['input_chars']:,} characters, worst case ${info['worst_case_usd']:.4f})? [y/N] ")
            err.flush()
            answer = await asyncio.to_thread(inp.readline)
        return answer.strip().lower() in ("y", "yes")
    return approve
