"""`rlm-studio eval SET.jsonl PATH... --pair ROOT:SUB [...]` and `rlm-studio scorecards [ID]`.

The question set's format, the checkers and the scorecard's columns: core/evaluation
and docs/fitness.md. Every RLM run is an ordinary stored run, linked to the evaluation.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.cli_common import add_flags, error_exit as _fail
from app.cli_ask import parse_prices
from app.key_routing import route_key_for


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="score model pairs on a question set",
                       description="Run every question of SET.jsonl over PATH... with each --pair, "
                                   "store every run, print and save a scorecard. Running the same set "
                                   "over the same documents again adds repeats.")
    p.add_argument("set", metavar="SET.jsonl", help="one JSON object per line: question, expected, checker")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    p.add_argument("--pair", action="append", default=[], metavar="ROOT:SUB", required=True,
                   help="root and sub model, e.g. openai/gpt-4o:openai/gpt-4o-mini (repeatable)")
    p.add_argument("--repeats", type=int, default=1, help="answers per question and pair (default 1)")
    p.add_argument("--parallel", type=int, default=2, help="questions running at once (default 2)")
    p.add_argument("--mode", action="append", choices=("rlm", "auto", "direct"), metavar="MODE",
                   help="the runs' mode: rlm (default), auto or direct (one plain call as a run); "
                        "repeat it to compare modes in one scorecard")
    p.add_argument("--direct", action="store_true",
                   help="also ask each root model directly, all documents in one prompt, when they fit")
    p.add_argument("--direct-max-tokens", type=int, default=1024)
    p.add_argument("--window", action="append", default=[], metavar="MODEL=TOKENS",
                   help="context window of a model litellm does not know (for direct and auto)")
    add_flags(p, "--max-file-mb")
    p.add_argument("--judge", metavar="MODEL", help="model that grades questions with checker 'judge'")
    add_flags(p, "--api-base", "--max-depth", "--max-iterations", "--max-cost",
              api_base="base URL of an OpenAI-compatible server for every model", max_cost="dollar cap per run")
    p.add_argument("--max-cost-total", type=float, metavar="USD",
                   help="one dollar cap for the whole evaluation: every call of every run reserves from it")
    add_flags(p, "--max-sub-calls", "--max-wall-seconds", "--cell-timeout", "--root-max-tokens",
              "--sub-max-tokens", "--price", "--json", json="print the scorecard as JSON")
    p.add_argument("--csv", metavar="FILE", help="also write the scorecard as CSV")
    p.add_argument("--md", metavar="FILE", help="also write the scorecard as Markdown")
    add_flags(p, "--quiet", quiet="no progress lines on stderr")
    p.set_defaults(handler=run_eval)

    s = sub.add_parser("scorecards", help="list evaluations, or show one's scorecard",
                       description="Without ID: the evaluations. With ID (or a prefix): its scorecard.")
    s.add_argument("id", nargs="?")
    s.add_argument("--json", action="store_true")
    s.add_argument("--csv", metavar="FILE")
    s.add_argument("--md", metavar="FILE")
    s.set_defaults(handler=run_scorecards)


def _windows(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        model, sep, number = item.rpartition("=")
        if not sep or not model or not number.isdigit():
            raise ValueError(f"--window needs MODEL=TOKENS, got {item!r}")
        out[model] = int(number)
    return out


def run_eval(args: argparse.Namespace) -> int:
    # lazy: +59 modules in the command (where it runs)
    import asyncio
    # lazy: +14 modules in the command (where it runs)
    from core.evaluation import QuestionSetError, load_question_set
    # lazy: +208 modules in the command (where it runs)
    from core.evaluation.runner import PairError, parse_pair
    try:
        qset = load_question_set(Path(args.set))
        pairs = [parse_pair(p) for p in args.pair]
        windows = _windows(args.window)
        if args.repeats < 1 or args.parallel < 1:
            raise ValueError("--repeats and --parallel must be at least 1")
        if qset.needs_judge and not args.judge:
            raise ValueError(f"{Path(args.set).name} has questions with checker 'judge': "
                             "name the model that grades them with --judge MODEL")
    except (QuestionSetError, PairError, ValueError) as exc:
        return _fail(str(exc))
    modes = tuple(dict.fromkeys(args.mode or ["rlm"]))
    return asyncio.run(_eval(args, qset, pairs, windows, modes))


def _config_for(args: argparse.Namespace, windows: dict[str, int] | None = None):
    # lazy: +30 modules in the command (where it runs)
    from app.settings import build_run_config, load_settings
    settings = load_settings()
    overrides = {"max_depth": args.max_depth, "max_iterations": args.max_iterations,
                 "max_cost_usd": args.max_cost if args.max_cost is not None else getattr(args, "max_cost_total", None),
                 "max_sub_calls": args.max_sub_calls,
                 "max_wall_seconds": args.max_wall_seconds, "cell_timeout_s": args.cell_timeout,
                 "root_max_tokens": args.root_max_tokens, "sub_max_tokens": args.sub_max_tokens}
    overrides = {k: v for k, v in overrides.items() if v is not None}
    prices = parse_prices(args.price)
    if prices:
        overrides["prices"] = prices
    if windows:
        overrides["context_windows"] = dict(windows)       # Auto reads the root's window from them

    def config_for(pair: Any) -> Any:
        return build_run_config(settings, root=pair.root, sub=pair.sub, api_base=args.api_base,
                                overrides=dict(overrides))
    return config_for


async def _eval(args: argparse.Namespace, qset: Any, pairs: list, windows: dict[str, int],
                modes: tuple[str, ...] = ("rlm",)) -> int:
    """Every answer is a RunRequest on RunService (app/eval_runs.py), like every other run,
    over documents read with the settings' ingest options, as `ask` reads them."""
    # lazy: +70 modules in the command (where it runs)
    from app.eval_runs import EvaluationRuns
    # lazy: +69 modules in the command (where it runs)
    from app.run_service import RunService
    # lazy: +30 modules in the command (where it runs)
    from app.settings import ingest_options, load_settings
    # lazy: +97 modules in the command (where it runs)
    from core.engine.prepare import ConfigError, check_config
    # lazy: +208 modules in the command (where it runs)
    from core.evaluation.runner import Evaluation
    # lazy: +111 modules in the command (where it runs)
    from core.ingest import ingest
    # lazy: +14 modules in the command (where it runs)
    from core.engine_process import prepare_engine_process
    # lazy: +191 modules in the command (where it runs)
    from core.store import RunStore
    # lazy: +191 modules in the command (where it runs)
    from core.store.db import connect
    # lazy: +191 modules in the command (where it runs)
    from core.store.runstore import opened_cache

    prepare_engine_process()
    try:
        config_for = _config_for(args, windows)
        for pair in pairs:                     # unknown prices with a cap etc.: refuse before any run
            check_config(config_for(pair))
    except (ValueError, ConfigError) as exc:
        return _fail(f"cannot start: {exc}")
    try:
        with opened_cache() as cache:            # what earlier runs read of the same files
            found = await ingest(args.paths, ingest_options(load_settings(), max_file_mb=args.max_file_mb),
                                 cache=cache)
    except FileNotFoundError as exc:
        return _fail(str(exc))
    if not found.documents:
        return _fail("no readable documents in " + ", ".join(args.paths))
    store = RunStore.open()
    shared = None
    if args.max_cost_total is not None:
        # lazy: +0 modules (the engine is loaded by now)
        from core.engine.budget import Budget
        shared = Budget(max_cost_usd=args.max_cost_total, max_sub_calls=None)
    runs = EvaluationRuns(RunService(store=store), found.documents, found.skipped, shared_budget=shared)

    def progress(row: Any) -> None:
        if not args.quiet:
            mark = "right" if row.correct else "wrong"
            print(f"{row.pair} [{row.mode}] {row.question_id} #{row.repeat}: {row.status}, {mark} "
                  f"({row.detail}); ${row.cost_usd:.4f}", file=sys.stderr)

    evaluation = Evaluation(qset, found.documents, pairs, config_for=config_for, run_rlm=runs.run_rlm,
                            llm_for=runs.llm_for, repeats=args.repeats, parallel=args.parallel,
                            direct=args.direct, direct_max_tokens=args.direct_max_tokens,
                            windows=windows, judge_model=args.judge, modes=modes)
    # The evaluation's own rows go through a connection of their own: the store's is used by
    # the runs' threads meanwhile (sources), and two writers on one connection share a
    # transaction. Both take the write lock up front and wait for it (core/store/db.py).
    records_db = connect(store.path)
    try:
        evaluation_id, card = await evaluation.run(records_db, on_row=progress)
    finally:
        records_db.close()
        store.close()
    _report(args, card, f"evaluation {evaluation_id} ({qset.name}, {len(qset.questions)} questions)")
    if not args.json:
        _print_direct_notes(card)
    return 0


def _print_direct_notes(card: dict) -> None:
    notes = {a["error"] for a in card.get("latest_answers", []) if a["mode"] == "direct" and a.get("error")}
    for note in sorted(notes):
        print(f"direct call: {note}")


def _report(args: argparse.Namespace, card: dict, title: str) -> None:
    """The scorecard's exports, then the card as JSON (--json) or as text under `title`."""
    # lazy: +199 modules in the command (where it runs)
    from core.evaluation.scorecard import render_text
    _write_exports(args, card)
    if args.json:
        print(json.dumps(card, ensure_ascii=False))
    else:
        print(title)
        print(render_text(card))


def _write_exports(args: argparse.Namespace, card: dict) -> None:
    # lazy: +199 modules in the command (where it runs)
    from core.evaluation.scorecard import render_csv, render_markdown
    if args.csv:
        Path(args.csv).write_text(render_csv(card), encoding="utf-8")
    if args.md:
        Path(args.md).write_text(render_markdown(card, f"Scorecard: {card.get('name', '')}"), encoding="utf-8")


def run_scorecards(args: argparse.Namespace) -> int:
    # lazy: +195 modules in the command (where it runs)
    from core.evaluation import records
    # lazy: +191 modules in the command (where it runs)
    from core.store import RunStore
    # lazy: +191 modules in the command (where it runs)
    from core.store.db import iso_utc
    with RunStore.open() as store:
        if not args.id:
            items = records.list_evaluations(store.db)
            if args.json:
                print(json.dumps(items))
            for e in items if not args.json else []:
                print(f"{e['id'][:12]}  {iso_utc(e['updated_utc'])}  {e['name']}  "
                      f"{e['answers']} answers, {e['pairs']} pair/modes, {e['repeats'] or 0} repeats")
            return 0
        try:
            evaluation_id = records.resolve_evaluation(store.db, args.id)
        except KeyError as exc:
            return _fail(str(exc.args[0]), 1)
        row = records.get_evaluation(store.db, evaluation_id)
        card = json.loads(row["scorecard_json"] or "null") or {"lines": [], "latest_answers": []}
    card.setdefault("name", row["name"])
    _report(args, card, f"evaluation {evaluation_id} ({row['name']})")
    return 0
