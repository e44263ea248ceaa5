"""`rlm-studio runs ...` in-process (the parser and handlers of app/cli_runs.py)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app import cli_runs
from core.store import RunStore
from tests.support.record_runs import recorded_run

from .conftest import write_events
from .test_sources import docs

ROOT = Path(__file__).resolve().parents[3]


def runs(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="rlm-studio")
    cli_runs.register(parser.add_subparsers())
    args = parser.parse_args(["runs", *argv])
    return args.handler(args)


# Recordings of real engine runs (tests/support/record_runs.py): a finished two-turn run with
# a syntax error, and a capped one.
SALES = recorded_run("sales", "abc123def", t0=1_780_000_000.0)
SUPPLIER = recorded_run("supplier", "abd999xyz", t0=1_780_000_100.0)
QUESTION, ANSWER = SALES[0].question, SALES[-1].answer


@pytest.fixture
def two_runs(store: RunStore) -> RunStore:
    write_events(store, SALES + SUPPLIER)
    store.save_sources("abc123def", docs(), [])
    return store


def test_list_json_and_table(two_runs, capsys):
    assert runs("list", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == ["abd999xyz", "abc123def"]
    for key in ("id", "status", "question", "created_at", "cost_usd"):
        assert key in rows[0]
    assert runs("list", "--json", "--search", "sales") == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == ["abc123def"]
    assert runs("list", "--json", "--status", "capped", "--limit", "5") == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == ["abd999xyz"]
    assert runs("list") == 0
    table = capsys.readouterr().out
    assert "abc123def" in table and QUESTION in table and "capped" in table


def test_list_hides_the_runs_of_evaluations_unless_asked(two_runs, capsys):
    # a run that answered a question of an evaluation (runs.evaluation_id, migration m006)
    two_runs.db.execute("UPDATE runs SET evaluation_id = 'ev1' WHERE id = 'abd999xyz'")
    two_runs.db.conn.commit()
    assert runs("list", "--json") == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == ["abc123def"]
    assert runs("list", "--json", "--evaluations") == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == ["abd999xyz", "abc123def"]
    assert runs("list", "--status", "capped") == 0
    out = capsys.readouterr()
    assert "abd999xyz" not in out.out and "add --evaluations" in out.err
    assert runs("list", "--status", "capped", "--evaluations") == 0
    assert "abd999xyz" in capsys.readouterr().out


def test_show_replays_the_transcript(two_runs, capsys):
    assert runs("show", "abc1") == 0
    out = capsys.readouterr().out
    assert "run abc123def  finished" in out
    assert "turn 1" in out and "turn 2" in out and "cell 1" in out and "syntax error" in out
    assert out.rstrip().endswith(ANSWER)
    assert runs("show", "abc1", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "rlm-studio-run" and data["run"]["id"] == "abc123def"


def test_unknown_and_ambiguous_ids(two_runs, capsys):
    assert runs("show", "zzz") == 2
    assert "no run with id 'zzz'" in capsys.readouterr().err
    assert runs("delete", "ab") == 2
    assert "several runs" in capsys.readouterr().err
    assert two_runs.get_run("abc123def") is not None


def test_export_import_delete(two_runs, tmp_path, capsys, monkeypatch):
    for name in ("r.json", "r.md", "r.html"):
        assert runs("export", "abc1", "-o", str(tmp_path / name), "--include-texts") == 0
        assert (tmp_path / name).stat().st_size > 1000
    assert runs("export", "abc1", "-o", str(tmp_path / "r.txt")) == 2
    assert "--format" in capsys.readouterr().err
    assert runs("export", "abc1", "--format", "md", "-o", str(tmp_path / "r.txt")) == 0
    text = (tmp_path / "r.txt").read_text()
    from core.run_names import run_title
    title = run_title(two_runs.get_run("abc123def"))                 # named by question and time
    assert text.startswith(f"# {title}\n") and "RLM Studio run `abc123def" in text
    assert f"<h1>{title}</h1>" in (tmp_path / "r.html").read_text()

    assert runs("delete", "abc1") == 0
    assert two_runs.get_run("abc123def") is None
    capsys.readouterr()
    assert runs("import", str(tmp_path / "r.json")) == 0
    assert capsys.readouterr().out.strip() == "abc123def"
    assert [d.text for d in two_runs.documents("abc123def")] == [d.text for d in docs()]

    (tmp_path / "bad.json").write_text('{"format": "rlm-studio-run", "version": 7}')
    assert runs("import", str(tmp_path / "bad.json")) == 2
    assert "newer RLM Studio" in capsys.readouterr().err


def test_rerun_inputs_come_from_the_store(two_runs):
    parser = argparse.ArgumentParser()
    cli_runs.register(parser.add_subparsers())
    args = parser.parse_args(["runs", "rerun", "abc", "--root", "openai/other", "--max-cost", "0.5"])
    question, documents, skipped, config = cli_runs.rerun_inputs(two_runs, "abc123def", args)
    assert question == QUESTION
    assert [d.text for d in documents] == [d.text for d in docs()]
    assert (config.root_model, config.sub_model, config.max_cost_usd, config.max_depth) == (
        "openai/other", SALES[0].sub_model, 0.5, SALES[0].config["max_depth"])


def test_the_real_cli_lists_runs_as_json(two_runs, home):
    env = {**os.environ, "RLMSTUDIO_DESKTOP_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "app.main", "runs", "list", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [r["id"] for r in json.loads(proc.stdout)] == ["abd999xyz", "abc123def"]
