"""`rlm-studio grid COLUMNS PATH... --out FILE.csv|FILE.xlsx|FILE.html`: every question of COLUMNS over
every document of PATH..., each cell an ordinary stored run, under one dollar cap.

Running the same columns over the same documents again resumes the grid (the cells that
ended are kept); --retry also runs the failed and limited cells again. What the grid is:
core/grid; the user page: docs/grid.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.cli_common import EXIT_LIMITED, add_flags, error_exit as _fail


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("grid", help="ask every question of a list over every document (a review grid)",
                       description="Ask every question of COLUMNS over every document in PATH..., one cell "
                                   "per question and document, and write the grid to --out. Running it again "
                                   "resumes it.")
    p.add_argument("columns", metavar="COLUMNS",
                   help='a text file with one question per line, or JSON lines {"name", "question", "type", '
                        '"instruction"} (type: text, number, date, yes/no, list, excerpt); with --preset, '
                        'leave it out: every argument is a PATH')
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders")
    p.add_argument("--preset", metavar="NAME", help="the columns saved as preset NAME instead of COLUMNS")
    p.add_argument("--save-preset", metavar="NAME",
                   help="save the grid's columns as preset NAME (replacing one of that name) for --preset")
    p.add_argument("--out", required=True, metavar="FILE", help="FILE.csv, FILE.xlsx or FILE.html (a report "
                                                                 "with each answer's citations and passages)")
    p.add_argument("--max-cost", type=float, metavar="USD", help="one dollar cap for the whole grid")
    p.add_argument("--concurrency", type=int, default=8, help="cells running at once (default 8)")
    p.add_argument("--retry", action="store_true", help="run the failed and limited cells again")
    p.add_argument("--rerun-column", action="append", default=[], metavar="NAME",
                   help="run every cell of column NAME again (e.g. with other --root/--sub models)")
    p.add_argument("--ray", metavar="ADDRESS", help="run the cells on the Ray cluster at HOST:PORT "
                                                   "(pip install 'rlm-studio[ray]'; default: the Ray address "
                                                   "in Settings, if any)")
    p.add_argument("--local", action="store_true", help="run on this computer even when Settings has a Ray address")
    p.add_argument("--ray-send-key", action="append", default=[], metavar="NAME",
                   help="allow the key of provider or endpoint NAME to go to the cluster for this grid "
                        "(keys stay on this computer otherwise)")
    p.add_argument("--root", help="root model (default: settings)")
    p.add_argument("--sub", help="sub model (default: settings, else the root model)")
    add_flags(p, "--api-base")
    p.add_argument("--mode", choices=("auto", "rlm", "direct"),
                   help="how each cell runs: auto (default: one plain call when the document takes at most "
                        "a quarter of the root's window, else the RLM), rlm or direct")
    p.add_argument("--context-window", type=int, metavar="TOKENS", help="the root model's context window")
    add_flags(p, "--max-depth", "--max-iterations", "--root-max-tokens", "--sub-max-tokens", "--price")
    p.add_argument("--no-comments", action="store_true", help="XLSX without the quoted passage as comments")
    add_flags(p, "--json", "--quiet", quiet="no progress lines on stderr")
    p.set_defaults(handler=run_grid)


def run_grid(args: argparse.Namespace) -> int:
    # lazy: +10 modules in the command (where it runs)
    from core.grid.model import ColumnError, parse_columns
    suffix = Path(args.out).suffix.lower()
    if suffix not in (".csv", ".xlsx", ".html"):
        return _fail(f"--out must end in .csv, .xlsx or .html, got {args.out!r}")
    if args.concurrency < 1:
        return _fail("--concurrency must be at least 1")
    if args.max_cost is not None and args.max_cost <= 0:
        return _fail("--max-cost must be above 0 dollars")
    if args.local and args.ray:
        return _fail("--local and --ray cannot both be given")
    try:
        columns = _columns(args)
    except (ColumnError, OSError) as exc:
        return _fail(str(exc))
    if not args.paths:
        return _fail("no PATH given: name the files or folders to review")
    if not args.local and not args.ray:
        args.ray = _settings_ray_address()
    # lazy: +59 modules in the command (where it runs)
    import asyncio
    if not args.ray:
        return asyncio.run(_grid(args, columns))
    # Ray's driver prints what its workers and raylets say (a lost worker, ...) on stdout from
    # its own threads: stdout carries only the result here, so they go to stderr meanwhile.
    # lazy: free in the command (where it runs)
    import contextlib
    real = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        return asyncio.run(_grid(args, columns, out=real))


def _columns(args: argparse.Namespace) -> list:
    """The grid's columns: --preset NAME's (every positional is then a PATH) or COLUMNS',
    saved as --save-preset NAME when asked."""
    # lazy: +22 modules, 59 ms at load 12 (first use only)
    from core.grid.model import ColumnError, parse_columns
    # lazy: +1 modules (first use only)
    from core.grid.presets import PresetError, preset_columns, presets_path, save_preset
    # lazy: +1 modules (first use only)
    from core.paths import settings_path
    presets = presets_path(settings_path())
    try:
        if args.preset:
            args.paths = [args.columns, *args.paths]
            columns = preset_columns(presets, args.preset)
        else:
            try:
                text = Path(args.columns).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ColumnError(f"cannot read COLUMNS {args.columns}: {exc}") from None
            columns = parse_columns(text, Path(args.columns).name)
        if args.save_preset:
            save_preset(presets, args.save_preset, columns)
            _say(args, f"saved {len(columns)} columns as preset {args.save_preset.strip()!r}")
    except PresetError as exc:
        raise ColumnError(str(exc)) from None
    return columns


def _settings_ray_address() -> str | None:
    """The Ray address in Settings ("" or unset: run here)."""
    # lazy: +13 modules (first use only)
    from app.settings import load_settings
    return load_settings().ray_address or None


def _config(args: argparse.Namespace) -> Any:
    """The cells' RunConfig, built as `ask` builds a run's (the flags a grid does not have are
    unset; its --concurrency counts cells, not a run's sub-calls)."""
    # lazy: +1 modules in the command (where it runs)
    from app.cli_ask import config_from_args
    fields = dict(vars(args), concurrency=None)
    for name in ("max_sub_calls", "max_wall_seconds", "cell_timeout", "max_output_chars", "memory_limit_mb",
                 "sub_api_base", "api_key_from"):
        fields.setdefault(name, None)
    return config_from_args(argparse.Namespace(**fields))


def rows_of(found: Any) -> tuple[list[Any], list[Any]]:
    """(rows, documents): a row per document read and per file that could not be read (its
    cells fail with why); ignored files and byte-identical copies are not rows."""
    # lazy: +10 modules in the command (where it runs)
    from core.grid.model import Row
    # lazy: +111 modules in the command (where it runs)
    from core.ingest.model import DUPLICATE, IGNORED
    items: list[tuple[str, Any, Any]] = [(d.path, Row(d.path, d.sha256, d.chars), d) for d in found.documents]
    for s in found.skipped:
        if s.reason in (IGNORED, DUPLICATE):
            continue
        why = f"{s.path} could not be read: {s.reason}" + (f" ({s.detail})" if s.detail else "")
        items.append((s.path, Row(s.path, error=why), None))
    items.sort(key=lambda item: item[0])
    return [r for _, r, _ in items], [d for _, _, d in items]


async def _grid(args: argparse.Namespace, columns: list, out: Any = None) -> int:
    suffix = Path(args.out).suffix.lower()
    # lazy: each alone +59 (asyncio) to +118 (export_grid) modules, mostly shared, in the command (where it runs)
    import asyncio
    # lazy: counted in the line above the first of these imports
    import signal
    # lazy: counted in the line above the first of these imports
    from app.grid_runs import GridCells
    # lazy: counted in the line above the first of these imports
    from app.run_service import RunService
    # lazy: counted in the line above the first of these imports
    from app.settings import ingest_options, load_settings
    # lazy: counted in the line above the first of these imports
    from core.engine.prepare import ConfigError, check_config
    # lazy: counted in the line above the first of these imports
    from core.engine_process import prepare_engine_process
    # lazy: counted in the line above the first of these imports
    from core.exports.export_grid import write_grid
    # lazy: counted in the line above the first of these imports
    from core.grid import store as gs
    # lazy: counted in the line above the first of these imports
    from core.grid.preview import preview
    # lazy: counted in the line above the first of these imports
    from core.grid.runner import WRITER_LINGER_S, GridRun
    # lazy: counted in the line above the first of these imports
    from core.ingest import ingest
    # lazy: counted in the line above the first of these imports
    from core.store import RunStore
    # lazy: counted in the line above the first of these imports
    from core.store.db import connect
    # lazy: counted in the line above the first of these imports
    from core.store.runstore import opened_cache
    # lazy: counted in the line above the first of these imports

    prepare_engine_process()
    try:
        config = _config(args)
        check_config(config)
    except (ValueError, ConfigError) as exc:
        return _fail(f"cannot start: {exc}")
    try:
        with opened_cache() as cache:
            found = await ingest(args.paths, ingest_options(load_settings()), cache=cache)
    except FileNotFoundError as exc:
        return _fail(str(exc))
    rows, documents = rows_of(found)
    if not found.documents:
        return _fail("no readable documents in " + ", ".join(args.paths))
    store = RunStore.open()
    db = connect(store.path)           # the grid's own reads; its rows go through the writer
    writer = store.writer(linger_s=WRITER_LINGER_S)   # one for every cell's run and the grid's rows
    try:
        run_cell = GridCells(RunService(store=store, writer=writer)).run_cell
        if args.ray:                   # the cluster and the keys checked before the grid is opened
            try:
                run_cell = ray_cells(args, config, writer).run_cell
            except (ValueError, RuntimeError) as exc:
                return _fail(f"cannot run on Ray: {exc}")
        grid_id, created = gs.open_grid(db, columns, rows, max_cost_usd=args.max_cost,
                                        config={"root_model": config.root_model, "sub_model": config.sub_model,
                                                "mode": config.mode})
        if args.retry:
            again = gs.requeue(db, grid_id)
            _say(args, f"running {again} failed or limited cells again")
        names = [c.name for c in columns]
        for name in args.rerun_column:
            if name not in names:
                return _fail(f"--rerun-column {name!r}: no such column (the columns are {', '.join(names)})")
            col = names.index(name)
            again = gs.requeue(db, grid_id, ("done", "failed", "limited"), [(r, col) for r in range(len(rows))])
            _say(args, f"running the {again} cells of column {name!r} again")
        queued = gs.queued_cells(db, grid_id)
        if not created:
            counts = gs.cell_counts(db, grid_id)
            ended = counts["done"] + counts["failed"] + counts["limited"]
            _say(args, f"resuming grid {grid_id[:12]}: {ended} of {sum(counts.values())} cells already ended")
        for r in rows:
            if r.error:
                _say(args, f"warning: {r.error}; its cells are failed")
        _say(args, preview(config, columns, documents, queued, cap_usd=args.max_cost,
                           spent_usd=gs.grid_cost(db, grid_id)).sentence())
        grid = GridRun(db, grid_id, documents, config, run_cell=run_cell, concurrency=args.concurrency,
                       max_cost_usd=args.max_cost, writer=writer)
        _collect_often()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, grid.stop)
        total = len(queued)
        done = 0

        def progress(event: Any) -> None:
            nonlocal done
            if event.state in ("done", "failed", "limited"):
                done += 1
                what = event.error if event.state != "done" else (event.flag or "")
                _say(args, f"[{done}/{total}] {rows[event.row].path} x {columns[event.col].name}: "
                           f"{event.state}, ${event.cost_usd:.4f}" + (f" ({what})" if what else ""))
        data = await grid.run(on_cell=progress, citations=suffix != ".csv")     # a CSV has none
        loop.remove_signal_handler(signal.SIGINT)
        written = write_grid(data, Path(args.out), comments=not args.no_comments)
    finally:
        writer.close()
        db.close()
        store.close()
        if args.ray and "ray" in sys.modules:
            sys.modules["ray"].shutdown()     # its threads stop printing before the result
    counts = data.counts()
    summary = {"grid_id": grid_id, "status": data.status, "rows": len(data.rows), "columns": len(data.columns),
               "cells": len(data.cells), "done": counts["done"], "failed": counts["failed"],
               "limited": counts["limited"], "queued": counts["queued"], "cost_usd": data.cost_usd,
               "max_cost_usd": args.max_cost, "output": str(written)}
    if args.json:
        print(json.dumps(summary), file=out or sys.stdout)
    else:
        print(f"grid {grid_id}: {counts['done']} done, {counts['failed']} failed, {counts['limited']} limited"
              + (f", {counts['queued']} not run (stopped)" if counts["queued"] else "")
              + f"; ${data.cost_usd:.4f}; written to {written}", file=out or sys.stdout)
    if counts["limited"]:
        print(f"rlm-studio: warning: {counts['limited']} cells are limited by the grid's dollar cap; "
              "raise --max-cost and run again with --retry", file=sys.stderr)
    if data.status == "stopped":
        return 130
    return EXIT_LIMITED if counts["failed"] or counts["limited"] else 0


def _collect_often() -> None:
    """Each ended cell leaves its run's objects (~130) to Python's cyclic collector, whose full
    collection comes after 10 younger ones by default (~500 cells): in this process, which
    only runs the grid, what was loaded before the cells is frozen out of the collector's
    walk and a full collection comes after 2 (4 MB less at the peak of 300 x 5, the walk
    short: docs/dev/grid.md)."""
    # lazy: free (first use only)
    import gc
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)


FULL_COLLECTION_EVERY = 2


def ray_cells(args: argparse.Namespace, config: Any, writer: Any) -> Any:
    """The cells' runner on the cluster at --ray, with only the keys --ray-send-key allows:
    a model whose calls need a key that was not allowed is refused before anything runs. The
    cells' runs are written by `writer`, the grid's one EventWriter."""
    # lazy: +1 modules in the command (where it runs)
    from app.key_routing import keys_to_send
    # lazy: free in the command (where it runs)
    from app.version import __version__
    # lazy: ray itself is imported only when the cluster answers (`pip install 'rlm-studio[ray]'`)
    from core.grid.ray_cells import RayCells, connect
    keys = keys_to_send(config, set(args.ray_send_key))
    return RayCells(connect(args.ray), writer, keys=keys, version=__version__)


def _say(args: argparse.Namespace, line: str) -> None:
    if not args.quiet:
        print(line, file=sys.stderr)
