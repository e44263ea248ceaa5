"""`rlm-studio ask` as a real process against the scripted server."""

import json
import os
import signal
import subprocess
import sys
import time

from tests.integration.engine_helpers import code


def cli_env(tmp_path):
    env = dict(os.environ)
    env.update(RLMSTUDIO_DESKTOP_HOME=str(tmp_path / "home"), OPENAI_API_KEY="sk-cli-test",
               PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    return env


def ask(server, tmp_path, folder, *extra, question="Answer from the files."):
    # Neither a what- nor a how-many question: the scripted answers (words, counts) are not sent
    # back by the answer-kind check (core/engine/answer_kind.py), which has its own tests.
    cmd = [sys.executable, "-m", "app.main", "ask", question, str(folder), "--root", "openai/root",
           "--sub", "openai/sub", "--api-base", server.url, *extra]
    return cmd, cli_env(tmp_path)


def make_folder(tmp_path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "one.txt").write_text("apples: 3\n")
    (folder / "sub" / "two.md").write_text("# pears\npears: 4\n")
    return folder


def test_ask_json_prints_one_object(server, tmp_path):
    server.script("sub", fn=lambda r: r.prompt.upper())
    server.script("root", replies=[code(
        "paths = [d['path'] for d in documents]\nout = llm_query_batched(paths)\n"
        "FINAL(', '.join(out))")])
    cmd, env = ask(server, tmp_path, make_folder(tmp_path), "--json", "--api-key-from", "openai")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "finished"
    assert data["answer"] == "ONE.TXT, SUB/TWO.MD"
    for key in ("run_id", "error", "cost_usd", "input_tokens", "output_tokens", "iterations",
                "sub_calls", "syntax_errors", "started_at", "finished_at", "version"):
        assert key in data
    assert data["sub_calls"] == 2 and data["iterations"] == 1
    assert data["started_at"] <= data["finished_at"]
    assert "turn 1" in proc.stderr and "cell 1" in proc.stderr
    assert server.requests_for("root")[0].headers.get("Authorization") == "Bearer sk-cli-test"


def test_ask_plain_prints_the_answer_on_stdout(server, tmp_path):
    server.script("root", replies=["FINAL(seven)"])
    cmd, env = ask(server, tmp_path, make_folder(tmp_path))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "seven"


def test_unknown_price_with_cap_is_refused_with_advice(server, tmp_path):
    cmd, env = ask(server, tmp_path, make_folder(tmp_path), "--max-cost", "1", "--json")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "--price openai/root=" in proc.stderr
    assert json.loads(proc.stdout)["status"] == "failed"
    assert server.history == []


def test_prices_from_the_command_line(server, tmp_path):
    server.script("root", replies=["FINAL(ok)"])
    cmd, env = ask(server, tmp_path, make_folder(tmp_path), "--max-cost", "1", "--json",
                   "--price", "openai/root=1,2", "--price", "openai/sub=0,0")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    data = json.loads(proc.stdout)
    assert data["status"] == "finished" and 0 < data["cost_usd"] < 0.01


def test_ctrl_c_cancels_cleanly_and_still_prints_json(server, tmp_path):
    server.script("sub", fn=lambda r: "slow", latency_s=60)
    server.script("root", replies=[code("out = llm_query_batched(['a', 'b'])")])
    cmd, env = ask(server, tmp_path, make_folder(tmp_path), "--json")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and len(server.requests_for("sub")) < 2:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    data = json.loads(out)
    assert data["status"] == "cancelled" and data["sub_calls"] == 2


def test_version_and_help():
    out = subprocess.run([sys.executable, "-m", "app.main", "--version"], capture_output=True, text=True)
    from app.version import __version__
    assert out.stdout.strip() == f"rlm-studio {__version__}"
    helptext = subprocess.run([sys.executable, "-m", "app.main", "ask", "--help"], capture_output=True,
                              text=True).stdout
    assert "--max-cost" in helptext and "--price" in helptext


def test_mode_auto_with_a_known_window_sends_small_documents_as_one_plain_call(server, tmp_path):
    server.script("root", replies=["3 apples and 4 pears."])
    folder = make_folder(tmp_path)
    cmd, env = ask(server, tmp_path, folder, "--json", "--context-window", "8000",
                   "--root-max-tokens", "500", question="How many fruits?")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == "3 apples and 4 pears." and data["mode"] == "direct"
    assert "One plain call: the documents (" in proc.stderr and "8k-token window" in proc.stderr
    assert "pears: 4" in server.requests_for("root")[0].messages[-1]["content"]
    # --mode rlm: the same question as an RLM
    server.script("root", replies=[code("FINAL('seven')")])
    cmd, env = ask(server, tmp_path, folder, "--json", "--context-window", "8000", "--mode", "rlm")
    data = json.loads(subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120).stdout)
    assert data["answer"] == "seven" and data["mode"] == "rlm"
