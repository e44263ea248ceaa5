"""Citations, the support check and coverage of big files whose text is not all ASCII (accents,
CJK, emoji: one character is 1 to 4 bytes), through the real CLI and worker: a log read back
from its own file and a mailbox read back from its sidecar. The cited passages are exactly the
lines and messages named, the support check finds the values only those passages hold, and
`runs citations` / `runs coverage` on the stored run read the texts by offsets (through the
sparse index written beside them), never whole: such a text held as a str takes 4 bytes a
character, so reading it whole would show as several times the file in those processes."""

from __future__ import annotations

import json
import sys
import time

import pytest

from tests.integration.engine_helpers import code
from tests.integration.test_cli_ask import cli_env
from tests.support.big_files import log_line, write_log, write_mbox
from tests.support.proc_tree import run_measured

MB = 1024 * 1024
SIZE = 120 * MB            # each file: as a str (emoji: 4 bytes a character) ~4x that
PRINTED, CITED, MESSAGE = 150_000, 200_000, 777      # log lines i (line i + 1), message m (m + 1)
ANSWER = (f"Trace TR{CITED:07d}X [doc:server.log:line {CITED + 1}]; reference REF-{MESSAGE:06d} "
          f"[doc:export.mbox:message {MESSAGE + 1}, line 7]; also ZZ-31337 [doc:server.log:line 5].")


def _cli(server, tmp_path, *args):
    cmd = [sys.executable, "-m", "app.main", *args]
    proc, out, err, _started, wall, sampler = run_measured(cmd, 900, env=cli_env(tmp_path))
    print(f"{' '.join(args[:2])}: {wall:.1f} s, load {__import__('os').getloadavg()[0]:.1f}")
    assert proc.returncode == 0, err
    return out, err, sampler


@pytest.mark.timeout(1800)
def test_big_non_ascii_texts_are_cited_checked_and_covered_by_offsets(server, tmp_path):
    log, mbox = tmp_path / "server.log", tmp_path / "export.mbox"
    write_log(log, SIZE, intl=True)
    write_mbox(mbox, SIZE, intl=True)
    server.script("root", replies=[
        code(f"i = context.find(' request {PRINTED} ')\nprint(context[context.rfind(chr(10), 0, i) + 1:i + 3000])"),
        code(f"FINAL({ANSWER!r})")])
    out, err, _ = _cli(server, tmp_path, "ask", "Which trace and reference?", str(log), str(mbox),
                       "--root", "openai/root", "--sub", "openai/sub", "--api-base", server.url,
                       "--mode", "rlm", "--json")
    run = json.loads(out)
    assert run["status"] == "finished" and run["answer"] == ANSWER, err
    # The typed values that only the cited passages hold are supported; the one no passage holds is not.
    assert run["unsupported"] == ["ZZ-31337"], err
    spool = tmp_path / "home" / "texts"
    indexes = sorted(p.name for p in spool.iterdir() if p.suffix == ".idx")
    assert len(indexes) == 2, sorted(p.name for p in spool.iterdir())     # the log's and the mailbox's

    out, err, cites_tree = _cli(server, tmp_path, "runs", "citations", run["run_id"], "--json")
    cites = json.loads(out)
    assert [c["ok"] for c in cites] == [True, True, True]
    log_text = log.read_text(encoding="utf-8")
    assert log_text[cites[0]["start"]:cites[0]["end"]] == log_line(CITED, intl=True)
    assert log_text[cites[2]["start"]:cites[2]["end"]] == log_line(4, intl=True)
    sidecar = next(p for p in spool.iterdir() if p.suffix == ".txt")
    mail_text = sidecar.read_text(encoding="utf-8")
    assert mail_text[cites[1]["start"]:cites[1]["end"]] == f"Référence REF-{MESSAGE:06d} für Zoë 😀"
    head = mail_text.rfind("--- message ", 0, cites[1]["start"])
    assert mail_text.startswith(f"--- message {MESSAGE + 1} ---\n", head)

    out, err, coverage_tree = _cli(server, tmp_path, "runs", "coverage", run["run_id"], "--json")
    report = {d["path"]: d for d in json.loads(out)["documents"]}
    printed = log_text.index(log_line(PRINTED, intl=True) + "\n")
    assert any(a <= printed < b for a, b in report["server.log"]["read"]), \
        report["server.log"]["read"]
    assert report["server.log"]["read_chars"] < 4000 and report["export.mbox"]["read_chars"] == 0
    del log_text, mail_text
    for name, tree in (("citations", cites_tree), ("coverage", coverage_tree)):
        peak = tree.peak_kb * 1024
        print(f"runs {name}: peak {peak / MB:,.0f} MB for two files of {SIZE / MB:,.0f} MB")
        assert peak < 0.5 * SIZE, f"runs {name} peaked at {peak / MB:,.0f} MB: a text was read whole"
