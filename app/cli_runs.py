"""`rlm-studio runs list|show|export|import|delete|rerun`: the run history from the command line.

A run is named by its id or any unique prefix of it (as `runs list` shows).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.cli_common import add_flags, error_exit as _fail
from app.cli_trust import register_trust
from app.cli_common import run_request
from core.exports import export

EXPORT_SUFFIXES = {".json": "json", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".csv": "csv"}


def register(sub: argparse._SubParsersAction) -> None:
    runs = sub.add_parser("runs", help="list, show, export, import, delete and re-run stored runs",
                          description="The history of runs stored in the local database.")
    actions = runs.add_subparsers(dest="runs_command", metavar="ACTION")
    runs.set_defaults(handler=lambda args: _help(runs))

    p = actions.add_parser("list", help="list stored runs, newest first")
    p.add_argument("--search", metavar="TEXT", help="full-text search over questions and answers")
    p.add_argument("--status", help="finished, capped, failed, cancelled, interrupted or running")
    p.add_argument("--model", metavar="M", help="runs whose root or sub model contains M")
    p.add_argument("--limit", type=int, default=50, metavar="N", help="at most N runs (default 50)")
    p.add_argument("--offset", type=int, default=0, metavar="N", help="skip the first N runs")
    p.add_argument("--evaluations", action="store_true",
                   help="also list the runs of evaluations (`rlm-studio eval`) and of grids' cells "
                        "(`rlm-studio grid`), hidden as in History")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(handler=cmd_list)

    p = actions.add_parser("show", help="print a stored run as a transcript (or JSON)")
    p.add_argument("id", metavar="ID")
    p.add_argument("--json", action="store_true", help="print the full JSON export")
    p.set_defaults(handler=cmd_show)

    p = actions.add_parser("export", help="write a run to a JSON, Markdown or HTML file")
    p.add_argument("id", metavar="ID")
    p.add_argument("--format", choices=("json", "md", "html", "csv"), help="default: from the file name")
    p.add_argument("-o", "--output", required=True, metavar="FILE")
    p.add_argument("--include-texts", action="store_true",
                   help="JSON only: include the document texts (a re-run on another machine needs them)")
    p.set_defaults(handler=cmd_export)

    p = actions.add_parser("import", help="import a run from a JSON export")
    p.add_argument("file", metavar="FILE")
    p.set_defaults(handler=cmd_import)

    p = actions.add_parser("delete", help="delete a run (and texts no other run uses)")
    p.add_argument("id", metavar="ID")
    p.set_defaults(handler=cmd_delete)

    p = actions.add_parser("rerun", help="ask a stored run's question again over its stored documents")
    p.add_argument("id", metavar="ID")
    p.add_argument("--root", metavar="M", help="another root model")
    p.add_argument("--sub", metavar="M", help="another sub model")
    add_flags(p, "--max-depth", "--max-cost", "--max-iterations", "--json", "--quiet")
    p.add_argument("--yes", action="store_true",
                   help="an imported run: send the calls where they are shown without asking")
    p.set_defaults(handler=cmd_rerun)
    register_trust(actions)                     # verify, fork, compare, coverage, citations


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


def _open() -> Any:
    # lazy: +191 modules in the command (where it runs)
    from core.store import RunStore
    return RunStore.open()


def _resolve(store: Any, prefix: str) -> str | None:
    # lazy: +191 modules in the command (where it runs)
    from core.store import AmbiguousRunId, RunNotFound
    try:
        return store.resolve_id(prefix)
    except (RunNotFound, AmbiguousRunId) as exc:
        _fail(str(exc))
        return None


# -- list / show --------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace) -> int:
    with _open() as store:
        rows = store.list_runs(search=args.search, status=args.status, model=args.model,
                               evaluations=args.evaluations, limit=args.limit, offset=args.offset)
        hidden = not rows and not args.evaluations and bool(store.list_runs(
            search=args.search, status=args.status, model=args.model, limit=1, offset=args.offset))
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    if hidden:
        print("no runs but those of evaluations; add --evaluations to list them", file=sys.stderr)
        return 0
    if not rows:
        print("no runs" + (" match" if (args.search or args.status or args.model) else " yet"), file=sys.stderr)
        return 0
    print(f"{'ID':<12}  {'CREATED (UTC)':<20}  {'STATUS':<11}  {'COST':>9}  {'TURNS':>5}  {'ROOT MODEL':<24}  QUESTION")
    for r in rows:
        question = " ".join(r["question"].split())
        question = question if len(question) <= 60 else question[:59] + "…"
        print(f"{r['id'][:12]:<12}  {r['created_at']:<20}  {r['status']:<11}  {r['cost_usd']:>9.4f}  "
              f"{r['iterations']:>5}  {(r['root_model'] or '')[:24]:<24}  {question}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with _open() as store:
        run_id = _resolve(store, args.id)
        if run_id is None:
            return 2
        if args.json:
            # lazy: +199 modules in the command (where it runs)
            from core.exports.export_json import build, dumps
            print(dumps(build(store, run_id)))
            return 0
        run = store.get_run(run_id)
        print(f"run {run['id']}  {run['status']}  started {run['created_at']}"
              + (f", finished {run['finished_at']}" if run.get("finished_at") else ""))
        print(f"root {run['root_model']}, sub {run['sub_model']}; caps: depth {run['max_depth']}, "
              f"iterations {run['max_iterations']}, cost {run['max_cost_usd']}")
        if run.get("fork_turn"):         # the transcript below opens with "Forked from turn N of ..."
            print(f"fork of {run['parent_run_id']}, from its turn {run['fork_turn']}")
        elif run.get("parent_run_id"):
            print(f"re-run of {run['parent_run_id']}")
        print(f"question: {run['question']}")
        # lazy: +10 modules in the command (where it runs)
        from app.transcript_printer import TranscriptPrinter
        printer = TranscriptPrinter(sys.stdout, live_tokens=False)
        terminal = False
        for event in store.iter_events(run_id):      # the same fold as the live transcript
            printer(event)
            terminal = terminal or event.type in ("RunFinished", "RunFailed")
        if not terminal:
            print(f"\n== {run['status']}" + (f": {run['error']}" if run.get("error") else ""))
        print("\nanswer:" if run.get("answer") is not None else "\nno answer")
        if run.get("answer") is not None:
            print(run["answer"])
    return 0


# -- export / import / delete -------------------------------------------------------------
def cmd_export(args: argparse.Namespace) -> int:
    output = Path(args.output)
    fmt = args.format or EXPORT_SUFFIXES.get(output.suffix.lower())
    if fmt is None:
        return _fail(f"cannot tell the format from {output.name!r}; add --format json|md|html")
    with _open() as store:
        run_id = _resolve(store, args.id)
        if run_id is None:
            return 2
        try:
            export(store, run_id, fmt, output, include_texts=args.include_texts)
        except OSError as exc:
            return _fail(f"cannot write {output}: {exc.strerror or exc}", 1)
    print(f"exported run {run_id} to {output}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    # lazy: +191 modules in the command (where it runs)
    from core.store import ImportError_
    with _open() as store:
        try:
            run_id = store.import_json(Path(args.file))
        except ImportError_ as exc:
            return _fail(str(exc))
        dropped = (store.get_run(run_id) or {}).get("config", {}).get("import_dropped")
    if dropped:
        # lazy: part of core.store, already imported above
        from core.store.import_checks import describe_dropped
        print(f"rlm-studio: run {run_id}: {describe_dropped(dropped)}", file=sys.stderr)
    print(run_id)
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    # lazy: +191 modules in the command (where it runs)
    from core.store import RunBusyError
    with _open() as store:
        run_id = _resolve(store, args.id)
        if run_id is None:
            return 2
        try:
            store.delete_run(run_id)
        except RunBusyError as exc:
            return _fail(str(exc))
    print(f"deleted run {run_id}", file=sys.stderr)
    return 0


# -- rerun ----------------------------------------------------------------------------------
def rerun_inputs(store: Any, run_id: str, args: argparse.Namespace) -> tuple[str, list, list, Any]:
    """Question, documents (from blobs), skipped files and config (with overrides) of a stored run."""
    # lazy: +13 modules in the command (where it runs)
    from core.config import RunConfig
    run = store.get_run(run_id)
    caps = {"max_depth": args.max_depth, "max_cost_usd": args.max_cost, "max_iterations": args.max_iterations}
    # lazy: +30 modules in the command (where it runs)
    from app.settings import load_settings, priced_now
    settings = load_settings()
    if run.get("imported_utc"):
        # a run file decides nothing about where calls go or whose key they carry (app/rerun_config.py)
        from app.rerun_config import imported_rerun_config  # lazy: with the settings (above)
        config = imported_rerun_config(run, settings, root=args.root, sub=args.sub, overrides=caps)
    else:
        config = RunConfig.from_public_dict(run["config"])
        overrides = {"root_model": args.root, "sub_model": args.sub, **caps}
        config = config.replace(**{k: v for k, v in overrides.items() if v is not None})
    config = priced_now(config, settings)     # today's prices, never the parent's
    return run["question"], store.documents(run_id), store.skipped(run_id), config


def cmd_rerun(args: argparse.Namespace) -> int:
    # lazy: +191 modules in the command (where it runs)
    from core.store import MissingTextsError
    with _open() as store:
        run_id = _resolve(store, args.id)
        if run_id is None:
            return 2
        try:
            question, documents, skipped, config = rerun_inputs(store, run_id, args)
        except MissingTextsError as exc:
            return _fail(str(exc))
        except ValueError as exc:
            return _fail(f"cannot re-run: {exc}")
        imported = bool(store.get_run(run_id).get("imported_utc"))
    # lazy: with the settings (rerun_inputs)
    from app.key_routing import route_lines
    from app.settings import load_settings  # lazy: as above
    lines = route_lines(config, load_settings().endpoints)
    if imported and not args.yes:
        refused = _confirm_imported(run_id, lines)
        if refused is not None:
            return refused
    else:
        print(f"rlm-studio: re-run of {run_id[:8]}: calls go to: {'; '.join(lines)}", file=sys.stderr)
    # lazy: +60 modules in the command (where it runs)
    import asyncio
    return asyncio.run(_rerun(args, run_id, question, documents, skipped, config))


def _confirm_imported(run_id: str, lines: list[str]) -> int | None:
    """A run from a file names its models, and so picks which of the user's providers and
    keys its re-run uses (a name that matches none of the user's endpoints goes to that
    provider's own URL with the user's key): the user says yes before the first call, in a
    terminal; elsewhere --yes says it. None: go on; else the exit code."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return _fail(f"run {run_id[:8]} came from a file, so its re-run waits for your yes before it "
                     f"sends its calls ({'; '.join(lines)}): add --yes to send them there")
    sys.stderr.write(f"Run {run_id[:8]} came from a file. Its re-run sends its calls:\n"
                     + "".join(f"  {line}\n" for line in lines) + "Send them there? [y/N] ")
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() in ("y", "yes"):
        return None
    print("rlm-studio: not re-run; nothing was sent", file=sys.stderr)
    return 1


async def _rerun(args: argparse.Namespace, parent_id: str, question: str, documents: list, skipped: list,
                 config: Any) -> int:
    # lazy: +70 modules in the command (where it runs)
    from app.run_service import RunRequest, RunService
    try:
        request = RunRequest.rerun(parent_id, question, documents, config, skipped=skipped)
    except ValueError as exc:
        return _fail(f"cannot re-run: {exc}")
    return await run_request(request, args, RunService(), show=not (args.quiet or args.json))
