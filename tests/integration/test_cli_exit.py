"""`rlm-studio ask` ends its process as soon as the command has returned (app/main.py:
_exit_now skips the interpreter's teardown of every module), and by then the run's record
is whole: the events to RunFinished, the sources with every text, the store closed."""

import json
import os
import subprocess
import sys

from core.store import RunStore
from tests.integration.engine_helpers import code

# The console script's way in: main() without arguments reads sys.argv and ends the process.
# An atexit function of the caller's must still run (logging's flush is one).
LAUNCH = r"""
import atexit, sys
atexit.register(lambda: print("ATEXIT-RAN", file=sys.stderr, flush=True))
sys.argv = ["rlm-studio", *sys.argv[1:]]
from app.main import main
sys.exit(main())
"""


def test_the_process_ends_with_the_run_recorded_whole(server, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    texts = {}
    for k in range(5):           # 6 MB in all: the spare worker, the sources stored beside the run
        line = f"2024-03-0{k + 1} INFO order {k}{k}{k} paid by card, {k} items ünïcode\n"
        texts[f"part{k}.txt"] = line * (1_200_000 // len(line))
        (folder / f"part{k}.txt").write_text(texts[f"part{k}.txt"], encoding="utf-8")
    server.script("root", replies=[code("print(len(context))"), code("FINAL('done')")])
    cmd = [sys.executable, "-c", LAUNCH, "ask", "Is the context long?", str(folder), "--root", "openai/root",
           "--sub", "openai/root", "--api-base", server.url, "--mode", "rlm", "--json", "--quiet"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-exit-test", "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)             # stdout flushed whole before the process ended
    assert data["answer"] == "done" and data["store_error"] is None
    assert "ATEXIT-RAN" in proc.stderr
    with RunStore.open() as store:
        run = store.get_run(data["run_id"])
        assert run["status"] == "finished"
        events = list(store.iter_events(data["run_id"]))
        assert events[0].type == "RunStarted" and events[-1].type == "RunFinished"
        assert sum(e.type == "CellExecuted" for e in events) == 2
        stored = {os.path.basename(d.path): d.text for d in store.documents(data["run_id"])}
        assert stored == texts
        assert {row[0] for row in store.db.execute("SELECT codec FROM blobs")} == {"zstd"}
