"""What the CLI commands that run a question share: their common flags (one
definition each, `add_flags`), the end-of-run report, the --price flag, and the
approval gate of `ask` (--approve-over, --approve-over-usd, --yes)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from app.version import __version__
from core.run_names import fork_line
from core.repl.sandbox_report import NOTICE_PREFIX
import signal
import os

EXIT_CODES = {"finished": 0, "failed": 1, "capped": 3, "cancelled": 130}
EXIT_LIMITED = 4          # finished, but a cap or limit changed what the run did (core/limits.py)


# The flags several commands take (ask, rerun, fork, grid, eval): one definition each.
FLAGS: dict[str, dict[str, Any]] = {
    "--api-base": {"help": "base URL of an OpenAI-compatible server for both models"},
    "--max-depth": {"type": int, "metavar": "N", "help": "0 = code only, 1 = llm_query, 2-3 = nested RLMs"},
    "--max-iterations": {"type": int, "metavar": "N", "help": "root turns (default 20)"},
    "--max-cost": {"type": float, "metavar": "USD", "help": "hard dollar cap for the whole run"},
    "--max-sub-calls": {"type": int},
    "--max-wall-seconds": {"type": float},
    "--cell-timeout": {"type": float, "metavar": "S", "help": "seconds per code cell (default 120)"},
    "--root-max-tokens": {"type": int},
    "--sub-max-tokens": {"type": int},
    "--price": {"action": "append", "default": [], "metavar": "MODEL=IN,OUT",
                "help": "USD per million input,output tokens (0,0 marks a free local model)"},
    "--max-file-mb": {"type": float, "metavar": "N",
                      "help": "skip files on disk larger than N MB (default: the settings, else any size)"},
    "--json": {"action": "store_true", "help": "print one JSON object on stdout at the end"},
    "--quiet": {"action": "store_true", "help": "no live transcript on stderr"},
}


def add_flags(parser: argparse.ArgumentParser, *names: str, **helps: str) -> None:
    """Add the shared flags `names` (FLAGS); `helps` rewords one for this command
    (json="print the scorecard as JSON": the flag's name without dashes, - as _)."""
    for name in names:
        spec = dict(FLAGS[name])
        key = name.lstrip("-").replace("-", "_")
        if key in helps:
            spec["help"] = helps[key]
        parser.add_argument(name, **spec)


def parse_prices(items: list[str]) -> dict[str, Any]:
    # lazy: +13 modules in the command (where it runs)
    from core.config import Price
    prices = {}
    for item in items:
        model, sep, numbers = item.rpartition("=")
        parts = numbers.split(",")
        if not sep or not model or len(parts) != 2:
            raise SystemExit(f"--price needs MODEL=IN,OUT (USD per million tokens), got {item!r}")
        try:
            prices[model] = Price(float(parts[0]), float(parts[1]))
        except ValueError:
            raise SystemExit(f"--price needs numbers: {item!r}") from None
    return prices


def report_outcome(outcome: Any, *, as_json: bool, **extra: Any) -> int:
    """The end of every command that runs a question (ask, runs rerun, runs fork): the one
    JSON object on stdout, or the answer; the error on stderr; the exit code."""
    # lazy: +10 modules in the command (where it runs)
    from core.limits import is_limited, summary
    t = outcome.totals
    limited = t.get("limited") or {}
    if as_json:
        print(json.dumps({
            "run_id": outcome.run_id, **extra, "status": outcome.status, "answer": outcome.answer,
            "error": outcome.error, "cost_usd": t.get("cost_usd", 0.0),
            "input_tokens": t.get("input_tokens", 0), "output_tokens": t.get("output_tokens", 0),
            "iterations": t.get("iterations", 0), "sub_calls": t.get("sub_calls", 0),
            "syntax_errors": t.get("syntax_errors", 0), "overrun_usd": t.get("overrun_usd", 0.0),
            "estimated_usage_calls": t.get("estimated_usage_calls", 0),
            "limited": limited if is_limited(limited) else None, "limited_summary": summary(limited),
            "cut_replies": t.get("cut_replies", 0), "unsupported": t.get("unsupported"),
            "mode": t.get("mode"), "mode_reason": t.get("mode_reason"),
            "store_error": getattr(outcome, "store_error", None), "started_at": outcome.started_at,
            "finished_at": outcome.finished_at, "version": __version__}, ensure_ascii=False))
    elif outcome.answer is not None:
        print(outcome.answer)
    if outcome.error and outcome.status != "finished":
        print(f"rlm-studio: {outcome.status}: {outcome.error}", file=sys.stderr)
    if t.get("overrun_usd"):
        print(f"rlm-studio: warning: calls cost ${t['overrun_usd']:.6f} more than their reserved worst "
              "case (the provider billed above its price list); the cap could not cover that", file=sys.stderr)
    if t.get("estimated_usage_calls"):
        print(f"rlm-studio: note: {t['estimated_usage_calls']} call attempt(s) sent no token usage or were "
              f"cut or cancelled; ${t.get('estimated_usd', 0.0):.6f} of the cost is estimated", file=sys.stderr)
    if is_limited(limited):
        print(f"rlm-studio: warning: {summary(limited)}", file=sys.stderr)
    if t.get("unsupported"):
        # lazy: +9 modules in the command (where it runs)
        from core.support import describe
        print(f"rlm-studio: warning: the answer states {describe(t['unsupported'])}", file=sys.stderr)
    store_error = getattr(outcome, "store_error", None)
    if store_error:
        print(f"rlm-studio: error: the run's record is incomplete: {store_error}", file=sys.stderr)
        return 1
    if outcome.status == "finished" and is_limited(limited):
        return EXIT_LIMITED
    return EXIT_CODES.get(outcome.status, 1)


def sandbox_warning(event: Any) -> None:
    """--quiet still prints the one line saying the REPL sandbox lacks a layer."""
    if event.type == "Notice" and event.message.startswith(NOTICE_PREFIX):
        print(f"rlm-studio: warning: {event.message}", file=sys.stderr)


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
    # lazy: +59 modules in the command (where it runs)
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


def error_exit(message: str, code: int = 2) -> int:
    """Say what went wrong on stderr, the way every command does; returns the exit code."""
    print(f"rlm-studio: {message}", file=sys.stderr)
    return code


def fail(args: argparse.Namespace, message: str, code: int) -> int:
    error_exit(message, code)
    if args.json:
        print(json.dumps({"run_id": None, "status": "failed", "answer": None, "error": message,
                          "cost_usd": 0.0, "input_tokens": 0, "output_tokens": 0, "iterations": 0,
                          "sub_calls": 0, "syntax_errors": 0, "overrun_usd": 0.0, "estimated_usage_calls": 0,
                          "limited": None, "limited_summary": None, "store_error": None, "started_at": None, "finished_at": None,
                          "version": __version__}))
    return code


async def run_request(request: Any, args: argparse.Namespace, service: Any, *, show: bool | None = None,
                      **report: Any) -> int:
    """The CLI's side of the one run path: RunService.run with the transcript on stderr and
    Ctrl+C as cancel; then the report. `runs rerun` and `runs fork` end here too."""
    # lazy: +59 modules in the command (where it runs)
    import asyncio
    # lazy: +70 modules in the command (where it runs)
    from app.run_service import RunHandle
    # lazy: +10 modules in the command (where it runs)
    from app.transcript_printer import TranscriptPrinter
    # lazy: +109 modules in the command (where it runs)
    from core.engine.run import ConfigError
    show = (not args.quiet) if show is None else show
    sinks = [TranscriptPrinter(sys.stderr)] if show else [sandbox_warning]
    handle = RunHandle(on_prepared=_prepared_printer(show))
    loop = asyncio.get_running_loop()
    interrupts = 0

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            print("\ncancelling (Ctrl+C again to quit at once) ...", file=sys.stderr)
            handle.cancel()
        else:
            raise SystemExit(130)

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (NotImplementedError, RuntimeError):   # Windows: default KeyboardInterrupt
        pass
    try:
        outcome = await service.run(request, sinks, handle)
    except (ConfigError, ValueError) as exc:
        return fail(args, f"cannot start: {exc}" if request.kind != "ask" else str(exc), 2)
    except asyncio.CancelledError:
        if not handle.cancelled or handle.run is not None:
            raise
        # Ctrl+C while a fork or rebuild was being prepared: no run was started or stored.
        return fail(args, f"cancelled while the {request.kind} was being prepared; no run was started", 130)
    finally:
        try:
            loop.remove_signal_handler(signal.SIGINT)
            # lazy: already imported by app/main.py
            from app.sigint import install as count_every_sigint
            count_every_sigint()                 # not Python's KeyboardInterrupt, which can be lost
            if interrupts:
                # Ctrl+C was pressed: one more while the process winds down (its helper threads
                # joined at exit) quits at once with 130. The run's record is already written.
                signal.signal(signal.SIGINT, _quit_now)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
        # lazy: +83 modules in the command (where it runs)
        from core.llm.openai_http import close_clients
        await close_clients()                 # this loop's connections, before asyncio.run ends
    if outcome.status == "failed" and "key" in (outcome.error or "").lower() and request.config is not None:
        # lazy: +30 modules in the command (where it runs)
        from app.settings import load_settings
        # lazy: +10 modules in the command (where it runs)
        from core.routing import unkeyed_url_hint
        hint = unkeyed_url_hint(request.config, load_settings().endpoints)
        if hint:
            print(f"rlm-studio: note: {hint}", file=sys.stderr)
    prepared = handle.prepared
    if prepared is not None and request.kind == "fork":
        run_forked = prepared.forked_from or {}
        report.update(forked_from={**run_forked, "line": fork_line(run_forked)} if run_forked else None,
                      fork_turn=prepared.turn, replayed_cells=prepared.replayed_cells,
                      unmatched=list(prepared.unmatched), edited_output=handle.edited_output)
    if request.parent_run_id:
        report.setdefault("parent_run_id", request.parent_run_id)
    return report_outcome(outcome, as_json=args.json, **report)


def _quit_now(_signum: int, _frame: Any) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(130)


def _prepared_printer(verbose: bool):
    def show(p: Any) -> None:
        if p.kind == "fork" and verbose:
            print(f"rebuilt the REPL of {p.parent_run_id[:12]} up to turn {p.turn} "
                  f"({p.replayed_cells} cell(s) re-run)", file=sys.stderr)
        for where in p.unmatched:
            print(f"rlm-studio: warning: the rebuild left the record at {where}", file=sys.stderr)
    return show
