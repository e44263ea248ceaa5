"""The engine holds no second copy of a plain-text corpus (issue 26, item 1): the documents
read their text back from the files when asked (core/ingest/text_back.py). Real files, the
real ingestion, a real SQLite store, a real engine and REPL worker, litellm over HTTP to the
scripted server."""

from __future__ import annotations

import hashlib
import os

import pytest

from core.ingest import ingest
from core.store import RunStore
from core.store.extracts import ExtractCache
from tests.integration.engine_helpers import code, run

NOTES = "apples: 1\n" * 3000 + "pears: 95173\n"
LOG = "caf\u00e9 ok\r\n" * 5000 + "a smile \U0001F600\n"


def _folder(tmp_path, files: int = 0, size: int = 0):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text(NOTES)
    (folder / "server.log").write_bytes(LOG.encode("utf-8"))
    for i in range(files):
        (folder / f"f{i}.txt").write_text((f"file {i} " * (size // 7 + 1))[:size])
    return folder


def _held_chars(docs) -> int:
    """Characters of text the documents hold in their own attributes."""
    names = ("path", "source_path", "format", "sha256", "text_sha256")
    return sum(len(v) for d in docs for k, v in vars(d).items() if isinstance(v, str) and k not in names)


@pytest.fixture
def store():
    with RunStore.open() as s:
        yield s


async def test_a_run_over_read_back_documents_sees_their_text_and_checks_a_citation(server, tmp_path):
    result = await ingest([_folder(tmp_path)])
    docs = result.documents
    assert _held_chars(docs) == 0 and not any(d.held for d in docs)
    expected = "".join(f"=== {d.path} ===\n{d.text}\n\n" for d in docs)
    server.script("root", replies=[
        code("import hashlib\nprint(hashlib.sha256(context.encode()).hexdigest() == "
             f"{hashlib.sha256(expected.encode()).hexdigest()!r}, len(documents[0]['text']))"),
        code("FINAL('pears: 95173 [doc:notes.txt:line 3001]')")])
    outcome, events = await run(server, docs=docs)
    assert outcome.status == "finished", outcome.error
    cell = [e.stdout for e in events if e.type == "CellExecuted"][0]
    assert cell.split() == ["True", str(len(NOTES))]           # the worker has the files' text
    assert outcome.totals["unsupported"] == [] and outcome.totals["support_values"] == 1   # the cited line read back
    assert _held_chars(docs) == 0 and not any(d.held for d in docs)   # ... and not kept


async def test_sources_of_known_texts_are_saved_without_reading_them(tmp_path, store):
    folder = _folder(tmp_path)
    docs = (await ingest([folder])).documents
    store.save_sources("run-1", docs)
    for path in folder.iterdir():
        path.unlink()                          # a read back would raise DocumentChanged now
    store.save_sources("run-2", docs)          # text_sha256 known, its blob stored: nothing read
    assert [(d.path, d.text) for d in store.documents("run-2")] == \
        [("notes.txt", NOTES), ("server.log", LOG.replace("\r\n", "\n"))]


async def test_sources_are_stored_a_batch_at_a_time(tmp_path, store, monkeypatch):
    from core.store import runstore
    docs = (await ingest([_folder(tmp_path, files=6, size=20_000)])).documents
    monkeypatch.setattr(runstore, "SOURCE_BLOB_BATCH", 1)          # one blob per transaction
    commits = []
    store.db.conn.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    store.save_sources("run-1", docs)
    store.db.conn.set_trace_callback(None)
    assert len(commits) == len(docs) + 1       # a transaction per blob, then the rows
    assert {d.path: d.text for d in store.documents("run-1")} == {d.path: d.text for d in docs}


def _read_bytes() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


async def test_an_unchanged_folder_is_taken_back_without_reading_its_files(tmp_path, store):
    folder = _folder(tmp_path, files=4, size=1_500_000)
    first = await ingest([folder], cache=ExtractCache(store))
    store.save_sources("run-1", first.documents)
    before = _read_bytes()
    second = await ingest([folder], cache=ExtractCache(store))
    read = _read_bytes() - before
    assert second.unchanged == len(second.documents) == 6
    assert read < 1_000_000, f"{read:,} bytes read for a folder of {sum(d.size for d in second.documents):,}"
    for old, new in zip(first.documents, second.documents):
        assert not new.held and (new.width, new.tokens, new.text_sha256) == (old.width, old.tokens, old.text_sha256)
        assert new.text == old.text


async def test_the_context_file_from_read_back_documents_is_the_same_and_a_changed_file_is_refused(tmp_path):
    from core.ingest.model import DocumentChanged
    from core.repl.context_file import write_context
    folder = _folder(tmp_path, files=3, size=50_000)
    (folder / "wide.txt").write_text("a smile \U0001F600 and caf\u00e9\n" * 1000)   # UTF-8 as it is
    docs = (await ingest([folder])).documents
    held = [d.but(text=d.text) for d in docs]
    written = []
    for name, these in (("back", docs), ("held", held)):
        (tmp_path / name).mkdir()
        files = write_context(these, tmp_path / name)
        written.append((open(files.path, "rb").read(), open(files.index_path).read(), files.form))
    assert written[0] == written[1]
    f1 = folder / "f1.txt"
    stat = f1.stat()
    f1.write_bytes(f1.read_bytes().replace(b"file", b"FILE"))        # same size, another time
    os.utime(f1, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    (tmp_path / "changed").mkdir()
    with pytest.raises(DocumentChanged, match=r"f1\.txt changed on disk"):
        write_context(docs, tmp_path / "changed")


async def test_a_run_over_a_file_changed_since_it_was_read_is_refused_in_words(server, tmp_path):
    from core.engine.run import ConfigError
    folder = _folder(tmp_path)
    docs = (await ingest([folder])).documents
    (folder / "notes.txt").write_text(NOTES + "more\n")
    server.script("root", replies=[code("print(len(context))"), code("FINAL('done')")])
    with pytest.raises(ConfigError, match=r"^notes\.txt changed on disk since it was read \(its size or "
                                          r"modification time differs\); add it to Sources again"):
        await run(server, docs=docs)
    assert server.requests_for("root") == []                  # refused before the run
