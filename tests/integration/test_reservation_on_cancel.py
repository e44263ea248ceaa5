"""Found by the fault soak: a call whose attempt failed (a cut stream) waits for the token
counter (litellm, still importing in a fresh process) before it settles the attempt; a
Stop in that wait left the attempt's reservation in the budget for good. Run in a fresh
interpreter, where litellm is not imported yet, against the scripted server."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import asyncio, json, sys
from tests.support.openai_server import ScriptedOpenAI, CutStream
from tests.support.trust_runs import DOCS, ROOT, SUB, config
from core.config import Price
from core.engine.run import Engine

async def main():
    server = ScriptedOpenAI().start()
    server.script("root", replies=["FINAL(never)"])
    server.fail_next("root", CutStream(5))
    cfg = config(server, prices={ROOT: Price(1.0, 2.0), SUB: Price(0.5, 1.0)}, max_cost_usd=5.0)
    events = []
    engine = Engine(cfg, emit=events.append, key_for=lambda m: "k")
    def stop_when_cut(event):
        events.append(event)
    async def stop_later():
        while not server.requests_for("root"):
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.2)                   # the stream was cut; the attempt waits for the counter
        engine.cancel()
    stopper = asyncio.ensure_future(stop_later())
    result = await engine.run("q", DOCS)
    await stopper
    b = engine.budget
    import sys as _s
    print(json.dumps({"status": result.status, "reserved": b.reserved_usd, "in_flight": b.in_flight,
                      "litellm_was_imported": "litellm" in _s.modules}))
    server.stop()

asyncio.run(main())
"""


def test_a_stop_while_an_attempt_waits_for_the_token_counter_releases_its_reservation(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "RLMSTUDIO_DESKTOP_HOME": str(tmp_path),
                               "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
                               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["status"] == "cancelled"
    assert data["in_flight"] == 0 and data["reserved"] == 0.0, data
