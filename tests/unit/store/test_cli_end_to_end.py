"""The store under the real CLI: `ask` against the scripted OpenAI-compatible server on
127.0.0.1, then `runs rerun` from the stored documents, and a real `ask` killed with SIGKILL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.exports import export
from core.store import RunStore

ROOT = Path(__file__).resolve().parents[3]
KEY = "sk-cli-e2e-SENTINEL-7d1e"
CODE = "Working on it.\n```repl\npaths = [d['path'] for d in documents]\nFINAL(llm_query(', '.join(paths)))\n```"


def cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "app.main", *argv]


def env_for(home: Path) -> dict[str, str]:
    return {**os.environ, "RLMSTUDIO_DESKTOP_HOME": str(home), "OPENAI_API_KEY": KEY,
            "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}


def make_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "one.txt").write_text("apples: 3\n")
    (folder / "sub" / "two.md").write_text("# pears\npears: 4\n")
    return folder


def test_rerun_asks_again_over_the_stored_texts(server, tmp_path: Path):
    home = tmp_path / "home"
    server.script("sub", fn=lambda r: r.prompt.upper())
    server.script("root", replies=[CODE])
    server.script("root2", replies=[CODE])
    folder = make_folder(tmp_path)
    proc = subprocess.run(cli("ask", "Which files?", str(folder), "--root", "openai/root", "--sub", "openai/sub",
                              "--api-base", server.url, "--api-key-from", "openai", "--json", "--quiet"),
                          cwd=ROOT, env=env_for(home), capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    first = json.loads(proc.stdout)
    assert first["answer"] == "ONE.TXT, SUB/TWO.MD"
    shutil.rmtree(folder)                          # the re-run must not need the files

    proc = subprocess.run(cli("runs", "rerun", first["run_id"][:10], "--root", "openai/root2", "--json"),
                          cwd=ROOT, env=env_for(home), capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    second = json.loads(proc.stdout)
    assert second["status"] == "finished" and second["answer"] == "ONE.TXT, SUB/TWO.MD"
    assert second["parent_run_id"] == first["run_id"] != second["run_id"]

    store = RunStore.open(home / "runs.db")
    try:
        a, b = store.get_run(first["run_id"]), store.get_run(second["run_id"])
        assert (a["status"], b["status"]) == ("finished", "finished")
        assert b["question"] == "Which files?" and b["root_model"] == "openai/root2"
        assert b["parent_run_id"] == a["id"]
        assert [s["text_sha256"] for s in store.sources(b["id"])] == [s["text_sha256"] for s in store.sources(a["id"])]
        assert store.db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 2        # shared, not copied
        sub = [c for c in store.calls(b["id"]) if c["kind"] == "sub"]
        assert [(c["prompt"], c["response"]) for c in sub] == [("one.txt, sub/two.md", "ONE.TXT, SUB/TWO.MD")]
        for fmt in ("json", "md", "html"):
            export(store, b["id"], fmt, tmp_path / f"b.{fmt}", include_texts=True)
    finally:
        store.close()
    # the key went to the server, and nowhere into the database or the exports
    assert server.requests_for("root2")[0].headers.get("Authorization") == f"Bearer {KEY}"
    for path in [*home.glob("runs.db*"), *tmp_path.glob("b.*")]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL is POSIX")
def test_a_cli_run_killed_with_sigkill_is_interrupted_and_keeps_its_events(server, tmp_path: Path):
    home = tmp_path / "home"
    server.script("sub", fn=lambda r: "slow", latency_s=60)
    server.script("root", replies=[CODE])
    child = subprocess.Popen(cli("ask", "Which files?", str(make_folder(tmp_path)), "--root", "openai/root",
                                 "--sub", "openai/sub", "--api-base", server.url, "--quiet"),
                             cwd=ROOT, env=env_for(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            if _sub_call_running(home / "runs.db"):
                break
            time.sleep(0.2)
        assert child.poll() is None, child.stderr.read().decode()
        assert _sub_call_running(home / "runs.db"), "the run never reached its sub-call"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        child.stderr.close()
    store = RunStore.open(home / "runs.db")
    try:
        [run] = store.list_runs()
        assert run["status"] == "interrupted"
        types = [e.type for e in store.iter_events(run["id"])]
        assert types[0] == "RunStarted" and "RootReplied" in types and "CellStarted" in types
        assert "SubCallStarted" in types and not {"RunFinished", "RunFailed"} & set(types)
        assert [(c["kind"], c["status"]) for c in store.calls(run["id"])] == [("root", "ok"), ("sub", "interrupted")]
        assert len(store.documents(run["id"])) == 2
    finally:
        store.close()


def _sub_call_running(db: Path) -> bool:
    if not db.exists():
        return False
    conn = sqlite3.connect(db, timeout=5)
    try:
        return conn.execute("SELECT count(*) FROM calls WHERE kind = 'sub' AND status = 'running'").fetchone()[0] > 0
    except sqlite3.OperationalError:         # tables not there yet
        return False
    finally:
        conn.close()
