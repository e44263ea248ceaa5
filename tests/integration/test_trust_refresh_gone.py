"""The trust pane's refresh (coverage, the sources of sub-calls) reads a plain-text document
back from its file. When that file changed or went after the run read it (a replay, a re-run
after the folder was cleaned), the refresh says so in the coverage's warnings and shows the
sub-calls without sources; on 268736d it raised DocumentChanged inside a Qt slot (a window test
failed so under load). Real files, the real ingestion, a real engine
and REPL worker, litellm over HTTP to the scripted server."""

from __future__ import annotations

import asyncio

from app.trust_shown import RefreshWork
from core.ingest import ingest
from tests.integration.engine_helpers import code, run

LINE = "the harbour master keeps the tide tables in the blue binder on the second shelf"


def test_a_document_gone_after_the_run_is_said_not_raised(server, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text("\n".join([LINE] * 40) + "\n")
    docs = asyncio.run(ingest([folder])).documents
    server.script("sub", replies=["the blue binder"])
    server.script("root", replies=[code("print(llm_query(documents[0]['text'][:400]))\nFINAL('binder')")])
    result, events = asyncio.run(run(server, docs=docs))
    assert result.answer == "binder"
    later = asyncio.run(ingest([folder])).documents      # as Sources holds them: texts not read yet

    def refresh(documents) -> RefreshWork:
        return RefreshWork(1, list(events), list(documents), None, 0, True, {}, None).run()

    here = refresh(docs)
    assert here.report.warnings == [] and here.report.percent > 0
    assert [r.source_path for r in here.rows] == ["notes.txt"] and here.rows[0].source.startswith("notes.txt:")

    (folder / "notes.txt").unlink()
    gone = refresh(later)
    said = " ".join(gone.report.warnings)
    assert "notes.txt is not measured" in said and "changed on disk" in said, said
    assert len(gone.rows) == 1 and gone.rows[0].source == "" and gone.rows[0].response == "the blue binder"
