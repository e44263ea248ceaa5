"""A fork of an old run is billed at the prices in force when it runs, stores them, and says
where it came from (transcript, --json, exports, the stored record), through the real CLI,
the settings file and the scripted server on 127.0.0.1."""

import json
import subprocess
import sys

from tests.integration.engine_helpers import code
from tests.integration.test_cli_ask import cli_env, make_folder


def _cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "app.main", *args], env=cli_env(tmp_path), capture_output=True,
                          text=True, timeout=180)


def test_a_fork_of_an_old_run_is_billed_at_todays_prices_and_marked(server, tmp_path):
    server.script("root", fn=lambda r: code("n = len(documents)\nprint(n)") if len(r.messages) < 4
                  else "FINAL(two files)")
    server.price("root", 1.0, 2.0)
    home = tmp_path / "home"
    home.mkdir()
    settings = {"endpoints": [{"name": "lab", "base_url": server.url, "models": ["root"]}]}   # Free at first
    (home / "settings.json").write_text(json.dumps(settings))
    folder = make_folder(tmp_path)
    parent = _cli(tmp_path, "ask", "How many files?", str(folder), "--root", "lab/root", "--sub", "lab/root",
                  "--mode", "rlm", "--json")
    assert parent.returncode == 0, parent.stderr
    old = json.loads(parent.stdout)
    assert old["cost_usd"] == 0.0 and old["iterations"] == 2

    # later the user learns lab is a paid gateway and prices its model
    settings["endpoints"][0]["runs_here"] = False
    settings["models"] = {"lab/root": {"price": [1.0, 2.0]}}
    (home / "settings.json").write_text(json.dumps(settings))
    before = len(server.history)
    fork = _cli(tmp_path, "runs", "fork", old["run_id"], "--turn", "2", "--max-cost", "1", "--json")
    assert fork.returncode == 0, fork.stderr
    out = json.loads(fork.stdout)
    billed = server.billed_usd(server.history[before:])
    print(f"\nparent (lab Free then): ${old['cost_usd']:.6f}; fork at today's $1/$2: ${out['cost_usd']:.6f} "
          f"(server billed ${billed:.6f})")
    assert out["status"] == "finished" and out["cost_usd"] > 0 and abs(out["cost_usd"] - billed) < 1e-9
    line = "Forked from turn 2 of How many files?"
    assert out["forked_from"]["run_id"] == old["run_id"] and out["forked_from"]["turn"] == 2
    assert out["forked_from"]["line"].startswith(line)
    assert out["forked_from"]["line"].endswith("; turn 1 rebuilt from the record.")
    shown = _cli(tmp_path, "runs", "show", out["run_id"][:12])             # the transcript says it at the top
    assert shown.returncode == 0, shown.stderr
    assert f"fork of {old['run_id']}, from its turn 2" in shown.stdout
    assert line in "\n".join(shown.stdout.splitlines()[:6])

    exported = _cli(tmp_path, "runs", "export", out["run_id"], "-o", str(tmp_path / "fork.md"))
    assert exported.returncode == 0, exported.stderr
    text = (tmp_path / "fork.md").read_text()
    assert line in text and old["run_id"] in text
    assert "- price of lab/root: $1 in · $2 out per M tokens (yours)" in text
    data = json.loads(_cli(tmp_path, "runs", "list", "--json").stdout)
    row = next(r for r in data if r["id"] == out["run_id"])
    assert row["parent_run_id"] == old["run_id"] and row["fork_turn"] == 2
