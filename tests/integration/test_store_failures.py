"""A record that could not be written is said so, with real faults: a database that
refuses the events (a trigger raising, as a full or broken disk does) and a real
file-size limit (RLIMIT_FSIZE) on the CLI process. The run's store_error reaches the
CLI's JSON and exit status; a failing viewer is logged once and told once."""

import json
import logging
import resource
import signal
import sqlite3
import subprocess
import sys

from app.runner import QuestionRun
from core.store import RunStore
from tests.integration.test_cli_ask import ask, make_folder
from tests.support.trust_runs import DOCS, KEY, code, config

FINAL = code("print('working')\nFINAL('done')")


def _refuse_cells(db_path):
    """A trigger that fails every write of a CellExecuted event, as a disk error would."""
    db = sqlite3.connect(db_path)
    db.execute("CREATE TRIGGER refuse_cells BEFORE INSERT ON events WHEN NEW.type = 'CellExecuted' "
               "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    db.commit()
    db.close()


async def test_a_writer_error_becomes_the_runs_store_error(openai_server):
    openai_server.script("root", replies=[FINAL])
    with RunStore.open() as store:
        _refuse_cells(store.path)
        run = QuestionRun("q", documents=DOCS, config=config(openai_server), store=store, key_for=lambda m: KEY)
        outcome = await run.execute()
    assert outcome.status == "finished" and outcome.answer == "done"
    assert outcome.store_error and "database or disk is full" in outcome.store_error


def test_the_cli_says_so_in_its_json_and_exits_1(openai_server, tmp_path):
    openai_server.script("root", replies=[FINAL])
    cmd, env = ask(openai_server, tmp_path, make_folder(tmp_path), "--json")
    db_path = _prepare(env)
    _refuse_cells(db_path)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    data = json.loads(proc.stdout)
    assert proc.returncode == 1, proc.stderr
    assert data["status"] == "finished" and data["answer"] == "done"
    assert "database or disk is full" in data["store_error"]
    assert "the run's record is incomplete" in proc.stderr


def test_a_file_size_limit_on_the_cli_process_is_a_store_error(openai_server, tmp_path):
    # A long reply: its events outgrow the limit. Not one character repeated: the engine stops
    # reading a reply that repeats itself (core/engine/reply_reader.py).
    big = "".join(str(i) for i in range(80_000))[:400_000]
    openai_server.script("root", replies=[code(f"# {big}\nFINAL('done')")], chunk_chars=20_000)
    cmd, env = ask(openai_server, tmp_path, make_folder(tmp_path), "--json", "--quiet")
    _prepare(env)
    limit = 256 * 1024

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, preexec_fn=limited)
    data = json.loads(proc.stdout)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert data["answer"] == "done" and data["store_error"], (data, proc.stderr[-3000:])


def _prepare(env):
    """Create the CLI's database (migrated) where the CLI will open it; returns its path."""
    code_ = "from core import paths\nfrom core.store import RunStore\nRunStore.open().close()\nprint(paths.database_path())"
    out = subprocess.run([sys.executable, "-c", code_], env=env, capture_output=True, text=True,
                         check=True, timeout=60).stdout.strip()
    return out


async def test_a_failing_viewer_is_logged_once_and_told_once(openai_server, caplog):
    openai_server.script("root", replies=[code("print(1)"), code("print(2)"), FINAL])
    seen = []

    def broken(event):
        raise RuntimeError("viewer bug")

    with RunStore.open() as store:
        run = QuestionRun("q", documents=DOCS, config=config(openai_server), store=store, key_for=lambda m: KEY,
                          sinks=[broken, seen.append])
        with caplog.at_level(logging.ERROR, logger="app.runner"):
            outcome = await run.execute()
    assert outcome.status == "finished" and outcome.store_error is None
    assert len([r for r in caplog.records if "viewer bug" in (r.exc_text or "") or "failed on" in r.message]) == 1
    told = [e for e in seen if e.type == "Notice" and "could not be passed to a viewer" in e.message]
    assert len(told) == 1
