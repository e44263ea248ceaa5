"""`rlm-studio ask QUESTION PATH... --root MODEL --sub MODEL [caps] [--json]`."""

from __future__ import annotations

import argparse
import functools
import sys
import time
from typing import Any

from core.control_chars import carriage_return

from app.cli_common import (EXIT_CODES, add_approval_args, add_flags, fail as _fail, parse_prices,  # noqa: F401
                            report_outcome, run_request, with_approval)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="ask a question over files and folders",
                       description="Ask QUESTION over the documents in PATH... and print the answer.")
    p.add_argument("question")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    p.add_argument("--root", help="root model, e.g. openai/gpt-4o (default: settings)")
    p.add_argument("--sub", help="sub model for llm_query (default: settings, else the root model)")
    add_flags(p, "--api-base")
    p.add_argument("--sub-api-base", help="base URL for the sub model only")
    p.add_argument("--api-key-from", metavar="NAME",
                   help="send the key of provider or endpoint NAME to --api-base/--sub-api-base "
                        "(a URL that no configured endpoint or provider owns gets no key otherwise)")
    p.add_argument("--mode", choices=("auto", "rlm", "direct"),
                   help="auto (default): one plain call when the documents take at most a quarter of the "
                        "root model's context window, else the RLM; rlm or direct: always that")
    p.add_argument("--context-window", type=int, metavar="TOKENS",
                   help="the root model's context window (input tokens), when litellm does not know it "
                        "(local models): lets Auto choose")
    add_flags(p, "--max-depth", "--max-iterations", "--max-cost", "--max-sub-calls", "--max-wall-seconds",
              "--cell-timeout")
    p.add_argument("--concurrency", type=int, help="sub-calls in flight at once (default 32)")
    p.add_argument("--max-output-chars", type=int, help="cell output shown to the root (default 20000)")
    add_flags(p, "--root-max-tokens", "--sub-max-tokens")
    p.add_argument("--memory-limit-mb", type=int, help="memory limit of the REPL worker")
    p.add_argument("--require-sandbox", action="store_true",
                   help="refuse to run model code unless every layer of the REPL sandbox holds "
                        "(also a setting: require_full_sandbox)")
    add_flags(p, "--price")
    p.add_argument("--ocr", action="store_true",
                   help="read scanned PDF pages and images with tesseract (slow)")
    add_flags(p, "--max-file-mb", "--json", "--quiet")
    add_approval_args(p)                        # --approve-over N, --approve-over-usd USD, --yes
    p.set_defaults(handler=run_ask)


def config_from_args(args: argparse.Namespace) -> Any:
    # lazy: +30 modules in the command (where it runs)
    from app.settings import build_run_config, load_settings
    overrides = {
        "max_depth": args.max_depth, "max_iterations": args.max_iterations,
        "max_cost_usd": args.max_cost, "max_sub_calls": args.max_sub_calls,
        "max_wall_seconds": args.max_wall_seconds, "cell_timeout_s": args.cell_timeout,
        "concurrency": args.concurrency, "max_output_chars": args.max_output_chars,
        "root_max_tokens": args.root_max_tokens, "sub_max_tokens": args.sub_max_tokens,
        "memory_limit_mb": args.memory_limit_mb, "sub_api_base": args.sub_api_base,
        "require_full_sandbox": True if getattr(args, "require_sandbox", False) else None,
        "api_key_from": args.api_key_from, "mode": getattr(args, "mode", None),
    }
    overrides = {k: v for k, v in overrides.items() if v is not None}
    prices = parse_prices(args.price)
    if prices:
        overrides["prices"] = prices
    config = build_run_config(load_settings(), root=args.root, sub=args.sub, api_base=args.api_base,
                              overrides=overrides)
    if getattr(args, "context_window", None):
        if args.context_window < 1:
            raise SystemExit("--context-window needs a number of tokens above 0")
        config = config.replace(context_windows={**config.context_windows, config.root_model: args.context_window})
    return with_approval(args, config)


SPARE_MIN_BYTES = 4_000_000     # reading this much takes longer than the worker's start


def idle_cpu(load1: float | None = None, cpus: int | None = None) -> bool:
    """Whether a whole CPU is free on average over the last minute (1-minute load at most
    the CPUs less one): then the REPL worker's start runs beside this process's own start
    instead of taking CPU from it."""
    import os  # lazy: free (os is always loaded)
    if load1 is None:
        try:
            load1 = os.getloadavg()[0]
        except OSError:          # not known here: as if busy
            return False
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cpus >= 2 and load1 <= cpus - 1


def run_ask(args: argparse.Namespace) -> int:
    # lazy: +59 modules in the command (where it runs)
    import asyncio
    # lazy: +109 modules in the command (where it runs)
    from core.engine.run import ConfigError
    try:
        config = config_from_args(args)
    except (ValueError, ConfigError) as exc:
        return _fail(args, f"cannot start: {exc}", 2)
    # litellm's import is seconds of CPU. A run that calls it starts it now, in a thread, so
    # that reading the documents and starting the REPL worker happen meanwhile. A run whose
    # models are all on the user's own OpenAI-compatible servers never imports it
    # (core/llm/openai_http.py; tests/integration/test_local_run_without_litellm.py).
    # lazy: +94 modules in the command (where it runs)
    from core.llm.client import needs_litellm
    if needs_litellm(config):
        # lazy: +63 modules in the command (where it runs)
        from core.llm.litellm_import import start_background_import
        start_background_import()
    return asyncio.run(_ask(args, config))


async def _ask(args: argparse.Namespace, config: Any) -> int:
    # lazy: +14 modules in the command (where it runs)
    from core.engine_process import prepare_engine_process

    prepare_engine_process()                    # before ingestion or the REPL starts any helper process
    # lazy: the ReplClient's modules, loaded by the run anyway
    from core.repl import spare
    try:
        return await _read_and_run(args, config)
    finally:
        await spare.discard()                   # a spare worker no run took (core/repl/spare.py)


def _spare_for_big_contexts(config: Any, show: Any) -> Any:
    """A progress callback: once the files counted reach SPARE_MIN_BYTES the REPL worker starts,
    while the rest is read (core/repl/spare.py). On a busy machine a small context's worker
    starts beside the root's first call, as in every run: started here it only took CPU from
    the way to the first request (10 kB at load 12: 2.56 s against 2.15 s to the first
    request). With a CPU free it starts first thing (_read_and_run): a model that answers at
    once then finds the worker started instead of waiting for it in the first cell."""
    import asyncio  # lazy: imported by run_ask already
    from core.repl import spare  # lazy: imported by _ask already
    loop = asyncio.get_running_loop()
    started = []

    def on_progress(p: Any) -> None:
        if show is not None:
            show(p)
        if not started and p.bytes_total >= SPARE_MIN_BYTES:
            started.append(True)
            loop.call_soon_threadsafe(functools.partial(
                spare.warm_up, memory_limit_mb=config.memory_limit_mb,
                require_full_sandbox=config.require_full_sandbox))
    return on_progress


async def _read_and_run(args: argparse.Namespace, config: Any) -> int:
    if idle_cpu():
        import asyncio  # lazy: imported by run_ask already
        from core.repl import spare  # lazy: imported by _ask already
        spare.warm_up(memory_limit_mb=config.memory_limit_mb, require_full_sandbox=config.require_full_sandbox)
        await asyncio.sleep(0)                  # its first step spawns the worker
    # lazy: +191 modules in the command (where it runs)
    from core.store import opened_cache
    # One store for the reading (what earlier runs read of the same files) and for the run:
    # opened once before the first request, not twice.
    with opened_cache() as cache:
        return await _read_then_run(args, config, cache)


async def _read_then_run(args: argparse.Namespace, config: Any, cache: Any) -> int:
    # lazy: +70 modules in the command (where it runs)
    from app.run_service import RunRequest, RunService
    # lazy: +111 modules in the command (where it runs)
    from core.ingest import ingest
    progress = _progress_printer() if not (args.quiet or args.json) and sys.stderr.isatty() else None
    show = progress
    progress = _spare_for_big_contexts(config, show)
    try:
        # lazy: +30 modules in the command (where it runs)
        from app.settings import ingest_options, load_settings
        options = ingest_options(load_settings(), ocr=True if getattr(args, "ocr", False) else None,
                                 max_file_mb=getattr(args, "max_file_mb", None))
        found = await ingest(args.paths, options, on_progress=progress, cache=cache)
        from core.ingest.workers import stop_fork_server  # lazy: imported above already (ingest)
        stop_fork_server()                     # no further reading in this command
    except FileNotFoundError as exc:
        return _fail(args, str(exc), 2)
    if show:
        sys.stderr.write("\n")
    if found.unchanged and not args.quiet:
        print(f"{found.unchanged:,} of {len(found.documents):,} files unchanged since an earlier read: "
              "not read again", file=sys.stderr)
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
    from core.repl import spare  # lazy: imported above already (_ask)
    spare.preload(found.documents)           # a spare's load goes on while the run is composed
    try:
        request = RunRequest.ask(args.question, found.documents, config, skipped=found.skipped)
    except ValueError as exc:
        return _fail(args, str(exc), 2)
    # the store is lent to the run (closed here, once the run is recorded); a store that could
    # not be opened for the cache is opened by the run, which says why it cannot
    return await run_request(request, args, RunService(store=cache.store if cache is not None else None))


def _progress_printer():
    last = [0.0]

    def show(p: Any) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1 and p.files_done < p.files_total:
            return
        last[0] = now
        carriage_return(sys.stderr)
        sys.stderr.write(f"reading {p.files_done:,}/{p.files_total:,} files "
                         f"({p.bytes_done / 1e6:,.1f} of {p.bytes_total / 1e6:,.1f} MB)   ")
        sys.stderr.flush()
    return show
