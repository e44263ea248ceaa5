"""`rlm-studio eval --max-cost-total USD`: one dollar cap for the whole evaluation, every
call of every run reserving from it (as a grid's cells do), never passed."""

import json
import sqlite3
import subprocess
import sys

import pytest

from tests.integration.test_cli_ask import cli_env
from tests.integration.test_cli_eval import LOG, SET, scripted


@pytest.mark.timeout(600)
def test_one_cap_for_the_whole_evaluation_is_never_passed(server, tmp_path):
    scripted(server)
    server.price("good", 1, 2)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "shop.log").write_text(LOG)
    qset = tmp_path / "set.jsonl"
    qset.write_text("\n".join(json.dumps(q) for q in SET) + "\n")
    cap = 0.008
    cmd = [sys.executable, "-m", "app.main", "eval", str(qset), str(folder), "--api-base", server.url,
           "--pair", "openai/good:openai/good", "--price", "openai/good=1,2", "--max-cost-total", str(cap),
           "--max-iterations", "3", "--max-depth", "0", "--root-max-tokens", "1024", "--repeats", "6", "--parallel", "4", "--json", "--quiet"]
    proc = subprocess.run(cmd, env=cli_env(tmp_path), capture_output=True, text=True, timeout=500)
    assert proc.returncode == 0, proc.stderr
    assert server.billed_usd() <= cap
    db = sqlite3.connect(next((tmp_path / "home").rglob("*.db")))
    statuses = dict(db.execute("SELECT status, count(*) FROM runs GROUP BY status"))
    spent = db.execute("SELECT sum(cost_usd) FROM runs").fetchone()[0]
    assert spent <= cap and statuses.get("finished", 0) > 0 and statuses.get("capped", 0) > 0, statuses
