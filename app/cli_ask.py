"""`rlm-studio ask QUESTION PATH... --root MODEL --sub MODEL [caps] [--json]`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from app.version import __version__

EXIT_CODES = {"finished": 0, "failed": 1, "capped": 3, "cancelled": 130}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="ask a question over files and folders",
                       description="Ask QUESTION over the documents in PATH... and print the answer.")
    p.add_argument("question")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    p.add_argument("--root", help="root model, e.g. openai/gpt-4o (default: settings)")
    p.add_argument("--sub", help="sub model for llm_query (default: settings, else the root model)")
    p.add_argument("--api-base", help="base URL of an OpenAI-compatible server for both models")
    p.add_argument("--sub-api-base", help="base URL for the sub model only")
    p.add_argument("--api-key-from", metavar="NAME",
                   help="send the key of provider or endpoint NAME to --api-base/--sub-api-base "
                        "(a URL that no configured endpoint or provider owns gets no key otherwise)")
    p.add_argument("--max-depth", type=int, help="0 = code only, 1 = llm_query, 2-3 = nested RLMs")
    p.add_argument("--max-iterations", type=int, help="root turns (default 20)")
    p.add_argument("--max-cost", type=float, metavar="USD", help="hard dollar cap for the whole run")
    p.add_argument("--max-sub-calls", type=int)
    p.add_argument("--max-wall-seconds", type=float)
    p.add_argument("--cell-timeout", type=float, metavar="S", help="seconds per code cell (default 120)")
    p.add_argument("--concurrency", type=int, help="sub-calls in flight at once (default 32)")
    p.add_argument("--max-output-chars", type=int, help="cell output shown to the root (default 20000)")
    p.add_argument("--root-max-tokens", type=int)
    p.add_argument("--sub-max-tokens", type=int)
    p.add_argument("--memory-limit-mb", type=int, help="memory limit of the REPL worker")
    p.add_argument("--require-sandbox", action="store_true",
                   help="refuse to run model code unless every layer of the REPL sandbox holds "
                        "(also a setting: require_full_sandbox)")
    p.add_argument("--price", action="append", default=[], metavar="MODEL=IN,OUT",
                   help="USD per million input,output tokens (0,0 marks a free local model)")
    p.add_argument("--ocr", action="store_true",
                   help="read scanned PDF pages and images with tesseract (slow)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout at the end")
    p.add_argument("--quiet", action="store_true", help="no live transcript on stderr")
    from app.cli_trust import add_approval_args
    add_approval_args(p)                        # --approve-over N, --approve-over-usd USD, --yes
    p.set_defaults(handler=run_ask)


def parse_prices(items: list[str]) -> dict[str, Any]:
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


def config_from_args(args: argparse.Namespace) -> Any:
    from app.settings import build_run_config, load_settings
    overrides = {
        "max_depth": args.max_depth, "max_iterations": args.max_iterations,
        "max_cost_usd": args.max_cost, "max_sub_calls": args.max_sub_calls,
        "max_wall_seconds": args.max_wall_seconds, "cell_timeout_s": args.cell_timeout,
        "concurrency": args.concurrency, "max_output_chars": args.max_output_chars,
        "root_max_tokens": args.root_max_tokens, "sub_max_tokens": args.sub_max_tokens,
        "memory_limit_mb": args.memory_limit_mb, "sub_api_base": args.sub_api_base,
        "require_full_sandbox": True if getattr(args, "require_sandbox", False) else None,
        "api_key_from": args.api_key_from,
    }
    overrides = {k: v for k, v in overrides.items() if v is not None}
    prices = parse_prices(args.price)
    if prices:
        overrides["prices"] = prices
    from app.cli_trust import with_approval
    return with_approval(args, build_run_config(load_settings(), root=args.root, sub=args.sub,
                                                api_base=args.api_base, overrides=overrides))


def run_ask(args: argparse.Namespace) -> int:
    # litellm's import is seconds of CPU: start it now, in a thread, so that reading the
    # documents and starting the REPL worker happen meanwhile instead of before it.
    from core.llm.litellm_import import start_background_import
    start_background_import()
    import asyncio
    from core.engine.run import ConfigError
    try:
        config = config_from_args(args)
    except (ValueError, ConfigError) as exc:
        return _fail(args, f"cannot start: {exc}", 2)
    return asyncio.run(_ask(args, config))


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    print(f"rlm-studio: {message}", file=sys.stderr)
    if args.json:
        print(json.dumps({"run_id": None, "status": "failed", "answer": None, "error": message,
                          "cost_usd": 0.0, "input_tokens": 0, "output_tokens": 0, "iterations": 0,
                          "sub_calls": 0, "syntax_errors": 0, "overrun_usd": 0.0, "estimated_usage_calls": 0,
                          "store_error": None, "started_at": None, "finished_at": None,
                          "version": __version__}))
    return code


async def _ask(args: argparse.Namespace, config: Any) -> int:
    import asyncio
    import signal
    from app.runner import QuestionRun
    from app.transcript_printer import TranscriptPrinter
    from core.engine.run import ConfigError
    from core.ingest import ingest
    from core.repl.sandbox import harden_engine_process

    harden_engine_process()
    progress = _progress_printer() if not args.quiet and sys.stderr.isatty() else None
    try:
        from app.settings import ingest_options, load_settings
        options = ingest_options(load_settings(), ocr=True if getattr(args, "ocr", False) else None)
        found = await ingest(args.paths, options, on_progress=progress)
    except FileNotFoundError as exc:
        return _fail(args, str(exc), 2)
    if progress:
        sys.stderr.write("\n")
    duplicates = 0
    for skip in found.skipped:
        if skip.reason == "duplicate":
            duplicates += 1                  # read once; listed by `rlm-studio ingest`
        elif not args.quiet:
            print(f"skipped {skip.path}: {skip.reason}{': ' + skip.detail if skip.detail else ''}",
                  file=sys.stderr)
    if duplicates and not args.quiet:
        print(f"{duplicates} duplicate file{'s' if duplicates != 1 else ''} read once "
              "(same content as another document)", file=sys.stderr)
    if not found.documents:
        return _fail(args, "no readable documents in " + ", ".join(args.paths), 2)
    sinks = [_sandbox_warning] if args.quiet else [TranscriptPrinter(sys.stderr)]
    try:
        run = QuestionRun(args.question, documents=found.documents, skipped=found.skipped,
                          config=config, sinks=sinks)
    except ValueError as exc:
        return _fail(args, str(exc), 2)
    loop = asyncio.get_running_loop()
    interrupts = 0

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            print("\ncancelling (Ctrl+C again to quit at once) ...", file=sys.stderr)
            run.cancel()
        else:
            raise SystemExit(130)

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (NotImplementedError, RuntimeError):   # Windows: default KeyboardInterrupt
        pass
    try:
        outcome = await run.execute()
    except ConfigError as exc:
        return _fail(args, str(exc), 2)
    finally:
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (NotImplementedError, RuntimeError):
            pass
    if outcome.status == "failed" and "key" in (outcome.error or "").lower():
        from app.settings import load_settings
        from core.routing import unkeyed_url_hint
        hint = unkeyed_url_hint(config, load_settings().endpoints)
        if hint:
            print(f"rlm-studio: note: {hint}", file=sys.stderr)
    return report_outcome(outcome, as_json=args.json)


def report_outcome(outcome: Any, *, as_json: bool, **extra: Any) -> int:
    """The end of every command that runs a question (ask, runs rerun, runs fork): the one
    JSON object on stdout, or the answer; the error on stderr; the exit code."""
    t = outcome.totals
    if as_json:
        print(json.dumps({
            "run_id": outcome.run_id, **extra, "status": outcome.status, "answer": outcome.answer,
            "error": outcome.error, "cost_usd": t.get("cost_usd", 0.0),
            "input_tokens": t.get("input_tokens", 0), "output_tokens": t.get("output_tokens", 0),
            "iterations": t.get("iterations", 0), "sub_calls": t.get("sub_calls", 0),
            "syntax_errors": t.get("syntax_errors", 0), "overrun_usd": t.get("overrun_usd", 0.0),
            "estimated_usage_calls": t.get("estimated_usage_calls", 0),
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
    store_error = getattr(outcome, "store_error", None)
    if store_error:
        print(f"rlm-studio: error: the run's record is incomplete: {store_error}", file=sys.stderr)
        return 1
    return EXIT_CODES.get(outcome.status, 1)


def _sandbox_warning(event: Any) -> None:
    """--quiet still prints the one line saying the REPL sandbox lacks a layer."""
    from core.repl.sandbox_report import NOTICE_PREFIX
    if event.type == "Notice" and event.message.startswith(NOTICE_PREFIX):
        print(f"rlm-studio: warning: {event.message}", file=sys.stderr)


def _progress_printer():
    last = [0.0]

    def show(p: Any) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1 and p.files_done < p.files_total:
            return
        last[0] = now
        sys.stderr.write(f"\rreading {p.files_done:,}/{p.files_total:,} files "
                         f"({p.bytes_done / 1e6:,.1f} MB)   ")
        sys.stderr.flush()
    return show
