"""An unchanged file is not read again (issue 26, item 3): real files, a real SQLite store,
the real ingestion with its worker processes. What a read produced is kept when a run's
sources are saved; the next ingestion of the same files takes it back by size and
modification time, then by content hash; a changed file is read again."""

from __future__ import annotations

import os
import subprocess

import pytest

from core.ingest import ingest
from core.store import RunStore
from core.store.extracts import ExtractCache
from tests.integration.test_cli_ask import ask
from tests.integration.engine_helpers import code
from tests.unit.ingest.makers import pdf_bytes, write_docx


def _folder(tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "q1.pdf").write_bytes(pdf_bytes(["Revenue was 12 million.", "Costs were 9 million."]))
    write_docx(folder / "memo.docx")
    (folder / "notes.txt").write_text("apples: 3\npears: 4\n")
    (folder / "sheet.csv").write_text("a,b\n1,2\n")        # parsed tables: always read again
    return folder


@pytest.fixture
def store():
    with RunStore.open() as s:
        yield s


async def test_a_second_read_of_unchanged_files_takes_what_the_first_stored(tmp_path, store):
    folder = _folder(tmp_path)
    first = await ingest([folder], cache=ExtractCache(store))
    assert first.unchanged == 0 and len(first.documents) == 4
    store.save_sources("run-1", first.documents, first.skipped)
    second = await ingest([folder], cache=ExtractCache(store))
    assert second.unchanged == 3                          # the PDF, the DOCX and the text; not the CSV
    by_path = {d.path: d for d in first.documents}
    for doc in second.documents:
        old = by_path[doc.path]
        assert (doc.text, doc.spans, doc.format, doc.sha256, doc.size) == \
            (old.text, old.spans, old.format, old.sha256, old.size), doc.path
        assert doc.unchanged == (doc.format != "csv")
    sheet = next(d for d in second.documents if d.format == "csv")
    assert sheet.tables                                   # read again, with its parsed tables


async def test_a_touched_file_is_hashed_and_a_changed_one_read_again(tmp_path, store):
    folder = _folder(tmp_path)
    first = await ingest([folder], cache=ExtractCache(store))
    store.save_sources("run-1", first.documents, first.skipped)
    notes = folder / "notes.txt"
    stat = notes.stat()
    os.utime(notes, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))   # touched, same bytes
    (folder / "q1.pdf").write_bytes(pdf_bytes(["Revenue was 13 million.", "Costs were 9 million."]))
    (folder / "notes2.txt").write_text("new file\n")
    second = await ingest([folder], cache=ExtractCache(store))
    fresh = {d.path for d in second.documents if not d.unchanged}
    assert fresh == {"q1.pdf", "notes2.txt", "sheet.csv"}     # notes.txt: touched, its hash the same
    assert "13 million" in next(d.text for d in second.documents if d.path == "q1.pdf")
    assert second.unchanged == len(second.documents) - len(fresh)


async def test_a_blob_collected_since_is_a_miss_not_an_error(tmp_path, store):
    folder = _folder(tmp_path)
    first = await ingest([folder], cache=ExtractCache(store))
    store.save_sources("run-1", first.documents, first.skipped)
    store.db.execute("DELETE FROM blobs")
    store.db.conn.commit()
    again = await ingest([folder], cache=ExtractCache(store))
    # Only a text kept in its sidecar (what was extracted from the Word file) is still taken back.
    assert [d.path for d in again.documents if d.unchanged] == ["memo.docx"] and len(again.documents) == 4
    from core.ingest.bigfile import spool_dir
    for name in os.listdir(spool_dir()):
        os.chmod(os.path.join(spool_dir(), name), 0o600)
        os.unlink(os.path.join(spool_dir(), name))
    third = await ingest([folder], cache=ExtractCache(store))
    assert third.unchanged == 0 and len(third.documents) == 4
    assert "Quarterly Report" in next(d.text for d in third.documents if d.path == "memo.docx")


def test_the_cli_reads_an_unchanged_folder_once(server, tmp_path):
    folder = _folder(tmp_path)
    server.script("root", replies=[code("FINAL(str(len(documents)))")] * 2)
    cmd, env = ask(server, tmp_path, folder, "--max-depth", "0")
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "unchanged since an earlier read" not in first.stderr
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert "3 of 4 files unchanged since an earlier read: not read again" in second.stderr
    assert first.stdout.strip() == second.stdout.strip() == "4"


async def test_an_unchanged_text_file_is_decoded_from_itself_not_from_its_blob(tmp_path, store):
    folder = tmp_path / "logs"
    folder.mkdir()
    for i in range(5):
        (folder / f"day{i}.log").write_text(f"day {i}\r\n" + "request ok\r\n" * 2000 + "caf\u00e9 \U0001F600\n",
                                            encoding="utf-8")
    first = await ingest([folder], cache=ExtractCache(store))
    store.save_sources("run-1", first.documents, first.skipped)
    read_blobs = []
    real_blob = store.blob

    def counted(sha):
        read_blobs.append(sha)
        return real_blob(sha)
    store.blob = counted
    again = await ingest([folder], cache=ExtractCache(store))
    assert again.unchanged == 5
    assert [(d.path, d.text, d.sha256, d.chars, d.format) for d in again.documents] == \
        [(d.path, d.text, d.sha256, d.chars, d.format) for d in first.documents]
    assert read_blobs == []                      # the blobs' decompression was the slow part
