"""`rlm-studio grid` as a real process against the scripted server: 50 documents x 3 typed
questions, each cell a stored run whose citations resolve; CSV and XLSX read back; a grid
cap that bites (never passed, the limited cells said); a kill -9 halfway and a resume that
runs only the rest; bad input said in a sentence."""

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from openpyxl import load_workbook

from tests.integration.test_cli_ask import cli_env
from tests.support.grid_corpus import COLUMNS, LINES, answer_cell, contract, expected, write_columns, write_corpus
from tests.support.openai_server import Reply

PRICE = ("--price", "openai/m=1,2")


def grid_cmd(server, tmp_path, out, *extra, folder=None):
    return [sys.executable, "-m", "app.main", "grid", str(tmp_path / "cols.jsonl"), str(folder or tmp_path / "docs"),
            "--out", str(out), "--root", "openai/m", "--sub", "openai/m", "--api-base", server.url,
            "--context-window", "100000", *PRICE, "--json", *extra]


def run(cmd, tmp_path, timeout=300):
    return subprocess.run(cmd, env=cli_env(tmp_path), capture_output=True, text=True, timeout=timeout)


def database(tmp_path):
    return sqlite3.connect(next((tmp_path / "home").rglob("*.db")))


@pytest.mark.timeout(600)
def test_fifty_documents_three_typed_questions_exported_with_citations(server, tmp_path):
    server.script("m", fn=answer_cell)
    server.price("m", 1, 2)
    write_corpus(tmp_path / "docs", 50)
    write_columns(tmp_path / "cols.jsonl")
    proc = run(grid_cmd(server, tmp_path, tmp_path / "grid.xlsx", "--max-cost", "1", "--concurrency", "6"), tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["rows"], summary["columns"], summary["done"], summary["failed"], summary["limited"]) == \
        (50, 3, 150, 0, 0)
    assert "about $" in proc.stderr and "50 documents x 3 questions" in proc.stderr
    assert len(server.history) == 150                          # one plain call per cell
    assert summary["cost_usd"] == pytest.approx(server.billed_usd())

    db = database(tmp_path)
    cells = db.execute("SELECT c.row, c.col, c.value_json, c.flag, c.citations_json, r.status, r.cost_usd, "
                       "c.cost_usd, r.answer, r.question FROM grid_cells c JOIN runs r ON r.id = c.run_id").fetchall()
    assert len(cells) == 150                                   # every cell is a stored run
    names = [c["name"] for c in COLUMNS]
    for row, col, value, flag, cites, status, run_cost, cell_cost, run_answer, question in cells:
        i, name = row, names[col]                              # rows are sorted by path: contract_000..049
        assert status == "finished" and run_cost == pytest.approx(cell_cost)
        want = expected(i)[name]
        if want is None:
            assert json.loads(value) is None and flag.startswith("unparseable date")
        else:
            assert json.loads(value) == want and flag is None
        [cite] = json.loads(cites)
        line = contract(i).splitlines()[LINES[name] - 1]
        assert cite["ok"] and cite["passage"] == line          # the citation resolves to its line
        assert f"contract_{i:03d}.txt" in question and COLUMNS[col]["question"] in question

    book = load_workbook(tmp_path / "grid.xlsx")
    answers = [[c.value for c in r] for r in book["Answers"].iter_rows()]
    assert answers[0] == ["document", "renewal", "cap", "auto"]
    assert answers[1] == ["contract_000.txt", "2025-01-01", "1000", "no"]
    assert answers[8][1].startswith("(flagged: unparseable date")              # contract_007: "early spring"
    assert book["Answers"]["C3"].comment.text.startswith("\u201cLiability cap: $2,000\u201d")
    citations = [[c.value for c in r] for r in book["Citations"].iter_rows()]
    assert citations[0][:3] == ["document", "question", "state"] and len(citations) == 151
    assert all(r[7] == "yes" for r in citations[1:])

    # The cells' runs are stored runs, kept out of History's list like an evaluation's.
    listed = run([sys.executable, "-m", "app.main", "runs", "list", "--json"], tmp_path, timeout=60)
    assert json.loads(listed.stdout) == []
    listed = run([sys.executable, "-m", "app.main", "runs", "list", "--json", "--evaluations", "--limit", "500"],
                 tmp_path, timeout=60)
    assert len(json.loads(listed.stdout)) == 150

    # The same grid again, to CSV: nothing runs again, the same answers are written.
    again = run(grid_cmd(server, tmp_path, tmp_path / "grid.csv"), tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["grid_id"] == summary["grid_id"] and len(server.history) == 150
    assert "150 of 150 cells already ended" in again.stderr
    with open(tmp_path / "grid.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows == [[v if v is not None else "" for v in r] for r in answers]


@pytest.mark.timeout(600)
def test_a_grid_cap_bites_and_is_never_passed(server, tmp_path):
    server.script("m", fn=answer_cell)
    server.price("m", 1, 2)
    write_corpus(tmp_path / "docs", 50)
    write_columns(tmp_path / "cols.jsonl")
    cap = 0.005
    proc = run(grid_cmd(server, tmp_path, tmp_path / "grid.csv", "--max-cost", str(cap), "--concurrency", "8"),
               tmp_path)
    assert proc.returncode == 4, proc.stderr
    summary = json.loads(proc.stdout)
    assert server.billed_usd() <= cap and summary["cost_usd"] <= cap
    assert summary["done"] > 0 and summary["limited"] > 0 and summary["done"] + summary["limited"] == 150
    assert "cells are limited by the grid's dollar cap" in proc.stderr
    db = database(tmp_path)
    errors = [e for (e,) in db.execute("SELECT error FROM grid_cells WHERE state = 'limited'")]
    assert errors and all("dollar cap" in e for e in errors)
    with open(tmp_path / "grid.csv", newline="") as f:
        text = f.read()
    assert text.count("(limited: ") == summary["limited"]

    # Retried under a larger cap: only the limited cells run, and the whole grid stays under it.
    before = len(server.history)
    again = run(grid_cmd(server, tmp_path, tmp_path / "grid.csv", "--max-cost", "1", "--retry"), tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["done"] == 150
    assert len(server.history) - before == summary["limited"]


@pytest.mark.timeout(600)
def test_kill_9_halfway_keeps_every_finished_cell_and_resume_runs_the_rest(server, tmp_path):
    server.script("m", fn=answer_cell, latency_s=0.3)
    write_corpus(tmp_path / "docs", 20)
    write_columns(tmp_path / "cols.jsonl")
    cmd = grid_cmd(server, tmp_path, tmp_path / "grid.csv", "--concurrency", "3")
    child = subprocess.Popen(cmd, env=cli_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        done = 0
        while time.monotonic() < deadline and done < 20:
            time.sleep(0.2)
            try:
                done = database(tmp_path).execute("SELECT count(*) FROM grid_cells WHERE state = 'done'").fetchone()[0]
            except (StopIteration, sqlite3.OperationalError):
                continue
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
        child.stdout.close()
        child.stderr.close()
    kept = dict(((r, c), run_id) for r, c, run_id in database(tmp_path).execute(
        "SELECT row, col, run_id FROM grid_cells WHERE state = 'done'"))
    assert 20 <= len(kept) < 60
    asked_before = len(server.history)
    server.script("m", fn=answer_cell, latency_s=0.05)     # the kill landed; the rest need not be slow

    proc = run(cmd, tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["done"] == 60
    assert f"{len(kept)} of 60 cells already ended" in proc.stderr
    after = dict(((r, c), run_id) for r, c, run_id in database(tmp_path).execute(
        "SELECT row, col, run_id FROM grid_cells"))
    assert all(after[cell] == run_id for cell, run_id in kept.items())      # finished cells untouched
    assert len(server.history) - asked_before == 60 - len(kept)              # only the rest ran
    statuses = dict(database(tmp_path).execute("SELECT status, count(*) FROM runs GROUP BY status"))
    assert statuses["finished"] == 60


def test_bad_columns_are_refused_with_the_line(server, tmp_path):
    write_corpus(tmp_path / "docs", 2)
    cases = [('{"question": "  "}', "cols.jsonl line 1: the question is empty"),
             ('{"question": "When?", "type": "colour"}', "cols.jsonl line 1: unknown type 'colour'"),
             ('{"question": "When?", "kind": "date"}', "cols.jsonl line 1: unknown field(s) kind"),
             ("What?\nWhat?", "two columns are named 'What?'")]
    for text, sentence in cases:
        (tmp_path / "cols.jsonl").write_text(text + "\n")
        proc = run(grid_cmd(server, tmp_path, tmp_path / "g.csv"), tmp_path, timeout=60)
        assert proc.returncode == 2 and sentence in proc.stderr, proc.stderr
    (tmp_path / "cols.jsonl").write_text("What?\n")
    proc = run(grid_cmd(server, tmp_path, tmp_path / "g.pdf"), tmp_path, timeout=60)
    assert proc.returncode == 2 and "--out must end in .csv, .xlsx or .html" in proc.stderr
    assert server.history == []


@pytest.mark.timeout(300)
def test_an_unreadable_document_fails_its_row_and_the_rest_of_the_grid_runs(server, tmp_path):
    server.script("m", fn=answer_cell)
    write_corpus(tmp_path / "docs", 3)
    (tmp_path / "docs" / "broken.pdf").write_bytes(b"%PDF-1.7 not really a pdf")
    write_columns(tmp_path / "cols.jsonl")
    proc = run(grid_cmd(server, tmp_path, tmp_path / "grid.csv"), tmp_path)
    assert proc.returncode == 4, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["rows"], summary["done"], summary["failed"]) == (4, 9, 3)
    assert "broken.pdf could not be read" in proc.stderr
    with open(tmp_path / "grid.csv", newline="") as f:
        rows = {r[0]: r[1:] for r in csv.reader(f)}
    assert all(v.startswith("(failed: broken.pdf could not be read") for v in rows["broken.pdf"])
    assert rows["contract_001.txt"] == ["2025-02-02", "2000", "yes"]


@pytest.mark.timeout(300)
def test_ctrl_c_stops_the_grid_keeps_the_ended_cells_and_writes_the_file(server, tmp_path):
    server.script("m", fn=answer_cell, latency_s=0.8)
    write_corpus(tmp_path / "docs", 8)
    write_columns(tmp_path / "cols.jsonl")
    child = subprocess.Popen(grid_cmd(server, tmp_path, tmp_path / "grid.csv", "--concurrency", "2"),
                             env=cli_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            if database(tmp_path).execute("SELECT count(*) FROM grid_cells WHERE state = 'done'").fetchone()[0]:
                break
        except (StopIteration, sqlite3.OperationalError):
            continue
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, stderr
    summary = json.loads(stdout)
    assert summary["status"] == "stopped" and summary["done"] >= 1 and summary["queued"] > 0
    assert summary["done"] + summary["queued"] == 24
    states = dict(database(tmp_path).execute("SELECT state, count(*) FROM grid_cells GROUP BY state"))
    assert "running" not in states and states["done"] == summary["done"]
    with open(tmp_path / "grid.csv", newline="") as f:
        assert len(list(csv.reader(f))) == 9                   # written with what there is


@pytest.mark.timeout(300)
def test_a_new_column_or_new_rows_run_alone(server, tmp_path):
    server.script("m", fn=answer_cell)
    write_corpus(tmp_path / "docs", 6)
    write_columns(tmp_path / "cols.jsonl", COLUMNS[:2])
    first = run(grid_cmd(server, tmp_path, tmp_path / "a.csv"), tmp_path)
    assert first.returncode == 0, first.stderr and len(server.history) == 12
    write_columns(tmp_path / "cols.jsonl", COLUMNS)                       # one more column
    second = run(grid_cmd(server, tmp_path, tmp_path / "b.csv"), tmp_path)
    assert second.returncode == 0, second.stderr
    assert len(server.history) == 12 + 6                                  # only the new column's cells
    assert json.loads(second.stdout)["grid_id"] != json.loads(first.stdout)["grid_id"]
    for i in (6, 7):                                                      # two more documents
        (tmp_path / "docs" / f"contract_{i:03d}.txt").write_text(contract(i))
    third = run(grid_cmd(server, tmp_path, tmp_path / "c.csv"), tmp_path)
    assert third.returncode == 0, third.stderr
    assert len(server.history) == 18 + 2 * 3                              # only the new rows' cells
    with open(tmp_path / "c.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["document", "renewal", "cap", "auto"] and len(rows) == 9
    assert rows[2] == ["contract_001.txt", "2025-02-02", "2000", "yes"]
    assert rows[8] == ["contract_007.txt", "(flagged: unparseable date: 'early spring')", "8000", "yes"]
    taken = database(tmp_path).execute("SELECT count(*) FROM grid_cells c JOIN grids g ON g.id = c.grid_id "
                                       "WHERE c.error LIKE 'answer taken from grid %'").fetchone()[0]
    assert taken == 12 + 18


@pytest.mark.timeout(300)
def test_a_column_runs_again_with_other_models(server, tmp_path):
    server.script("m", fn=answer_cell)
    server.script("other", fn=lambda req: Reply("2030-01-01 [doc:x:line 2]", usage=(100, 10)))
    write_corpus(tmp_path / "docs", 3)
    write_columns(tmp_path / "cols.jsonl")
    first = run(grid_cmd(server, tmp_path, tmp_path / "a.csv"), tmp_path)
    assert first.returncode == 0, first.stderr
    cmd = grid_cmd(server, tmp_path, tmp_path / "b.csv", "--rerun-column", "renewal")
    cmd[cmd.index("--root") + 1] = cmd[cmd.index("--sub") + 1] = "openai/other"
    again = run(cmd, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "running the 3 cells of column 'renewal' again" in again.stderr
    assert len(server.requests_for("other")) == 3 and len(server.requests_for("m")) == 9
    with open(tmp_path / "b.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert [r[1] for r in rows[1:]] == ["2030-01-01"] * 3 and rows[2][2:] == ["2000", "yes"]
    bad = run(grid_cmd(server, tmp_path, tmp_path / "c.csv", "--rerun-column", "nope"), tmp_path, timeout=60)
    assert bad.returncode == 2 and "--rerun-column 'nope': no such column (the columns are renewal, cap, auto)" \
        in bad.stderr
