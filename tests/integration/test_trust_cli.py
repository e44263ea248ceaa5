"""The trust commands through the real CLI entry point (in-process), over runs stored by
real runs against the scripted server: verify, fork, compare, coverage, citations, the CSV
export and the manifest, and `ask --approve-over`."""

import asyncio
import csv
import io
import json

import pytest

from app.cli import main
from core.store import RunStore
from tests.support.trust_runs import code, stored_run, tamper_event

SCRIPT = [
    code("lines = context.splitlines()\nprint('\\n'.join(lines[:4]))"),
    code("rev = [l for l in lines if 'Revenue in Q3' in l]\n"
         "answers = llm_query_batched(['Extract the number: ' + r for r in rev])\nprint(answers)"),
    code("FINAL(f'Q3 revenue: {answers[0]} million [doc:{where(context.index(rev[0]))}] '\n"
         "      '[doc:report.pdf:page 7]')"),
]


@pytest.fixture
def cli_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cli-test")


def _stored(openai_server, replies=SCRIPT):
    openai_server.script("root", replies=list(replies))
    openai_server.script("sub", fn=lambda r: "42")

    async def go():
        with RunStore.open() as store:
            return await stored_run(openai_server, store)
    return asyncio.run(go()).run_id


def _json(capsys, argv, code=0):
    assert main(argv) == code
    return json.loads(capsys.readouterr().out)


def test_verify_compare_coverage_and_citations(openai_server, cli_env, capsys):
    run_id = _stored(openai_server)
    report = _json(capsys, ["runs", "verify", run_id[:10], "--json"])
    assert report["matches"] and report["sub_calls_served"] == 1 and len(report["cells"]) == 3

    cov = _json(capsys, ["runs", "coverage", run_id, "--json"])
    assert 0 < cov["percent"] < 100
    notes, report_ = cov["documents"]
    assert notes["path"] == "notes.txt" and notes["read"] == [[0, notes["chars"] - 1]]   # all but its last "\n"
    assert report_["percent"] < 100 and report_["unread"]

    assert main(["runs", "citations", run_id]) == 1          # one citation points to nothing
    out = capsys.readouterr().out
    assert "ok      [doc:report.pdf:page 2, line 1]" in out and "BROKEN  [doc:report.pdf:page 7]" in out

    other = _stored(openai_server, SCRIPT[:2] + [code("FINAL('something else')")])
    result = _json(capsys, ["runs", "compare", run_id, other, "--json"])
    assert not result["same_answer"] and result["first_difference"]["turn"] == 3
    assert main(["runs", "compare", run_id, other]) == 0
    assert "first difference: turn 3 (reply)" in capsys.readouterr().out

    with RunStore.open() as store:
        tamper_event(store, run_id, "SubCallFinished", 0, "response", "41")
    assert main(["runs", "verify", run_id]) == 1
    out = capsys.readouterr().out
    assert "first divergence: R.t2.c1" in out and "DIVERGED" in out


def test_csv_export_and_the_manifest(openai_server, cli_env, capsys, tmp_path):
    run_id = _stored(openai_server)
    assert main(["runs", "export", run_id, "-o", str(tmp_path / "results.csv")]) == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "results.csv").read_text())))
    # the answer's row, its broken citation flagged as `trust` flags it (issue 24)
    assert rows[-1]["kind"] == "answer" and "[doc:report.pdf:page 7] points to nothing" in rows[-1][
        "unresolved_citations"] and "page 2" not in rows[-1]["unresolved_citations"]
    rows = rows[:-1]
    assert len(rows) == 1 and rows[0]["call_id"] == "R.s1" and rows[0]["response"] == "42"
    assert rows[0]["source"] == "report.pdf:page 2, line 1" and rows[0]["status"] == "ok"
    assert main(["runs", "export", run_id, "--format", "json", "-o", str(tmp_path / "run.json")]) == 0
    manifest = json.loads((tmp_path / "run.json").read_text())["manifest"]
    assert "where(offset)" in manifest["system_prompt"]
    assert "What was Q3 revenue?" in manifest["first_message"]
    assert manifest["settings"]["root_model"] == "openai/root" and manifest["app_version"]
    assert [i["sha256"] for i in manifest["inputs"]] == ["sha-notes.txt", "sha-report.pdf"]
    assert manifest["models"] == ["openai/root", "openai/sub"]


def test_fork_from_the_command_line(openai_server, cli_env, capsys, tmp_path):
    run_id = _stored(openai_server)
    openai_server.script("root", replies=[code("FINAL('fork: ' + answers[0])")])
    data = _json(capsys, ["runs", "fork", run_id, "--turn", "3", "--max-cost", "1",
                                  "--price", "openai/root=1,2", "--price", "openai/sub=0,0", "--json"])
    assert data["answer"] == "fork: 42" and data["parent_run_id"] == run_id and data["replayed_cells"] == 2
    edit = tmp_path / "edit.py"
    edit.write_text("answers = [llm_query('fresh question')]\nprint(answers)")
    openai_server.script("root", replies=[code("FINAL('edited: ' + answers[0])")])
    data = _json(capsys, ["runs", "fork", run_id, "--turn", "2", "--edit-code", str(edit), "--json"])
    assert data["answer"] == "edited: 42" and "['42']" in data["edited_output"]
    assert openai_server.requests_for("sub")[-1].prompt == "fresh question"     # a new prompt went live
    with RunStore.open() as store:
        assert len(store.list_runs(parent_run_id=run_id)) == 2
    assert main(["runs", "fork", run_id, "--turn", "9"]) == 2
    assert "no turn 9" in capsys.readouterr().err


@pytest.mark.parametrize("flags, stdin, expected", [
    (["--approve-over", "1"], "n\n", "['[error: ApprovalDenied"),
    (["--approve-over", "1"], "y\n", "['A', 'B']"),
    (["--approve-over", "1", "--yes"], "", "['A', 'B']"),
])
def test_ask_approve_over_asks_on_the_terminal(openai_server, cli_env, capsys, monkeypatch, tmp_path,
                                               flags, stdin, expected):
    (tmp_path / "d.txt").write_text("some text\n")
    openai_server.script("root", replies=[code("FINAL(str(llm_query_batched(['a', 'b'])))")])
    openai_server.script("sub", fn=lambda r: r.prompt.upper())
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code_ = main(["ask", "Q?", str(tmp_path / "d.txt"), "--root", "openai/root", "--sub", "openai/sub",
                  "--api-base", openai_server.url, "--quiet", *flags])
    captured = capsys.readouterr()
    denied = stdin == "n\n"           # the approval gate refused the batch: finished, but limited
    assert code_ == (4 if denied else 0) and captured.out.startswith(expected)
    assert ("Approve a batch of 2 llm sub-call(s)" in captured.err) == (stdin != "")
