"""A price belongs to a model on its endpoint: two endpoints serving the same model names at
the same URL, one Paid and priced (`lab`), one Free (`here`), each billed by its own, through
the real CLI process, the settings file and the scripted server on 127.0.0.1."""

import json
import subprocess
import sys

from tests.integration.engine_helpers import code
from tests.integration.test_cli_ask import cli_env, make_folder

FAN_OUT = code("out = llm_query_batched(['a ' * 200, 'b ' * 200, 'c ' * 200, 'd ' * 200])\n"
               "FINAL(' '.join(out))")


def write_settings(tmp_path, server, **extra):
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    settings = {
        "endpoints": [
            {"name": "lab", "base_url": server.url, "models": ["root", "sub"], "runs_here": False},
            {"name": "here", "base_url": server.url, "models": ["root", "sub"]},    # free: loopback
        ],
        "models": {"lab/root": {"price": [1.0, 2.0]}, "lab/sub": {"price": [0.5, 1.5]}},
        **extra,
    }
    (home / "settings.json").write_text(json.dumps(settings))
    return home


def ask(tmp_path, folder, *args):
    cmd = [sys.executable, "-m", "app.main", "ask", "How many files?", str(folder), "--json", *args]
    proc = subprocess.run(cmd, env=cli_env(tmp_path), capture_output=True, text=True, timeout=180)
    return proc, json.loads(proc.stdout or "{}")


def script(server):
    server.script("root", fn=lambda r: FAN_OUT)
    server.script("sub", fn=lambda r: "ok")
    server.price("root", 1.0, 2.0)      # what lab charges, by the server's own count
    server.price("sub", 0.5, 1.5)


def prepared(server, tmp_path):
    """The scripted models, the two endpoints in the settings file, and the documents."""
    script(server)
    write_settings(tmp_path, server)
    return make_folder(tmp_path)


def test_each_endpoint_bills_its_own_runs_and_the_cap_bites_on_the_paid_one(server, tmp_path):
    folder = prepared(server, tmp_path)

    proc, paid = ask(tmp_path, folder, "--root", "lab/root", "--sub", "lab/sub", "--max-cost", "1")
    assert proc.returncode == 0, proc.stderr
    billed = server.billed_usd()
    print(f"\nlab (paid, priced): ${paid['cost_usd']:.6f}; the server billed ${billed:.6f}")
    assert paid["status"] == "finished" and paid["sub_calls"] == 4
    assert abs(paid["cost_usd"] - billed) < 1e-9 and paid["cost_usd"] > 0

    first = len(server.history)
    proc, free = ask(tmp_path, folder, "--root", "here/root", "--sub", "here/sub", "--max-cost", "0.0001")
    assert proc.returncode == 0, proc.stderr
    print(f"here (free, same URL and names): ${free['cost_usd']:.6f} under a $0.0001 cap, "
          f"{free['sub_calls']} sub-calls")
    assert free["status"] == "finished" and free["cost_usd"] == 0.0 and free["sub_calls"] == 4
    assert len(server.history) > first

    # the same run on the paid endpoint with a cap that bites: never over, and said
    proc, capped = ask(tmp_path, folder, "--root", "lab/root", "--sub", "lab/sub", "--max-cost", "0.0095",
                       "--root-max-tokens", "1000", "--sub-max-tokens", "4000")
    print(f"lab under a $0.0095 cap: ${capped['cost_usd']:.6f}, {capped['status']}, {capped['limited_summary']}")
    assert 0 < capped["cost_usd"] <= 0.0095
    assert capped["limited_summary"]

    # models stats: one row per model as picked, each with what its own endpoint billed
    stats = subprocess.run([sys.executable, "-m", "app.main", "models", "stats", "--json"], env=cli_env(tmp_path),
                           capture_output=True, text=True, timeout=60)
    roots = {m["model"]: m for m in json.loads(stats.stdout)["roots"]}
    subs = {m["model"]: m for m in json.loads(stats.stdout)["subs"]}
    assert roots["lab/root"]["runs"] == 2 and roots["here/root"]["runs"] == 1
    assert roots["here/root"]["cost_usd"] == 0.0 and subs["here/sub"]["cost_usd"] == 0.0
    assert roots["lab/root"]["cost_usd"] == round(paid["cost_usd"] + capped["cost_usd"], 8)


def test_the_stored_config_keeps_prices_and_specs_by_the_picked_name(server, tmp_path):
    folder = prepared(server, tmp_path)
    proc, paid = ask(tmp_path, folder, "--root", "lab/root", "--sub", "here/sub", "--max-cost", "1")
    assert proc.returncode == 0, proc.stderr
    show = subprocess.run([sys.executable, "-m", "app.main", "runs", "export", paid["run_id"], "--format", "json",
                           "-o", str(tmp_path / "run.json")], env=cli_env(tmp_path), capture_output=True, text=True,
                          timeout=60)
    assert show.returncode == 0, show.stderr
    config = json.loads((tmp_path / "run.json").read_text())["config"]
    assert config["prices"] == {"lab/root": [1.0, 2.0], "here/sub": [0.0, 0.0]}
    specs = {s["name"]: s for s in config["specs"]}
    assert specs["lab/root"]["price_from"] == "yours" and specs["lab/root"]["endpoint_free"] is False
    assert specs["here/sub"]["price_from"] == "free endpoint" and specs["here/sub"]["endpoint"] == "here"
    md = subprocess.run([sys.executable, "-m", "app.main", "runs", "export", paid["run_id"], "-o",
                         str(tmp_path / "run.md")], env=cli_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert md.returncode == 0, md.stderr
    text = (tmp_path / "run.md").read_text()
    assert "- price of lab/root: $1 in · $2 out per M tokens (yours)" in text
    assert "- price of here/sub: free (free endpoint)" in text
    # the root was billed at lab's price, the sub-calls at here's ($0)
    root_usd = server.billed_usd(server.requests_for("root"))
    assert abs(paid["cost_usd"] - root_usd) < 1e-9 and root_usd > 0


def test_a_paid_endpoint_sharing_a_url_with_a_free_one_is_refused_under_a_cap(server, tmp_path):
    script(server)
    home = write_settings(tmp_path, server)
    data = json.loads((home / "settings.json").read_text())
    data["endpoints"].insert(0, {"name": "gw", "base_url": server.url, "models": ["root"], "runs_here": False})
    data["endpoints"].insert(0, data["endpoints"].pop(2))     # the free one first at that URL
    (home / "settings.json").write_text(json.dumps(data))
    proc, out = ask(tmp_path, make_folder(tmp_path), "--root", "gw/root", "--sub", "gw/root", "--max-cost", "0.05")
    assert proc.returncode == 2, proc.stderr
    assert "No price is known for model 'gw/root'" in proc.stderr
    assert server.history == []
