"""A whole local run (every model on the user's own OpenAI-compatible server, the direct route)
never imports litellm: not for the call, not for usage estimates when the server sends none,
not for a call cancelled mid-way (issue 28). `rlm-studio ask` as a real process against the
scripted server; at exit the process reports whether any litellm module was ever loaded (and
httpx, which the first request does not need either)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.integration.engine_helpers import code
from tests.support.openai_server import Delay

ROOT_DIR = Path(__file__).resolve().parents[2]

PROBE = r"""
import atexit, json, sys
seen = []
class Watch:       # notes every import of a litellm submodule, even one later undone (finding
    def find_spec(self, name, path=None, target=None):     # "litellm" itself is allowed: that is
        if name.startswith("litellm."):                    # how its price map file is located)
            seen.append(name)
        return None
sys.meta_path.insert(0, Watch())

def report():
    loaded = sorted(m for m in sys.modules if m.split(".")[0] == "litellm")
    print("PROBE " + json.dumps({"loaded": loaded, "asked": seen[:5], "httpx": "httpx" in sys.modules}),
          file=sys.stderr, flush=True)
atexit.register(report)
from app.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_local_run_with_estimates_and_a_cancelled_call_never_imports_litellm(openai_server, tmp_path):
    # The sub model answers one prompt at once and hangs on the other until the run's wall cap
    # cancels it; no reply carries usage, so every attempt's tokens are estimated.
    openai_server.script("sub", fn=lambda r: Delay(60, "late") if "slow" in r.prompt else "quick answer",
                         send_usage=False)
    openai_server.script("root", replies=[code("a = llm_query('fast one')\nprint(a)\n"
                                               "b = llm_query('slow one')\nFINAL(b)")],
                         send_usage=False)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text("apples: 3\n" * 1000)
    env = {**os.environ, "RLMSTUDIO_DESKTOP_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": "sk-local",
           "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring", "PYTHONPATH": str(ROOT_DIR)}
    env.pop("RLMSTUDIO_DESKTOP_HTTP", None)
    cmd = [sys.executable, "-c", PROBE, "ask", "How many apples?", str(folder), "--root", "openai/root",
           "--sub", "openai/sub", "--api-base", openai_server.url, "--json", "--max-wall-seconds", "6"]
    proc = subprocess.run(cmd, cwd=ROOT_DIR, env=env, capture_output=True, text=True, timeout=180)
    probe = json.loads(proc.stderr.rsplit("PROBE ", 1)[1])
    # nor httpx: the direct route and Auto's question to the server about its window use aiohttp
    assert probe == {"loaded": [], "asked": [], "httpx": False}, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    slow = [r for r in openai_server.requests_for("sub") if "slow" in r.prompt]
    assert slow and slow[0].disconnected                    # the cancelled call, hung up on
    assert data["input_tokens"] > 0 and data["sub_calls"] >= 2, data   # estimated, not zero
    assert all(r.headers["user-agent"] == "rlm-studio" for r in openai_server.history)
