"""ingest() end to end: real worker processes, every format, the hostile folder,
hangs and crashes, progress and cancellation."""

from __future__ import annotations

import asyncio
import os
import random
import time
import zipfile

import pytest

from core.ingest import IngestOptions, ingest, ingest_sync
from core.ingest.run import Ingestion
from tests.unit.ingest import hostile_extract, makers

FAST = IngestOptions(per_file_timeout_s=20.0, workers=2)


def test_every_format_through_workers(tmp_path):
    makers.write_all_formats(tmp_path / "all")
    result = ingest_sync([tmp_path / "all"], FAST)
    formats = {d.path: d.format for d in result.documents}
    assert formats == {
        "archive.mbox": "mbox", "book.epub": "epub", "book.xlsx": "xlsx",
        "data.json": "json", "deck.pptx": "pptx", "events.jsonl": "jsonl",
        "feed.xml": "xml", "mail.eml": "eml", "memo.docx": "docx", "notes.txt": "text",
        "page.html": "html", "readme.md": "markdown", "report.pdf": "pdf",
        "script.py": "code", "table.csv": "csv", "table.tsv": "tsv"}
    assert [d.path for d in result.documents] == sorted(formats)      # walk order
    assert result.skipped == []
    texts = {d.path: d.text for d in result.documents}
    assert "Second page text" in texts["report.pdf"]
    assert "Speaker note: mention budget" in texts["deck.pptx"]
    assert "North\t1200" in texts["memo.docx"]
    assert result.total_chars == sum(d.chars for d in result.documents)
    assert result.total_bytes == sum(os.path.getsize(tmp_path / "all" / p) for p in formats)


def build_hostile(folder):
    folder.mkdir()
    rng = random.Random(7)
    (folder / "random.bin").write_bytes(bytes(rng.getrandbits(8) for _ in range(50_000)))
    (folder / "fake.pdf").write_bytes(b"<html>this is not a pdf</html>")
    buffer = folder / "fake.docx"
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "a zip, not a document")
    (folder / "locked.pdf").write_bytes(makers.encrypted_pdf_bytes(["top secret"]))
    good = makers.pdf_bytes(["page one", "page two", "page three"])
    (folder / "truncated.pdf").write_bytes(good[: len(good) * 2 // 3])
    (folder / "oneline.txt").write_bytes(b"word " * (5 * 1024 * 1024 // 5))
    (folder / "empty.txt").write_bytes(b"")
    (folder / "latin1.txt").write_bytes("Déjà vu: crème brûlée für 5 €, “quoted”.\n"
                                        .encode("cp1252"))
    (folder / "utf16.txt").write_bytes("Ünïcödé in UTF-16 ✓\n".encode("utf-16"))
    (folder / "loop").mkdir()
    os.symlink(folder, folder / "loop" / "back")
    os.symlink(folder / "nowhere.txt", folder / "dangling.txt")
    deep = folder / "deep"
    for level in range(100):
        deep = deep / f"{level}"
    deep.mkdir(parents=True)
    (deep / "bottom.md").write_bytes(b"# found at the bottom\n")
    tiny = folder / "tiny"
    tiny.mkdir()
    for i in range(3000):
        (tiny / f"{i:04d}.txt").write_bytes(f"tiny file {i}\n".encode())
    return folder


def test_hostile_folder(tmp_path):
    folder = build_hostile(tmp_path / "hostile")
    result = ingest_sync([folder], FAST)
    skips = {s.path: (s.reason, s.detail) for s in result.skipped}
    docs = {d.path: d for d in result.documents}
    assert skips["random.bin"][0] == "binary"
    assert skips["fake.pdf"] == ("corrupt", "not a PDF: no %PDF- header (the file holds text)")
    assert skips["fake.docx"][0] == "corrupt" and "word/document.xml" in skips["fake.docx"][1]
    assert skips["locked.pdf"] == ("encrypted", "password-protected PDF")
    assert skips["truncated.pdf"][0] == "corrupt" and "PDFium" in skips["truncated.pdf"][1]
    assert skips["empty.txt"] == ("empty", "0 bytes")
    assert skips["loop/back"][0] == "symlink_loop"
    assert skips["dangling.txt"][0] == "unreadable"
    assert len(skips) == 8 and all(detail for _, detail in skips.values())
    assert docs["oneline.txt"].chars == 5 * 1024 * 1024
    assert docs["oneline.txt"].text.startswith("word word")
    assert docs["latin1.txt"].text == "Déjà vu: crème brûlée für 5 €, “quoted”.\n"
    assert docs["utf16.txt"].text == "Ünïcödé in UTF-16 ✓\n"
    bottom = [p for p in docs if p.endswith("bottom.md")]
    assert len(bottom) == 1 and docs[bottom[0]].text == "# found at the bottom\n"
    tiny = [d for p, d in docs.items() if p.startswith("tiny/")]
    assert len(tiny) == 3000
    assert all(d.text == f"tiny file {int(d.path[5:9])}\n" for d in tiny)
    assert len(result.documents) + len(result.skipped) == 3000 + 4 + 8


def test_hang_and_crash_become_skips_and_the_rest_goes_on(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    for name in ("a.txt", "b.hang", "c.txt", "d.crash", "e.txt", "f.hang", "g.txt", "h.balloon",
                 "i.txt", "j.bug"):
        (folder / name).write_bytes(f"content of {name}\n".encode())
    options = IngestOptions(per_file_timeout_s=1.0, workers=2)
    result = asyncio.run(Ingestion([folder], options, extractor=hostile_extract.extract).run())
    assert [d.path for d in result.documents] == ["a.txt", "c.txt", "e.txt", "g.txt", "i.txt"]
    assert all(d.text == f"content of {d.path}\n" for d in result.documents)
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons == {"b.hang": "timeout", "d.crash": "crashed", "f.hang": "timeout",
                       "h.balloon": "crashed", "j.bug": "corrupt"}
    crash = next(s for s in result.skipped if s.path == "d.crash")
    assert "SIGSEGV" in crash.detail
    balloon = next(s for s in result.skipped if s.path == "h.balloon")
    assert "out of memory" in balloon.detail
    bug = next(s for s in result.skipped if s.path == "j.bug")
    assert bug.detail.startswith("KeyError: 'missing key' (in hostile_extract.py:")


def test_progress_reports(tmp_path):
    for i in range(40):
        (tmp_path / f"{i:02d}.txt").write_bytes(b"x" * (i + 1))
    (tmp_path / "zero.txt").write_bytes(b"")
    seen = []
    result = ingest_sync([tmp_path], FAST, on_progress=seen.append)
    assert seen[0].files_done == 0 and seen[0].files_total == 0 and seen[0].current is None
    last = seen[-1]
    assert (last.files_done, last.files_total) == (41, 41)
    assert last.bytes_done == last.bytes_total == sum(range(1, 41))
    done = [p.files_done for p in seen]
    assert done == sorted(done)
    assert {p.current for p in seen if p.current} == {f"{i:02d}.txt" for i in range(40)} | {"zero.txt"}
    assert len(result.documents) == 40


def test_missing_paths(tmp_path):
    with pytest.raises(FileNotFoundError):
        ingest_sync([tmp_path / "nope", tmp_path / "nada"])
    (tmp_path / "a.txt").write_text("hello")
    result = ingest_sync([tmp_path / "a.txt", tmp_path / "nope"], FAST)
    assert [d.path for d in result.documents] == ["a.txt"]
    assert [(s.path, s.reason) for s in result.skipped] == [("nope", "unreadable")]


def test_too_large_is_skipped_without_reading(tmp_path):
    (tmp_path / "big.txt").write_bytes(b"a" * 2000)
    (tmp_path / "small.txt").write_bytes(b"b" * 10)
    result = ingest_sync([tmp_path], IngestOptions(max_file_bytes=1000, workers=1))
    assert [d.path for d in result.documents] == ["small.txt"]
    assert result.skipped[0].reason == "too_large" and "2,000 bytes" in result.skipped[0].detail


async def test_cancel_kills_workers_and_propagates(tmp_path):
    (tmp_path / "a.pidhang").write_bytes(b"x")
    task = asyncio.ensure_future(Ingestion(
        [tmp_path], IngestOptions(per_file_timeout_s=60, workers=1),
        extractor=hostile_extract.extract).run())
    pid_file = tmp_path / "a.pidhang.pid"
    deadline = time.monotonic() + 20
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "worker never started"
        await asyncio.sleep(0.05)
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 5
    while _alive(pid):
        assert time.monotonic() < deadline, "worker survived cancellation"
        await asyncio.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"   # zombie = dead
    except FileNotFoundError:
        return False


async def test_async_ingest_and_cancel_midway(tmp_path):
    for i in range(400):
        (tmp_path / f"{i:03d}.txt").write_bytes(f"some words {i}\n".encode())
    result = await ingest([tmp_path], FAST)
    assert len(result.documents) == 400
    started = asyncio.Event()

    def on_progress(p):
        if p.files_done >= 5:
            started.set()
    task = asyncio.ensure_future(ingest([tmp_path], FAST, on_progress=on_progress))
    await asyncio.wait_for(started.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
