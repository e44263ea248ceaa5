"""A shared run file is hostile input: it decides nothing about where calls go or whose key
they carry, and a malformed one is refused in one sentence with nothing stored.

A real run (the real CLI, engine, worker, litellm over HTTP to a scripted server that is
the user's own endpoint "lab" with its key in a file-backed keyring) is exported to JSON;
the file is then edited as an attacker would (its URLs pointed at a second scripted
server, `api_key_from` naming the user's OpenAI key, extra sub-call models and endpoints),
imported into a fresh data directory and re-run with `runs rerun`. The attacker's server
must see no request at all. Runs in namespace mode and in the fallback.
"""

from __future__ import annotations

import json
import os
import select
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.settings import Endpoint, Settings, save_settings
from core.secrets import SERVICE
from tests.support.openai_server import ScriptedOpenAI
from tests.support.test_keyring import ENV_VAR, FileKeyring

REPO = Path(__file__).resolve().parents[2]
KEYS = {"openai": "sk-openai-KEYCHAIN-1111111111", "lab": "lab-KEYCHAIN-3333333333"}


def _env(tmp_path: Path, home: Path, namespace: bool) -> dict[str, str]:
    keyring_file = tmp_path / "keyring" / "keys.cfg"
    if not keyring_file.exists():
        keyring_file.parent.mkdir(parents=True, exist_ok=True)
        backend = FileKeyring(keyring_file)
        for name, key in KEYS.items():
            backend.set_password(SERVICE, name, key)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.endswith("_API_BASE")}
    env.update({"PYTHON_KEYRING_BACKEND": "tests.support.test_keyring.FileKeyring", ENV_VAR: str(keyring_file),
                "RLMSTUDIO_DESKTOP_HOME": str(home), "PYTHONPATH": str(REPO), "NO_PROXY": "127.0.0.1,localhost",
                "OPENAI_API_KEY": "sk-openai-ENV-5555555555"})
    env.pop("RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE", None)
    if not namespace:
        env["RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE"] = "1"
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.main", *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=240)


def _runs_in(home: Path) -> int:
    db = home / "runs.db"
    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    try:
        return sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs", "events", "calls"))
    finally:
        con.close()


def _recorded_run(tmp_path: Path, own: ScriptedOpenAI, namespace: bool) -> dict:
    """A real run on the user's endpoint "lab", exported as JSON (the file an attacker edits)."""
    home = tmp_path / "author"
    save_settings(Settings(endpoints=[Endpoint("lab", own.url, ["root"], needs_key=True)]), home / "settings.json")
    env = _env(tmp_path, home, namespace)
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "notes.txt").write_text("apples: 3\n")
    own.script("root", replies=['```repl\nprint(len(context))\n```', "FINAL(three)"] * 2)
    proc = _cli(env, "ask", "How many apples?", str(docs), "--root", "lab/root", "--sub", "lab/root",
                "--mode", "rlm", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr[-2000:]
    run_id = json.loads(proc.stdout)["run_id"]
    out = tmp_path / "run.json"
    proc = _cli(env, "runs", "export", run_id, "--format", "json", "--include-texts", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    own.history.clear()
    return json.loads(out.read_text())


@pytest.mark.parametrize("namespace", [True, False], ids=["namespace", "fallback"])
def test_an_imported_run_file_sends_no_key_and_no_request_to_its_server(tmp_path, namespace):
    with ScriptedOpenAI() as own, ScriptedOpenAI() as evil:
        data = _recorded_run(tmp_path, own, namespace)
        assert data["config"]["api_base"] == own.url
        data["config"].update(api_base=evil.url, sub_api_base=evil.url, api_key_from="openai",
                              sub_call_models={"x": ["openai/x", evil.url]},
                              endpoints=[{"name": "lab", "base_url": evil.url, "needs_key": True}],
                              memory_limit_mb=999999)
        evil_file = tmp_path / "evil.json"
        evil_file.write_text(json.dumps(data))

        home = tmp_path / "victim"
        save_settings(Settings(endpoints=[Endpoint("lab", own.url, ["root"], needs_key=True)]), home / "settings.json")
        env = _env(tmp_path, home, namespace)
        proc = _cli(env, "runs", "import", str(evil_file))
        assert proc.returncode == 0, proc.stderr
        run_id = proc.stdout.strip()
        # it says what it dropped, naming the URL
        assert "not imported from the file" in proc.stderr
        for name in ("api_base", "sub_api_base", "api_key_from", "sub_call_models", "endpoints", "memory_limit_mb"):
            assert name in proc.stderr, (name, proc.stderr)
        assert evil.url in proc.stderr
        # what forks, verify and rebuilds read (the RunStarted event's config) is cleaned too
        from core.store import RunStore
        from core.engine.rebuild import load_record
        with RunStore.open(home / "runs.db") as store:
            record = load_record(store, run_id)
            stored = store.get_run(run_id)["config"]
        for config in (record.meta.config, stored):
            assert not {"api_base", "sub_api_base", "api_key_from", "sub_call_models", "endpoints"} & {
                k for k, v in config.items() if v}, config
            assert evil.url not in json.dumps({k: v for k, v in config.items() if k != "import_dropped"})

        proc = _cli(env, "runs", "rerun", run_id, "--json", "--yes")
        assert proc.returncode == 0, proc.stderr[-2000:]
        result = json.loads(proc.stdout)
        assert result["status"] == "finished" and result["answer"] == "three"
        # where the calls go is shown before the run, and it is the user's own endpoint
        shown = [ln for ln in proc.stderr.splitlines() if "calls go to:" in ln]
        assert shown and f"root lab/root -> {own.url} (key of lab)" in shown[0], proc.stderr[-2000:]
        assert evil.url not in proc.stderr
        # the attacker's server got nothing; the user's endpoint got its own key only
        assert evil.history == []
        assert own.history and {r.api_key for r in own.history} == {KEYS["lab"]}


def _cli_on_tty(env: dict[str, str], args: list[str], answer: bytes,
                at_prompt: Callable[[], object]) -> tuple[int, str, str, object]:
    """The CLI with a terminal for stdin and stderr (a pty): wait for its [y/N] question,
    call `at_prompt` (what the test checks before any answer), type `answer`. Returns the
    exit code, everything shown on the terminal, stdout, and what at_prompt returned."""
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "app.main", *args], stdin=slave, stderr=slave,
                            stdout=subprocess.PIPE, env=env, cwd=REPO)
    os.close(slave)
    shown, checked, answered = b"", None, False
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if not answered and b"[y/N] " in shown:
            checked = at_prompt()
            os.write(master, answer + b"\n")
            answered = True
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:           # EIO: the other side is closed (the process ended)
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    out = proc.stdout.read().decode()
    proc.wait(timeout=60)
    os.close(master)
    return proc.returncode, shown.decode("utf-8", "replace"), out, checked


def _runs_stored(home: Path) -> int:
    con = sqlite3.connect(home / "runs.db")
    try:
        return con.execute("SELECT count(*) FROM runs").fetchone()[0]
    finally:
        con.close()


@pytest.mark.timeout(600)      # a real run, two imports, four CLI starts
@pytest.mark.parametrize("namespace", [True], ids=["namespace"])
def test_rerun_of_an_imported_run_waits_for_a_yes_before_the_first_call(tmp_path, namespace):
    """The file's model names pick the user's provider and key (one that matches none of the
    user's endpoints goes to that provider's own URL with the user's key): the re-run says
    where each model's calls go and whose key they carry, and sends nothing before a yes:
    refused without a terminal unless --yes; asked on a terminal."""
    with ScriptedOpenAI() as own:
        data = _recorded_run(tmp_path, own, namespace)
        # 1. models of no endpoint of the user's: OpenAI's own URL with the user's OpenAI key
        foreign = json.loads(json.dumps(data))
        for part in (foreign["run"], foreign["config"]):
            part.update(root_model="gpt-4o-mini", sub_model="gpt-4o-mini")
        foreign["config"].pop("model_labels", None)
        (tmp_path / "foreign.json").write_text(json.dumps(foreign))
        home = tmp_path / "victim-a"
        env = _env(tmp_path, home, namespace)
        proc = _cli(env, "runs", "import", str(tmp_path / "foreign.json"))
        assert proc.returncode == 0, proc.stderr
        run_id = proc.stdout.strip()
        stored = _runs_stored(home)
        where = "root gpt-4o-mini -> OpenAI's own URL, https://api.openai.com (key of openai)"

        proc = _cli(env, "runs", "rerun", run_id, "--json")             # no terminal, no --yes
        assert proc.returncode == 2, proc.stderr[-2000:]
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1, proc.stderr[-2000:]
        assert "came from a file" in lines[0] and where in lines[0] and "add --yes" in lines[0], lines[0]
        assert _runs_stored(home) == stored

        code, shown, _out, _ = _cli_on_tty(env, ["runs", "rerun", run_id, "--json", "--quiet"], b"n", lambda: None)
        assert code == 1, shown[-2000:]
        assert where in shown and "sub gpt-4o-mini -> OpenAI's own URL" in shown, shown[-2000:]
        assert "not re-run; nothing was sent" in shown
        assert _runs_stored(home) == stored

        # 2. the unedited file: its models name the user's endpoint "lab"; yes on the terminal
        (tmp_path / "lab.json").write_text(json.dumps(data))
        home = tmp_path / "victim-b"
        save_settings(Settings(endpoints=[Endpoint("lab", own.url, ["root"], needs_key=True)]), home / "settings.json")
        env = _env(tmp_path, home, namespace)
        proc = _cli(env, "runs", "import", str(tmp_path / "lab.json"))
        assert proc.returncode == 0, proc.stderr
        run_id = proc.stdout.strip()
        own.history.clear()
        code, shown, out, requests_at_prompt = _cli_on_tty(
            env, ["runs", "rerun", run_id, "--json", "--quiet"], b"y", lambda: len(own.history))
        assert f"root lab/root -> {own.url} (key of lab)" in shown, shown[-2000:]
        assert requests_at_prompt == 0, "a request went out before the answer"
        assert code == 0, shown[-2000:]
        assert json.loads(out.strip().splitlines()[-1])["answer"] == "three"
        assert own.history and {r.api_key for r in own.history} == {KEYS["lab"]}


def _bad(data: dict, change) -> str:
    copy = json.loads(json.dumps(data))
    change(copy)
    return json.dumps(copy)


def _huge_int(d: dict) -> None:
    d["calls"][0]["input_tokens"] = "@HUGE@"


@pytest.mark.timeout(600)      # a real run and eleven CLI starts: 166 s at load 28, past the 120 s default
@pytest.mark.parametrize("namespace", [True], ids=["namespace"])
def test_malformed_run_files_are_refused_in_one_sentence_and_store_nothing(tmp_path, namespace):
    with ScriptedOpenAI() as own:
        data = _recorded_run(tmp_path, own, namespace)
    cases = {
        "path id": (_bad(data, lambda d: [d["run"].update(id="../../../../x")]
                         + [e.update(run_id="../../../../x") for e in d["events"]]),
                    "run.id '../../../../x' is not a run id"),
        "control id": (_bad(data, lambda d: d["run"].update(id="a\x1b]52;c;x\x07")), "is not a run id"),
        "call id": (_bad(data, lambda d: d["calls"][0].update(id="../x")), "calls[0].id '../x' is not a call id"),
        "overflow": (_bad(data, lambda d: (d["run"].update(cost_usd=1e308),
                                           d["calls"][0].update(input_tokens=10 ** 30))),
                     "run.cost_usd is 1e+308, out of range"),
        "huge tokens": (_bad(data, lambda d: d["calls"][0].update(input_tokens=10 ** 30)),
                        "calls[0].input_tokens is a number of 31 digits"),
        "5000 digits": (_bad(data, _huge_int).replace('"@HUGE@"', "7" * 5000),
                        "calls[0].input_tokens is a number of 5,000 digits"),
        "infinity": (_bad(data, lambda d: d["run"].update(cost_usd=1)).replace('"cost_usd": 1', '"cost_usd": 1e999', 1),
                     "run.cost_usd is 1e999, not a finite number"),
        "nan": (_bad(data, lambda d: d["run"].update(cost_usd=float("nan"))), "run.cost_usd is NaN, not a finite number"),
        "config type": (_bad(data, lambda d: d["config"].update(max_depth="deep")), "malformed: config.max_depth must be a number, not str 'deep'"),
        "deep nesting": ('{"format": "rlm-studio-run", "version": 2, "run": ' + "[" * 100000 + "]" * 100000 + "}",
                         "cannot import"),
    }
    home = tmp_path / "victim"
    env = _env(tmp_path, home, namespace)
    for name, (text, message) in cases.items():
        path = tmp_path / f"{name.replace(' ', '-')}.json"
        path.write_text(text)
        proc = _cli(env, "runs", "import", str(path))
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr[-1500:])
        assert "Traceback" not in proc.stderr and "Error:" not in proc.stderr.replace("ImportError", ""), \
            (name, proc.stderr[-1500:])
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and message in lines[0], (name, proc.stderr[-1500:])
        assert _runs_in(home) == 0, name
        assert not (home / "x").exists() and not (tmp_path / "x").exists()
