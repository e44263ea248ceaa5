"""An unsupported answer, stored by the real engine in a real SQLite file, is said so by
History's rows, the exports and `--json` (the window: tests/gui/test_answer_unsupported.py);
a supported one is not."""

import json

import pytest

from app.cli_common import report_outcome
from app.runner import QuestionRun
from core.exports import export_html, export_json, export_md
from core.store import RunStore
from core.support import MESSAGE
from tests.integration.engine_helpers import KEY, Doc, code, config

DOCS = [Doc("log.txt", "boot ok\n" * 50 + "SECRET_CODE=QX-4471\n")]
LINE = f"12345: {MESSAGE}"


@pytest.fixture
async def runs(server):
    server.script("root", replies=[
        code("FINAL('The value of SECRET_CODE in the log is 12345.')"),                  # made up
        code("import re\nprint(re.search(r'SECRET_CODE=(\\S+)', context).group(1))"),
        code("FINAL('SECRET_CODE is QX-4471.')"),                                        # printed
    ])
    store = RunStore.open()
    results = [await QuestionRun("What is SECRET_CODE?", documents=DOCS, config=config(server),
                                 key_for=lambda m: KEY, store=store).execute() for _ in range(2)]
    yield store, results
    store.close()


async def test_history_exports_and_json_say_the_answer_is_unsupported(runs, tmp_path, capsys):
    store, (made_up, read) = runs
    rows = {r["id"]: r for r in store.list_runs()}
    assert rows[made_up.run_id]["unsupported"] == ["12345"] and rows[read.run_id]["unsupported"] == []
    for module, name in ((export_md, "r.md"), (export_html, "r.html"), (export_json, "r.json")):
        module.write(store, made_up.run_id, tmp_path / name)
        module.write(store, read.run_id, tmp_path / ("ok-" + name))
    assert f"**Unsupported:** {LINE}" in (tmp_path / "r.md").read_text()
    assert f'<p class="err">Unsupported: {LINE}</p>' in (tmp_path / "r.html").read_text()
    assert json.loads((tmp_path / "r.json").read_text())["unsupported"] == ["12345"]
    assert "Unsupported" not in (tmp_path / "ok-r.md").read_text() + (tmp_path / "ok-r.html").read_text()
    assert json.loads((tmp_path / "ok-r.json").read_text())["unsupported"] == []
    report_outcome(made_up, as_json=True)
    out, err = capsys.readouterr()
    assert json.loads(out)["unsupported"] == ["12345"]
    assert f"rlm-studio: warning: the answer states {LINE}" in err
    report_outcome(read, as_json=True)
    out, err = capsys.readouterr()
    assert json.loads(out)["unsupported"] == [] and "not found" not in err

