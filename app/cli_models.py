"""`rlm-studio models stats [--json]`: fitness per root and sub model across stored runs."""

from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="how well each model did across your runs")
    inner = p.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    s = inner.add_parser("stats", help="runs, syntax-error rate, answer rate, turns, cost and time per model")
    s.add_argument("--json", action="store_true", help="one JSON object: {roots: [...], subs: [...]}")
    s.set_defaults(handler=run_stats)


def run_stats(args: argparse.Namespace) -> int:
    # lazy: +6 modules in the command (where it runs)
    from core.fitness import model_fitness, render_fitness
    # lazy: +200 modules in the command (where it runs)
    from core.store import RunStore
    with RunStore.open() as store:
        stats = model_fitness(store.db)
    if args.json:
        print(json.dumps(stats))
    elif not stats["roots"]:
        print("no runs stored yet")
    else:
        print(render_fitness(stats))
    return 0
