"""Bench: the fork's walk through the layers (prints figures; asserts nothing).

    .venv/bin/python -m tests.bench.bench_fork_walk [--pairs]    # --pairs: every stop, named
    PYTHONPATH=/path/to/old/tree .venv/bin/python -m tests.bench.bench_fork_walk   # the same on another tree

A stored run (3 turns, one batch of sub-calls) is forked at turn 2 with edited code that
asks one recorded and one new prompt, through RunService.run (the CLI's and the
window's path), against the scripted server. While RunService.run runs, a profile hook
records every call from one of our modules into another (app/, core/, ui/): the caller's
module, the callee's. Printed: the modules entered, the distinct caller -> callee module
pairs ("stops"), and those pairs that go back up a layer ("climbs"), each named.

Layers, from the top: app/ and ui/ (6); trust/, follow_up, evaluation (5); engine/ (4);
store/ (3); llm/, repl/, ingest/ (2); the rest of core/ (1). A call into a higher layer
is a climb: by import (the caller's module imports the callee's, at the top or inside a
function: a dependency the wrong way) or by callback (a function handed down: an event
sink, the REPL's on_sub_call, a meter or key function given to the model client).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import threading

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
os.environ.setdefault("RLMSTUDIO_DESKTOP_HOME", tempfile.mkdtemp(prefix="rlm-fork-walk-"))

TOP = {"app": 6, "ui": 6}
CORE = {"trust": 5, "follow_up": 5, "evaluation": 5, "engine": 4, "engine_process": 4, "store": 3,
        "llm": 2, "repl": 2, "ingest": 2}


def layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] in TOP:
        return TOP[parts[0]]
    if parts[0] != "core":
        return None
    return CORE.get(parts[1], 1) if len(parts) > 1 else 1


class Walk:
    def __init__(self) -> None:
        self.pairs: dict[tuple[str, str], int] = {}

    def hook(self, frame, event, _arg) -> None:
        if event != "call" or frame.f_back is None:
            return
        callee = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "")
        if callee != caller and layer(callee) is not None and layer(caller) is not None:
            self.pairs[(caller, callee)] = self.pairs.get((caller, callee), 0) + 1

    def climbs(self) -> list[tuple[str, str]]:
        return sorted(p for p in self.pairs if layer(p[1]) > layer(p[0]))


async def main() -> None:
    from app.run_service import RunRequest, RunService
    from core.store import RunStore
    from tests.support.openai_server import ScriptedOpenAI
    from tests.support.trust_runs import code, three_turn_run
    with ScriptedOpenAI() as server, RunStore.open() as store:
        parent_id = await three_turn_run(server, store)
        server.script("root", replies=[code("FINAL(' | '.join(answers))")])
        edited = ("rev = [l for l in lines if 'Revenue in Q3' in l]\n"
                  "answers = llm_query_batched(['Extract the number: ' + r for r in rev] + ['a new prompt'])\n"
                  "print(answers)")
        service = RunService(store=store)          # keys: the null keyring; the server needs none
        walk = Walk()
        sys.setprofile(walk.hook)
        threading.setprofile(walk.hook)
        try:
            outcome = await service.run(RunRequest.fork(parent_id, 2, edited_code=edited))
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
        modules = {m for pair in walk.pairs for m in pair}
        climbs = walk.climbs()
        from tests.unit.test_layering import import_graph, module_files
        imports = import_graph(module_files(), lazy=True)
        by_import = [c for c in climbs if c[1] in imports.get(c[0], ())]
        print(f"fork answer: {outcome.answer!r} ({outcome.status}); sub requests: {len(server.requests_for('sub'))}")
        print(f"modules entered: {len(modules)}; caller->callee module pairs (stops): {len(walk.pairs)}; "
              f"climbs back up a layer: {len(climbs)}, of which by import {len(by_import)}, "
              f"by callback {len(climbs) - len(by_import)}")
        if "--pairs" in sys.argv:              # every stop, to diff two trees' walks
            for caller, callee in sorted(walk.pairs):
                print(f"  pair {layer(caller)}->{layer(callee)}: {caller} -> {callee}")
        for caller, callee in climbs:
            how = "import" if (caller, callee) in by_import else "callback"
            print(f"  {how:8} {layer(caller)}->{layer(callee)}: {caller} -> {callee} "
                  f"({walk.pairs[(caller, callee)]} calls)")


if __name__ == "__main__":
    with open("/proc/loadavg") as f:
        print("load:", f.read().strip())
    asyncio.run(main())
