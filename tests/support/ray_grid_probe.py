"""Run INSIDE a network namespace that has only loopback (tests/integration/test_grid_ray.py
starts it with `unshare -n`): a scripted server and a Ray head on 127.0.0.1, then
`rlm-studio grid` locally and on Ray, and what the test checks, as one JSON object.

    unshare -n sh -c 'ip link set lo up && exec python -m tests.support.ray_grid_probe OUT_DIR'
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.support.grid_corpus import answer_cell, write_columns, write_corpus
from tests.support.openai_server import ScriptedOpenAI

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def env(home: Path) -> dict:
    return dict(os.environ, RLMSTUDIO_DESKTOP_HOME=str(home), PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
                LITELLM_LOCAL_MODEL_COST_MAP="True", RAY_USAGE_STATS_ENABLED="0")


def grid(server, out: Path, home: Path, folder: Path, cols: Path, *extra: str, wait: bool = True):
    cmd = [sys.executable, "-m", "app.main", "grid", str(cols), str(folder), "--out", str(out), "--root", "openai/m",
           "--sub", "openai/m", "--api-base", server.url, "--context-window", "100000", "--price", "openai/m=1,2",
           "--json", "--quiet", *extra]
    if not wait:
        return subprocess.Popen(cmd, env=env(home), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc = subprocess.run(cmd, env=env(home), cwd=ROOT, capture_output=True, text=True, timeout=600)
    return {"code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr[-3000:]}


def kill_a_task_worker(deadline: float) -> int | None:
    """SIGKILL one Ray worker process while it runs a cell's task."""
    while time.monotonic() < deadline:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"ray::run_cell_task" in cmdline:
                os.kill(int(pid), signal.SIGKILL)
                return int(pid)
        time.sleep(0.1)
    return None


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    result: dict = {}
    rng = random.Random(7)
    lock = threading.Lock()
    slow = {"on": False}

    def reply(request):
        with lock:
            pause = rng.uniform(0.0, 0.2)
        time.sleep(2.0 if slow["on"] else pause)
        return answer_cell(request)
    temp = Path(f"/tmp/rg{os.getpid()}")
    with ScriptedOpenAI() as server:
        server.script("m", fn=reply)
        server.price("m", 1, 2)
        docs, cols = out / "docs", out / "cols.jsonl"
        write_corpus(docs, 10)
        write_columns(cols)
        result["bad_address"] = grid(server, out / "x.csv", out / "h0", docs, cols, "--ray", "127.0.0.1:1")
        start = subprocess.run([str(BIN / "ray"), "start", "--head", "--num-cpus", "2", "--include-dashboard=false",
                                "--disable-usage-stats", "--node-ip-address", "127.0.0.1", "--port", "6390",
                                "--temp-dir", str(temp)], env=env(out / "h0"), capture_output=True, text=True,
                               timeout=300)
        result["ray_start"] = {"code": start.returncode, "stderr": start.stderr[-2000:]}
        try:
            address = "127.0.0.1:6390"
            result["local"] = grid(server, out / "local.csv", out / "h1", docs, cols)
            server.history.clear()
            result["ray"] = grid(server, out / "ray.csv", out / "h2", docs, cols, "--ray", address,
                                 "--concurrency", "4")
            result["ray_requests"] = len(server.history)
            result["ray_auth"] = sorted({r.headers.get("authorization") or "" for r in server.history})
            big = out / "big"
            write_corpus(big, 30)
            server.history.clear()
            cap = 0.004
            result["cap"] = cap
            result["capped"] = grid(server, out / "capped.csv", out / "h3", big, cols, "--ray", address,
                                    "--concurrency", "6", "--max-cost", str(cap))
            result["capped_billed"] = server.billed_usd()
            slow["on"] = True
            child = grid(server, out / "killed.csv", out / "h4", docs, cols, "--ray", address, "--concurrency", "2",
                         wait=False)
            time.sleep(1.0)
            result["killed_pid"] = kill_a_task_worker(time.monotonic() + 120)
            slow["on"] = False
            stdout, stderr = child.communicate(timeout=600)
            result["killed"] = {"code": child.returncode, "stdout": stdout, "stderr": stderr[-3000:]}
        finally:
            stop = subprocess.run([str(BIN / "ray"), "stop", "--force"], env=env(out / "h0"), capture_output=True,
                                  text=True, timeout=120)
            result["ray_stop"] = stop.returncode
        result["bare"] = bare_cluster(server, out, docs, cols, temp)
    (out / "result.json").write_text(json.dumps(result))


def bare_cluster(server, out: Path, docs: Path, cols: Path, temp: Path) -> dict:
    """A cluster whose nodes have Ray but not this project: its Python is a venv that sees
    this venv's packages as a plain path (so not the project's editable-install hook)."""
    import ray
    bare = out / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    site = next((bare / "lib").glob("python3*/site-packages"))
    (site / "packages_only.pth").write_text(str(Path(ray.__file__).resolve().parents[1]) + "\n")
    bare_env = {k: v for k, v in env(out / "h5").items() if k != "PYTHONPATH"}
    ray_cli = [str(bare / "bin" / "python"), "-c", "from ray.scripts.scripts import main; main()"]
    for _ in range(2):       # Ray waits 30 s (fixed) for its raylet: on a loaded machine, once more
        start = subprocess.run([*ray_cli, "start", "--head", "--num-cpus", "1", "--include-dashboard=false",
                                "--disable-usage-stats", "--node-ip-address", "127.0.0.1", "--port", "6391",
                                "--temp-dir", f"{temp}b"], env=bare_env, cwd=out, capture_output=True, text=True,
                               timeout=300)
        if start.returncode == 0 or "timed out during startup" not in start.stderr:
            break
        subprocess.run([*ray_cli, "stop", "--force"], env=bare_env, capture_output=True, timeout=120)
    try:
        cmd = [sys.executable, "-m", "app.main", "grid", str(cols), str(docs), "--out", str(out / "bare.csv"),
               "--root", "openai/m", "--sub", "openai/m", "--api-base", server.url, "--json", "--quiet",
               "--ray", "127.0.0.1:6391"]
        proc = subprocess.run(cmd, env=bare_env, cwd=out, capture_output=True, text=True, timeout=600)
        return {"start": start.returncode, "start_err": start.stderr[-1500:], "code": proc.returncode,
                "stderr": proc.stderr[-3000:]}
    finally:
        subprocess.run([*ray_cli, "stop", "--force"], env=bare_env, capture_output=True, timeout=120)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
