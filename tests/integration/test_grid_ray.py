"""The grid on a real local Ray cluster, started inside a network namespace that this test
makes (`unshare -n`, only loopback up: Ray binds and probes nothing outside it), then
stopped: the same answers as the local grid, the cap held across tasks under a randomized
schedule, a worker killed mid-cell and its cell run again and said, an address that does
not answer said in a sentence. Skipped only where Ray cannot be imported."""

import csv
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[2]


def cells(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


@pytest.mark.timeout(1200)
def test_grid_on_a_local_ray_cluster_inside_a_network_namespace(tmp_path):
    if shutil.which("unshare") is None:
        pytest.fail("unshare is needed to keep the cluster's traffic on loopback")
    out = tmp_path / "probe"
    proc = subprocess.run(["unshare", "-n", "sh", "-c",
                           f"ip link set lo up && exec {sys.executable} -m tests.support.ray_grid_probe {out}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1150)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((out / "result.json").read_text())
    assert result["ray_start"]["code"] == 0, result["ray_start"]
    assert result["ray_stop"] == 0

    bad = result["bad_address"]
    assert bad["code"] == 2 and "the Ray cluster at 127.0.0.1:1 does not answer" in bad["stderr"]

    assert result["local"]["code"] == 0 and result["ray"]["code"] == 0, result["ray"]["stderr"]
    assert cells(out / "ray.csv") == cells(out / "local.csv")            # identical answers
    ray_summary = json.loads(result["ray"]["stdout"])
    assert ray_summary["done"] == 30 and result["ray_requests"] == 30
    assert result["ray_auth"] == ["Bearer no-key"]                      # no key left this computer
    db = sqlite3.connect(next((out / "h2").rglob("*.db")))                # cells streamed into the local store
    assert db.execute("SELECT count(*) FROM grid_cells c JOIN runs r ON r.id = c.run_id "
                      "WHERE r.status = 'finished'").fetchone()[0] == 30
    assert db.execute("SELECT count(*) FROM events").fetchone()[0] > 30
    # through the grid's one EventWriter, as the local grid's cells: one owner for every run
    assert db.execute("SELECT count(DISTINCT owner_token) FROM runs").fetchone()[0] == 1
    assert db.execute("SELECT count(DISTINCT run_id) FROM sources").fetchone()[0] == 30

    capped = json.loads(result["capped"]["stdout"])
    assert result["capped_billed"] <= result["cap"] and capped["cost_usd"] <= result["cap"]
    assert capped["done"] > 0 and capped["limited"] > 0, result["capped"]["stderr"]

    assert result["killed_pid"] is not None
    killed = json.loads(result["killed"]["stdout"])
    assert killed["done"] == 30, result["killed"]["stderr"]
    db = sqlite3.connect(next((out / "h4").rglob("*.db")))
    notes = [e for (e,) in db.execute("SELECT error FROM grid_cells WHERE error IS NOT NULL")]
    assert any("its Ray worker was lost; the cell ran again" in n for n in notes), notes

    bare = result["bare"]                                                  # nodes without the project
    assert bare["start"] == 0, bare["start_err"]
    assert bare["code"] == 2, bare["stderr"]
    assert "the Ray cluster at 127.0.0.1:6391 cannot run RLM Studio" in bare["stderr"]
    assert "install it on every node: pip install 'rlm-studio[ray]'" in bare["stderr"]


def test_keys_stay_on_this_computer_unless_allowed_for_the_grid(server, tmp_path):
    """Before anything reaches a cluster: a model whose calls carry a key is refused on Ray
    unless --ray-send-key names its owner; allowed, the grid goes on to the cluster (here an
    address that does not answer, said in a sentence)."""
    import os
    from app.settings import Endpoint, Settings, save_settings
    from core.secrets import SERVICE
    from tests.support.grid_corpus import write_columns, write_corpus
    from tests.support.test_keyring import ENV_VAR, FileKeyring
    home = tmp_path / "home"
    home.mkdir()
    save_settings(Settings(endpoints=[Endpoint("lab", server.url, ["m"], needs_key=True)]), home / "settings.json")
    keyring_file = tmp_path / "keys.cfg"
    FileKeyring(keyring_file).set_password(SERVICE, "lab", "sk-lab-secret")
    env = dict(os.environ, RLMSTUDIO_DESKTOP_HOME=str(home), PYTHONPATH=str(ROOT), **{ENV_VAR: str(keyring_file)},
               PYTHON_KEYRING_BACKEND="tests.support.test_keyring.FileKeyring")
    write_corpus(tmp_path / "docs", 2)
    write_columns(tmp_path / "cols.jsonl")
    cmd = [sys.executable, "-m", "app.main", "grid", str(tmp_path / "cols.jsonl"), str(tmp_path / "docs"),
           "--out", str(tmp_path / "g.csv"), "--root", "lab/m", "--sub", "lab/m", "--ray", "127.0.0.1:1"]
    refused = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2
    assert ("lab/m needs the key of lab, which stays on this computer unless you allow it for this grid "
            "with --ray-send-key lab") in refused.stderr
    allowed = subprocess.run(cmd + ["--ray-send-key", "lab"], env=env, cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    assert allowed.returncode == 2 and "the Ray cluster at 127.0.0.1:1 does not answer" in allowed.stderr
    assert server.history == []
