"""`rlm-studio eval` as a real process against the scripted server: right and wrong
answers, a syntax error, repeats added to the same evaluation, the direct call beside
the RLM (and refused when the documents do not fit), numbers checked in the scorecard."""

import json
import sqlite3
import subprocess
import sys
import threading

import pytest

from tests.integration.test_cli_ask import cli_env

LOG = ("09:40 INFO payments ok\n09:42 ERROR payments failed: certificate has expired\n"
       "09:43 ERROR payments failed: certificate has expired\n10:00 ERROR mailer timeout\n")
SET = [
    {"id": "errors", "question": "How many ERROR lines?", "expected": 3, "checker": "number"},
    {"id": "first", "question": "Which service failed first?", "expected": "payments", "checker": "exact"},
    {"id": "cause", "question": "What was the cause?", "expected": "certificate", "checker": "contains"},
    {"id": "when", "question": "When did it start?", "expected": r"09:4\d", "checker": "regex"},
]
GOOD = {"errors": '```repl\nFINAL(str(context.count("ERROR")))\n```',
        "first": 'FINAL("Payments.")',
        "cause": "```repl\nFINAL('The certificate had expired')\n```"}
USAGE = (100, 10)            # tokens per call: at 1,2 USD per million = 0.00012 USD per call


def which(req):
    text = json.dumps(req.messages)
    return next(q["id"] for q in SET if q["question"] in text)


def scripted(server):
    lock = threading.Lock()
    seen = {"when": 0}

    def good(req):
        from tests.support.openai_server import Reply
        qid = which(req)
        if req.messages[0]["content"].startswith("You answer questions about the documents"):
            return Reply("3" if qid == "errors" else "no idea", usage=USAGE)       # the direct call
        if qid == "when":
            with lock:
                seen["when"] += 1
                first = seen["when"] == 1
            return Reply('FINAL("at noon")' if first else 'FINAL("from 09:42")', usage=USAGE)
        return Reply(GOOD[qid], usage=USAGE)

    def bad(req):
        from tests.support.openai_server import Reply
        turns = sum(1 for m in req.messages if m["role"] == "assistant")
        if turns == 0:
            return Reply("```repl\nprint(context[:10]\n```", usage=USAGE)          # a syntax error
        return Reply("FINAL(no idea)", usage=USAGE)

    server.script("good", fn=good)
    server.script("bad", fn=bad)


def run_eval(server, tmp_path, *extra):
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / "shop.log").write_text(LOG)
    qset = tmp_path / "set.jsonl"
    qset.write_text("\n".join(json.dumps(q) for q in SET) + "\n")
    cmd = [sys.executable, "-m", "app.main", "eval", str(qset), str(folder), "--api-base", server.url,
           "--pair", "openai/good:openai/good", "--pair", "openai/bad:openai/bad",
           "--price", "openai/good=1,2", "--price", "openai/bad=1,2", "--max-cost", "1",
           "--max-iterations", "3", "--max-depth", "0", *extra]
    proc = subprocess.run(cmd, env=cli_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def line(card, pair, mode="rlm"):
    return next(ln for ln in card["lines"] if ln["pair"] == pair and ln["mode"] == mode)


@pytest.mark.timeout(600)
def test_eval_scores_pairs_adds_repeats_and_compares_a_direct_call(server, tmp_path):
    scripted(server)
    first = run_eval(server, tmp_path, "--json")
    card = json.loads(first.stdout)
    good, bad = line(card, "openai/good:openai/good"), line(card, "openai/bad:openai/bad")
    assert (good["answers"], good["correct"], good["accuracy"]) == (4, 3, 0.75)
    assert (bad["answers"], bad["correct"], bad["accuracy"]) == (4, 0, 0.0)
    assert good["cells"] == 2 and good["syntax_errors"] == 0 and good["syntax_error_rate"] == 0.0
    assert bad["cells"] == 4 and bad["syntax_errors"] == 4 and bad["syntax_error_rate"] == 1.0
    assert good["mean_turns"] == 1 and bad["mean_turns"] == 2
    assert good["cost_usd"] == pytest.approx(4 * 0.00012) and bad["cost_usd"] == pytest.approx(8 * 0.00012)
    assert good["answer_rate"] == 1.0

    # Again, with two repeats and the direct call: the same evaluation grows to 3 repeats.
    second = run_eval(server, tmp_path, "--repeats", "2", "--direct", "--window", "openai/bad=60",
                      "--md", str(tmp_path / "card.md"), "--csv", str(tmp_path / "card.csv"))
    assert "openai/good:openai/good" in second.stdout and "direct" in second.stdout
    assert "do not fit the 60-token window of openai/bad" in second.stdout
    home = tmp_path / "home"
    db = sqlite3.connect(next(home.rglob("*.db")))
    [(evaluation_id, saved)] = db.execute("SELECT id, scorecard_json FROM evaluations").fetchall()
    card = json.loads(saved)
    good = line(card, "openai/good:openai/good")
    assert (good["answers"], good["correct"], good["repeats"]) == (12, 11, 3)
    assert (good["accuracy_min"], good["accuracy_max"]) == (0.75, 1.0)
    assert good["accuracy_stdev"] == pytest.approx(0.1179, abs=1e-4)
    direct_good = line(card, "direct:openai/good", "direct")
    assert (direct_good["answers"], direct_good["correct"]) == (8, 2)          # only "errors" is right
    assert direct_good["cost_usd"] == pytest.approx(8 * 0.00012)
    direct_bad = line(card, "direct:openai/bad", "direct")
    assert direct_bad["correct"] == 0 and direct_bad["cost_usd"] == 0
    assert not [r for r in server.requests_for("bad") if "documents the user gives you" in json.dumps(r.messages)]
    # Every RLM answer is a stored run linked to the evaluation; the scorecard's cost is theirs.
    linked = db.execute("SELECT count(*), sum(r.cost_usd) FROM evaluation_runs e JOIN runs r ON r.id = e.run_id "
                        "WHERE e.evaluation_id = ? AND e.pair = 'openai/good:openai/good'",
                        [evaluation_id]).fetchone()
    assert linked[0] == 12 and linked[1] == pytest.approx(good["cost_usd"])
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 24
    md = (tmp_path / "card.md").read_text()
    assert "| `openai/good:openai/good` | rlm | 12 | 92% |" in md
    csv_lines = (tmp_path / "card.csv").read_text().splitlines()
    assert csv_lines[0].startswith("pair,mode,answers,correct,accuracy")
    assert any(r.startswith("openai/good:openai/good,rlm,12,11,0.9167") for r in csv_lines)

    import sqlite_utils
    from core.fitness import guide_numbers
    numbers = guide_numbers(sqlite_utils.Database(db))
    assert "RLM with root openai/good: 11 of 12 right, $0.0001 per answer" in numbers
    assert "one plain call to openai/good: 2 of 8 right" in numbers
    assert f"one plain call to openai/bad: not possible (1 documents, {len(LOG)} characters" in numbers

    shown = subprocess.run([sys.executable, "-m", "app.main", "scorecards", evaluation_id[:8], "--json"],
                           env=cli_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert json.loads(shown.stdout)["lines"] == card["lines"]


def test_bad_question_sets_are_refused_with_the_line(server, tmp_path):
    qset = tmp_path / "set.jsonl"
    qset.write_text('{"question": "a?", "expected": 1, "checker": "number"}\n'
                    '{"question": "b?", "expected": "x", "checker": "fuzzy"}\n')
    (tmp_path / "d.txt").write_text("x")
    proc = subprocess.run([sys.executable, "-m", "app.main", "eval", str(qset), str(tmp_path / "d.txt"),
                           "--pair", "openai/a:openai/b", "--api-base", server.url],
                          env=cli_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "set.jsonl line 2: unknown checker 'fuzzy'" in proc.stderr
    assert server.history == []


@pytest.mark.timeout(300)
def test_eval_runs_go_through_the_run_service_tagged_and_read_with_the_settings(server, tmp_path):
    """issue 28 item 4: the answers are RunRequests (tagged runs.evaluation_id, kept out of
    History), over documents read with the settings' ingest options, as `ask` reads them;
    --mode twice gives one line per mode."""
    import zipfile
    scripted(server)
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"ingest": {"archives": False}}))
    folder = tmp_path / "docs"
    folder.mkdir()
    with zipfile.ZipFile(folder / "more.zip", "w") as z:
        z.writestr("inside.log", "10:00 ERROR inside the archive\n" * 5)
    qset = tmp_path / "one.jsonl"
    qset.write_text(json.dumps(SET[0]) + "\n")
    (folder / "shop.log").write_text(LOG)
    cmd = [sys.executable, "-m", "app.main", "eval", str(qset), str(folder), "--api-base", server.url,
           "--pair", "openai/good:openai/good", "--price", "openai/good=1,2", "--max-iterations", "3",
           "--max-depth", "0", "--mode", "rlm", "--mode", "direct", "--json"]
    proc = subprocess.run(cmd, env=cli_env(tmp_path), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    card = json.loads(proc.stdout)
    assert {(ln["pair"], ln["mode"]) for ln in card["lines"]} == {("openai/good:openai/good", "rlm"),
                                                                  ("openai/good:openai/good", "direct")}
    assert line(card, "openai/good:openai/good")["correct"] == 1                    # 3 ERROR lines, not 8
    db = sqlite3.connect(next(home.rglob("*.db")))
    [(evaluation_id, documents)] = db.execute("SELECT id, documents_json FROM evaluations").fetchall()
    assert [d["path"] for d in json.loads(documents)] == ["shop.log"]               # the archive unread
    runs = db.execute("SELECT evaluation_id, json_extract(config_json, '$.mode') FROM runs").fetchall()
    assert sorted(runs) == [(evaluation_id, "direct"), (evaluation_id, "rlm")]
    listed = subprocess.run([sys.executable, "-m", "app.main", "runs", "list", "--json", "--evaluations"],
                            env=cli_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert {r["evaluation_id"] for r in json.loads(listed.stdout)} == {evaluation_id}
    listed = subprocess.run([sys.executable, "-m", "app.main", "runs", "list", "--json"], env=cli_env(tmp_path),
                            capture_output=True, text=True, timeout=60)
    assert json.loads(listed.stdout) == []                                          # hidden, as in History
    from core.store.queries import list_runs
    import sqlite_utils
    assert list_runs(sqlite_utils.Database(db), evaluations=False) == []
    assert len(list_runs(sqlite_utils.Database(db))) == 2


def test_eval_compares_the_three_modes_and_auto_chooses_by_the_window(server, tmp_path):
    # --mode rlm/auto/direct: a line per mode, each mode's answers stored runs; Auto sends this
    # small log as one plain call once the root's window is known (--window), so its answers are
    # the plain call's (1 of 4 right).
    scripted(server)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "shop.log").write_text(LOG)
    qset = tmp_path / "set.jsonl"
    qset.write_text("\n".join(json.dumps(q) for q in SET) + "\n")
    cmd = [sys.executable, "-m", "app.main", "eval", str(qset), str(folder), "--api-base", server.url,
           "--pair", "openai/good:openai/good", "--price", "openai/good=1,2", "--max-iterations", "3",
           "--max-depth", "0", "--mode", "rlm", "--mode", "auto", "--mode", "direct",
           "--window", "openai/good=100000", "--json"]
    proc = subprocess.run(cmd, env=cli_env(tmp_path), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    card = json.loads(proc.stdout)
    assert [(ln["pair"], ln["mode"]) for ln in card["lines"]] == [
        ("openai/good:openai/good", "rlm"), ("openai/good:openai/good", "auto"), ("openai/good:openai/good", "direct")]
    rlm, auto, direct = card["lines"]
    assert (rlm["answers"], rlm["correct"]) == (4, 3)
    assert (auto["answers"], auto["correct"], auto["mean_turns"]) == (4, 1, 1)
    assert (direct["answers"], direct["correct"]) == (4, 1)
    home = tmp_path / "home"
    db = sqlite3.connect(next(home.rglob("*.db")))
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 12         # every mode's answers are runs
    plain = [r for r in server.requests_for("good")
             if r.messages[0]["content"].startswith("You answer questions about the documents")]
    assert len(plain) == 8                                                      # 4 auto runs + 4 direct rows
