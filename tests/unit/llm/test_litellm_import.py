"""litellm is imported lazily, with the local price map, and touches no network."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

PROBE = r"""
import json, os, sys
connects = []
def hook(event, args):
    if event in ("socket.connect", "socket.getaddrinfo", "urllib.Request"):
        connects.append([event, repr(args)[:200]])
sys.addaudithook(hook)
import core.llm.client, core.llm.pricing, core.llm.errors
lazy = "litellm" not in sys.modules
env_before = os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP")
from core.llm.litellm_import import litellm, cost_map_source
lm = litellm()
print(json.dumps({
    "lazy": lazy, "env_before": env_before, "env_after": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"),
    "connects": connects, "source": cost_map_source(), "same": litellm() is lm,
    "suppress": lm.suppress_debug_info, "telemetry": lm.telemetry,
    "callbacks": [len(lm.callbacks), len(lm.success_callback), len(lm.failure_callback)],
    "priced": len(lm.model_cost),
}))
"""


def fresh_python(src: str, timeout: float = 180) -> str:
    """`src` in a new interpreter without LITELLM_* settings; its last line of output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", src], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_import_is_lazy_local_and_offline():
    report = json.loads(fresh_python(PROBE))
    assert report["lazy"] is True                       # importing core.llm does not load litellm
    assert report["env_before"] is None and report["env_after"] == "True"
    assert report["connects"] == []                     # no DNS lookup, no connection at import
    assert report["source"] == "local" and report["priced"] > 1000
    assert report["same"] and report["suppress"] is True and report["telemetry"] is False
    assert report["callbacks"] == [0, 0, 0]


BACKGROUND = r"""
import asyncio, json, sys, threading
from core.llm.litellm_import import litellm, litellm_async, start_background_import
future = start_background_import()
same = start_background_import() is future
threads = [t.name for t in threading.enumerate()]

async def main():
    ticks = 0
    waiting = asyncio.ensure_future(litellm_async())
    while not waiting.done():         # the loop keeps running while litellm imports
        await asyncio.sleep(0.01)
        ticks += 1
    lm = await waiting
    return ticks, lm

ticks, lm = asyncio.run(main())
print(json.dumps({"same_future": same, "thread": "rlm-litellm-import" in threads, "ticks": ticks,
                  "module": lm is litellm() and lm is future.result(), "name": lm.__name__,
                  "fast_path": asyncio.run(litellm_async()) is lm}))
"""


def test_background_import_leaves_the_event_loop_running():
    report = json.loads(fresh_python(BACKGROUND))
    assert report["same_future"] and report["thread"]
    assert report["module"] and report["name"] == "litellm" and report["fast_path"]
    # The old synchronous import blocked the loop for its whole duration (0 ticks).
    assert report["ticks"] >= 2


SWITCH = r"""
import sys, threading
sys.setswitchinterval(0.005)
from core.llm import litellm_import
seen = []
def watch():
    while not future.done():
        seen.append(sys.getswitchinterval())
future = litellm_import.start_background_import()
threading.Thread(target=watch).start()
future.result()
print(min(seen) if seen else None, sys.getswitchinterval())
"""


def test_the_background_import_shortens_the_switch_interval_and_restores_it():
    assert fresh_python(SWITCH).split() == ["0.001", "0.005"]


QT_HOOK_PROBE = r"""
import builtins, json, sys
import PySide6.QtCore                      # installs its import hook (shibokensupport's feature module)
real_hook = builtins.__import__
kept = getattr(builtins, "__orig_import__", None)
seen = []
def spy(name, *args, **kwargs):            # the hook as the import sees it: which imports go through it
    seen.append(name)
    return real_hook(name, *args, **kwargs)
builtins.__import__ = spy
from core.llm.litellm_import import litellm
lm = litellm()
import json as again                       # after litellm: the hook serves imports again
print(json.dumps({"kept": kept is not None and kept is not real_hook, "restored": builtins.__import__ is spy,
                  "pydantic_hooked": sorted({n for n in seen if n.startswith("pydantic") or n == "litellm"}),
                  "after": "json" in seen[-3:], "priced": len(lm.model_cost)}))
"""


def test_litellm_is_imported_past_pyside6s_import_hook():
    # PySide6's hook reads the source of each new module; on a pydantic module that ran its lazy
    # __getattr__ mid-import ("partially initialized module 'pydantic._internal._validators'"),
    # and the window's first run through litellm failed so in the suite.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", QT_HOOK_PROBE], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["kept"], "PySide6 no longer keeps builtins.__orig_import__: the bypass does nothing"
    assert found["pydantic_hooked"] == [] and found["restored"] and found["after"] and found["priced"] > 1000
