"""Lying records (issue 24): an answer citing a page that does not exist is flagged in every
export (Markdown, JSON, CSV, HTML) as the window flags it. The answer comes from a real
```repl cell (FINAL) through the real CLI, engine and worker; exports through `runs export`."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from tests.integration.engine_helpers import code

BAD = "doc:one.txt:page 99"


def _cli(tmp_path, *args: str, namespace: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ, RLMSTUDIO_DESKTOP_HOME=str(tmp_path / "home"), OPENAI_API_KEY="sk-cli",
               PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    env.pop("RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE", None)
    if not namespace:
        env["RLMSTUDIO_DESKTOP_REPL_NO_NAMESPACE"] = "1"
    return subprocess.run([sys.executable, "-m", "app.main", *args], env=env, capture_output=True,
                          text=True, timeout=180)


@pytest.mark.parametrize("namespace", [True, False], ids=["namespace", "fallback"])
def test_an_unresolvable_citation_is_flagged_in_every_export(server, tmp_path, namespace):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "one.txt").write_text("apples: 3\npears: 4\n")
    cell = f'FINAL("3 apples [doc:" + where(0) + "] and 7 plums [{BAD}]")'
    server.script("root", replies=[code(cell), "unused"])
    run = _cli(tmp_path, "ask", "How many?", str(folder), "--root", "openai/root", "--sub", "openai/root",
               "--api-base", server.url, "--json", "--quiet", namespace=namespace)
    assert run.returncode == 0, run.stderr[-2000:]
    run_id = json.loads(run.stdout)["run_id"]
    out = {}
    for fmt in ("md", "json", "csv", "html"):
        path = tmp_path / f"run.{fmt}"
        proc = _cli(tmp_path, "runs", "export", run_id, "--format", fmt, "-o", str(path))
        assert proc.returncode == 0, proc.stderr
        out[fmt] = path.read_text()
    assert f"[{BAD}] points to nothing: one.txt has no 'page 99'" in out["md"]
    assert "doc:one.txt:line 1" not in out["md"].split("Unresolved citations")[1]   # the good one is not
    data = json.loads(out["json"])
    assert data["citations"]["checked"] is True and data["citations"]["total"] == 2
    assert data["citations"]["unresolved"] == [{"citation": BAD, "problem": "one.txt has no 'page 99'"}]
    rows = list(csv.DictReader(io.StringIO(out["csv"])))
    answer = [r for r in rows if r["kind"] == "answer"]
    assert len(answer) == 1 and BAD in answer[0]["unresolved_citations"]
    assert "points to nothing" in out["html"] and 'class="cite bad"' in out["html"]
    # imported without its texts: nothing can be checked, and the export says so
    env_tmp = tmp_path / "imp"
    env_tmp.mkdir()
    proc = _cli(env_tmp, "runs", "import", str(tmp_path / "run.json"))
    assert proc.returncode == 0, proc.stderr
    md = env_tmp / "again.md"
    proc = _cli(env_tmp, "runs", "export", run_id, "--format", "md", "-o", str(md))
    assert proc.returncode == 0, proc.stderr
    assert "citations not checked" in md.read_text()
