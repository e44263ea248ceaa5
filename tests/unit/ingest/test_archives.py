"""Archives as folders, through the real ingestion (worker processes): members,
nesting, single compressed files, hostile names and links, encrypted members,
bombs, crashes inside an archive, progress and cancellation."""

from __future__ import annotations

import asyncio
import time

import pytest

from core.ingest import IngestOptions, ingest, ingest_sync
from core.ingest.run import Ingestion
from tests.unit.ingest import archive_makers as am
from tests.unit.ingest import hostile_extract, makers

FAST = IngestOptions(per_file_timeout_s=20.0, workers=2)


def _by_path(result):
    return ({d.path: d for d in result.documents},
            {s.path: (s.reason, s.detail) for s in result.skipped})


def test_zip_members_become_documents_through_their_extractors(tmp_path):
    pdf = makers.pdf_bytes(["First page of the export", "Second page"])
    mbox = makers.mbox_bytes([makers.email_message("March report", "numbers are up")])
    am.write(tmp_path / "in" / "export.zip", am.zip_bytes({
        "inbox/2024-03.mbox": mbox, "docs/report.pdf": pdf, "notes/readme.md": b"# Notes\nhi\n",
        "__MACOSX/._junk": b"junk", "docs/": b""}))
    result = ingest_sync([tmp_path / "in"], FAST)
    docs, skips = _by_path(result)
    assert list(docs) == ["export.zip/inbox/2024-03.mbox", "export.zip/docs/report.pdf",
                          "export.zip/notes/readme.md"]          # archive order
    assert skips == {}
    assert docs["export.zip/inbox/2024-03.mbox"].format == "mbox"
    report = docs["export.zip/docs/report.pdf"]
    assert report.format == "pdf" and [s.address for s in report.spans] == ["page 1", "page 2"]
    assert report.source_path == str(tmp_path / "in" / "export.zip") + "/docs/report.pdf"
    assert report.size == len(pdf)


@pytest.mark.parametrize("mode,name", [("w", "b.tar"), ("w:gz", "b.tar.gz"), ("w:gz", "b.tgz"),
                                       ("w:bz2", "b.tar.bz2"), ("w:xz", "b.tar.xz")])
def test_tars_of_every_compression(tmp_path, mode, name):
    am.write(tmp_path / name, am.tar_bytes({"a/one.txt": b"one\n", "b/two.csv": b"x,y\n1,2\n"},
                                           mode))
    docs, skips = _by_path(ingest_sync([tmp_path / name], FAST))
    assert skips == {}
    assert {p: d.format for p, d in docs.items()} == {f"{name}/a/one.txt": "text",
                                                      f"{name}/b/two.csv": "csv"}


@pytest.mark.parametrize("kind", ["gz", "bz2", "xz"])
def test_single_compressed_file_is_one_document_at_its_own_path(tmp_path, kind):
    am.write(tmp_path / "man" / f"ls.1.{kind}", am.compressed(b".TH LS 1\nlist directory\n", kind))
    am.write(tmp_path / "man" / f"sales.csv.{kind}", am.compressed(b"region,total\nNorth,5\n", kind))
    docs, skips = _by_path(ingest_sync([tmp_path / "man"], FAST))
    assert skips == {}
    assert docs[f"ls.1.{kind}"].text == ".TH LS 1\nlist directory\n"
    sales = docs[f"sales.csv.{kind}"]
    assert sales.format == "csv" and sales.tables[0].rows == (("North", 5),)


def test_nesting_to_the_depth_limit(tmp_path):
    am.write(tmp_path / "d" / "three.zip", am.nested(3))
    am.write(tmp_path / "d" / "four.zip", am.nested(4))
    docs, skips = _by_path(ingest_sync([tmp_path / "d"], FAST))
    assert list(docs) == ["three.zip/level2.tar.gz/level3.zip/bottom.txt"]
    assert docs["three.zip/level2.tar.gz/level3.zip/bottom.txt"].text == "found at the bottom\n"
    assert skips == {"four.zip/level2.tar.gz/level3.zip/level4.tar.gz":
                     ("unsupported", "archive nested more than 3 levels deep")}


def test_hostile_names_links_and_devices_are_refused(tmp_path):
    am.write(tmp_path / "t" / "evil.tar.gz", am.tar_with_specials({"ok.txt": b"fine\n"}))
    am.write(tmp_path / "t" / "evil.zip", am.zip_bytes({"../../escape.txt": b"no\n",
                                                        "/abs/path.txt": b"no\n",
                                                        "good.txt": b"yes\n"}))
    docs, skips = _by_path(ingest_sync([tmp_path / "t"], FAST))
    assert list(docs) == ["evil.tar.gz/ok.txt", "evil.zip/good.txt"]
    reasons = {path: reason for path, (reason, _) in skips.items()}
    assert reasons == {
        "evil.tar.gz/passwd-link": "unsafe_name", "evil.tar.gz/hard-link": "unsafe_name",
        "evil.tar.gz/dev/null": "unsupported", "evil.tar.gz/pipe": "unsupported",
        "evil.tar.gz//etc/cron.d/evil": "unsafe_name",
        "evil.tar.gz/../../outside.txt": "unsafe_name",
        "evil.zip/../../escape.txt": "unsafe_name", "evil.zip//abs/path.txt": "unsafe_name"}
    assert "climbs out" in skips["evil.zip/../../escape.txt"][1]
    assert "absolute" in skips["evil.zip//abs/path.txt"][1]
    assert "/etc/passwd" in skips["evil.tar.gz/passwd-link"][1]
    assert not (tmp_path / "outside.txt").exists() and not (tmp_path.parent / "escape.txt").exists()


def test_encrypted_member_is_skipped_and_the_others_read(tmp_path):
    data = am.mark_encrypted(am.zip_bytes({"open.txt": b"open\n", "secret.txt": b"hidden\n"}),
                             "secret.txt")
    am.write(tmp_path / "locked.zip", data)
    docs, skips = _by_path(ingest_sync([tmp_path / "locked.zip"], FAST))
    assert list(docs) == ["locked.zip/open.txt"]
    assert skips == {"locked.zip/secret.txt": ("encrypted",
                                               "encrypted zip member (password-protected)")}


def test_zip_bomb_member_is_refused_while_inflating(tmp_path):
    bomb = am.zip_bomb(64 << 20)
    assert len(bomb) < 200_000
    am.write(tmp_path / "b" / "bomb.zip", bomb)
    am.write(tmp_path / "b" / "fine.txt", b"still read\n")
    started = time.monotonic()
    docs, skips = _by_path(ingest_sync([tmp_path / "b"], FAST))
    assert list(docs) == ["fine.txt"]
    reason, detail = skips["bomb.zip"]                 # 64 MiB out of ~65 KB on disk
    assert reason == "too_large" and "zip bomb" in detail and "over 200x" in detail
    assert time.monotonic() - started < 60


def test_bomb_member_inside_a_large_archive_is_refused_alone(tmp_path):
    import random
    import zipfile
    noise = random.Random(3).randbytes(1 << 20)         # incompressible: the archive is big
    bomb = am.zip_bytes({"noise.bin.txt": noise.hex().encode(), "zeros.txt": bytes(64 << 20),
                         "after.txt": b"read after the bomb\n"}, zipfile.ZIP_DEFLATED)
    am.write(tmp_path / "mixed.zip", bomb)
    docs, skips = _by_path(ingest_sync([tmp_path / "mixed.zip"], FAST))
    assert list(docs) == ["mixed.zip/noise.bin.txt", "mixed.zip/after.txt"]
    reason, detail = skips["mixed.zip/zeros.txt"]
    assert reason == "too_large" and "zip bomb" in detail


def test_tar_bomb_is_refused_by_its_ratio_to_the_bytes_on_disk(tmp_path):
    am.write(tmp_path / "bomb.tar.gz", am.tar_gz_bomb(8, 16 << 20))
    docs, skips = _by_path(ingest_sync([tmp_path / "bomb.tar.gz"], FAST))
    reason, detail = skips["bomb.tar.gz"]
    assert reason == "too_large" and "over 200x" in detail and "zip bomb" in detail
    assert len(docs) <= 1          # at most the first 16 MiB member, below the ratio floor


def test_archive_total_size_limit(tmp_path):
    members = {f"m{i}.txt": (f"line {i} " * 40_000).encode() for i in range(5)}   # 280 KB each
    am.write(tmp_path / "big.zip", am.zip_bytes(members))
    options = IngestOptions(per_file_timeout_s=20.0, workers=1, max_archive_bytes=1_000_000)
    docs, skips = _by_path(ingest_sync([tmp_path / "big.zip"], options))
    assert list(docs) == ["big.zip/m0.txt", "big.zip/m1.txt", "big.zip/m2.txt"]
    assert skips["big.zip"][0] == "too_large" and "1,000,000 byte archive limit" in skips["big.zip"][1]


def test_member_over_the_file_limit_is_skipped_alone(tmp_path):
    am.write(tmp_path / "m.zip", am.zip_bytes({"big.txt": b"word " * 100_000, "small.txt": b"ok\n"}))
    options = IngestOptions(per_file_timeout_s=20.0, workers=1, max_member_bytes=100_000)
    docs, skips = _by_path(ingest_sync([tmp_path / "m.zip"], options))
    assert list(docs) == ["m.zip/small.txt"]
    assert skips["m.zip/big.txt"][0] == "too_large"


def test_corrupt_archives_are_skipped_with_a_reason(tmp_path):
    good = am.tar_bytes({"a.txt": b"a" * 5000, "b.txt": b"b\n"})
    am.write(tmp_path / "c" / "cut.tar.gz", good[: len(good) // 2])
    am.write(tmp_path / "c" / "junk.zip", b"PK\x03\x04" + b"\x00" * 100)
    docs, skips = _by_path(ingest_sync([tmp_path / "c"], FAST))
    assert docs == {}
    assert skips["cut.tar.gz"][0] == "corrupt" or skips.get("cut.tar.gz/a.txt", ("",))[0] == "corrupt"
    assert skips["junk.zip"][0] == "corrupt"


def test_a_member_that_crashes_its_worker_is_skipped_and_the_rest_read(tmp_path):
    am.write(tmp_path / "x.zip", am.zip_bytes({"a.txt": b"a\n", "b.crash": b"boom\n",
                                               "c.txt": b"c\n", "d.hang": b"wait\n",
                                               "e.txt": b"e\n"}))
    options = IngestOptions(per_file_timeout_s=2.0, workers=1)
    result = asyncio.run(Ingestion([tmp_path / "x.zip"], options,
                                   extractor=hostile_extract.extract).run())
    docs, skips = _by_path(result)
    assert list(docs) == ["x.zip/a.txt", "x.zip/c.txt", "x.zip/e.txt"]
    assert skips["x.zip/b.crash"][0] == "crashed" and "SIGSEGV" in skips["x.zip/b.crash"][1]
    assert skips["x.zip/d.hang"][0] == "timeout"


def test_archive_progress_counts_members(tmp_path):
    am.write(tmp_path / "many.tar.gz", am.tar_bytes({f"f{i:03d}.txt": f"file {i}\n".encode()
                                                     for i in range(300)}))
    seen = []
    result = ingest_sync([tmp_path / "many.tar.gz"], FAST, on_progress=seen.append)
    assert len(result.documents) == 300
    totals = [p.files_total for p in seen]
    assert totals == sorted(totals) and totals[-1] == 301        # the archive + its members
    assert seen[-1].files_done == 301
    assert {p.current for p in seen if p.current} >= {f"many.tar.gz/f{i:03d}.txt" for i in range(300)}


async def test_cancel_inside_an_archive(tmp_path):
    am.write(tmp_path / "huge.tar.gz", am.tar_bytes({f"f{i:05d}.txt": f"file {i}\n".encode()
                                                     for i in range(20_000)}))
    started = asyncio.Event()

    def on_progress(p):
        if p.files_done >= 20:
            started.set()
    task = asyncio.ensure_future(ingest([tmp_path], IngestOptions(workers=1),
                                        on_progress=on_progress))
    await asyncio.wait_for(started.wait(), 60)
    began = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - began < 5


def test_reading_archives_can_be_turned_off(tmp_path):
    am.write(tmp_path / "a.zip", am.zip_bytes({"x.txt": b"x\n"}))
    am.write(tmp_path / "b.txt.gz", am.compressed(b"y\n", "gz"))
    docs, skips = _by_path(ingest_sync([tmp_path], IngestOptions(workers=1, archives=False)))
    assert docs == {}
    assert skips == {"a.zip": ("unsupported", "zip archive (reading archives is off)"),
                     "b.txt.gz": ("unsupported", "gzip data (reading archives is off)")}


def test_docx_inside_a_zip_is_a_document_not_a_folder(tmp_path):
    docx = makers.write_docx(tmp_path / "memo.docx").read_bytes()
    am.write(tmp_path / "in" / "bundle.zip", am.zip_bytes({"memo.docx": docx,
                                                           "renamed.bin": docx}))
    docs, skips = _by_path(ingest_sync([tmp_path / "in"], FAST))
    assert docs["bundle.zip/memo.docx"].format == "docx"
    assert skips == {"bundle.zip/renamed.bin": ("duplicate", "duplicate of bundle.zip/memo.docx")}


def test_a_header_that_lies_about_the_size_is_not_believed(tmp_path):
    data = am.zip_bytes({"small.txt": b"honest\n", "liar.txt": b"x" * 3_000_000})
    am.write(tmp_path / "liar.zip", am.lie_about_size(data, "liar.txt", 100))
    docs, skips = _by_path(ingest_sync([tmp_path / "liar.zip"], FAST))
    assert list(docs) == ["liar.zip/small.txt"]
    assert skips["liar.zip/liar.txt"][0] == "corrupt" and "CRC" in skips["liar.zip/liar.txt"][1]


def test_single_compressed_file_over_the_limit_is_too_large(tmp_path):
    am.write(tmp_path / "big.txt.gz", am.compressed(b"word " * 100_000, "gz"))
    options = IngestOptions(per_file_timeout_s=20.0, workers=1, max_member_bytes=100_000)
    docs, skips = _by_path(ingest_sync([tmp_path / "big.txt.gz"], options))
    assert docs == {} and skips["big.txt.gz"][0] == "too_large"
