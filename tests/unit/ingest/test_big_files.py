"""Big files in real worker processes: read a piece at a time (the text is not held, it is read
back from the file or a sidecar), the same text as the whole-file readers make, progress in
bytes, a per-file timeout that measures a stall and not the size, and no size wall unless
the user sets one (then the skip says how to raise it)."""

from __future__ import annotations

import os

from core.ingest import IngestOptions, ingest_sync
from core.ingest.bigfile import SidecarText
from core.repl.context_file import head_of
from tests.support.big_files import PLANT, write_csv, write_log, write_mbox

STREAM = dict(stream_min_bytes=1 << 20, workers=1)


def _both(path, tmp_path):
    whole = ingest_sync([path], IngestOptions(workers=1, spool_dir=str(tmp_path / "spool")))
    big = ingest_sync([path], IngestOptions(spool_dir=str(tmp_path / "spool"), **STREAM))
    assert len(whole.documents) == len(big.documents) == 1, (whole.skipped, big.skipped)
    return whole.documents[0], big.documents[0]


def test_a_mailbox_is_walked_message_by_message_into_a_sidecar(tmp_path):
    path = tmp_path / "export.mbox"
    messages, planted = write_mbox(path, 3 << 20)
    whole, big = _both(path, tmp_path)
    # Both keep the text in the same sidecar: walked message by message, or whole (a small file).
    assert big.held is False and whole.held is False
    assert big.__dict__["_text_from"] == whole.__dict__["_text_from"]
    assert isinstance(big.__dict__["_text_from"], SidecarText)
    assert big.text == whole.text and big.spans == whole.spans and big.sha256 == whole.sha256
    assert (big.chars, big.width, big.format) == (whole.chars, 1, "mbox")
    assert len(big.spans) == messages and big.text.count(PLANT) == planted
    assert big.spans[7].address == "message 8 (Report 7)"
    assert head_of(big, 40) == whole.text[:40]
    assert sorted(os.listdir(tmp_path / "spool")) == [big.text_sha256 + ".txt"]


def test_a_log_that_is_its_own_utf8_is_read_back_from_itself(tmp_path):
    path = tmp_path / "server.log"
    lines, errors = write_log(path, 3 << 20)
    whole, big = _both(path, tmp_path)
    assert big.held is False and big.text_sha256 == big.sha256
    assert big.text == whole.text and big.text.count(" ERROR ") == errors
    assert not (tmp_path / "spool").exists() or os.listdir(tmp_path / "spool") == []


def test_a_csv_in_another_encoding_with_crlf_gets_a_sidecar(tmp_path):
    path = tmp_path / "sales.csv"
    rows = "".join(f"{i},Zürich,{i * 3}.50\r\n" for i in range(120_000))
    path.write_bytes(("id,city,amount\r\n" + rows).encode("cp1252"))
    whole, big = _both(path, tmp_path)
    assert isinstance(big.__dict__["_text_from"], SidecarText)
    assert big.text == whole.text and "\r" not in big.text and "Zürich" in big.text
    assert big.tables == () and len(whole.tables) == 1     # a streamed CSV stays text


def test_progress_counts_bytes_and_the_timeout_measures_a_stall(tmp_path):
    path = tmp_path / "export.mbox"
    write_mbox(path, 24 << 20)
    size = path.stat().st_size
    seen = []
    # 2 s without progress would be a stall; the whole file takes longer than that to read.
    result = ingest_sync([path], IngestOptions(per_file_timeout_s=2.0, spool_dir=str(tmp_path / "spool"),
                                               **STREAM), on_progress=seen.append)
    assert [d.path for d in result.documents] == ["export.mbox"], result.skipped
    during = [p.bytes_done for p in seen if 0 < p.bytes_done < size]
    assert len(during) >= 3 and during == sorted(during)
    assert any("MB read" in p.step for p in seen)


def test_no_size_wall_unless_the_user_sets_one(tmp_path):
    write_csv(tmp_path / "sales.csv", 3 << 20)
    assert IngestOptions().max_file_bytes == 0
    read = ingest_sync([tmp_path], IngestOptions(workers=1))
    assert [d.path for d in read.documents] == ["sales.csv"]
    limited = ingest_sync([tmp_path], IngestOptions(workers=1, max_file_bytes=1 << 20))
    skip = limited.skipped[0]
    assert skip.reason == "too_large"
    assert "over the 1,048,576 byte limit" in skip.detail and "--max-file-mb" in skip.detail \
        and "Settings > Documents > Largest file" in skip.detail


def test_the_fork_server_and_resource_tracker_stop_once_reading_is_done(tmp_path):
    import multiprocessing.forkserver as forkserver
    import multiprocessing.resource_tracker as resource_tracker
    from core.ingest.workers import stop_fork_server
    path = tmp_path / "server.log"
    write_log(path, 3 << 20)                          # past the in-process size: a worker reads it
    assert ingest_sync([path], IngestOptions(workers=1)).documents
    pids = [forkserver._forkserver._forkserver_pid, resource_tracker._resource_tracker._pid]
    assert all(pids) and all(os.path.exists(f"/proc/{pid}") for pid in pids)
    stop_fork_server()
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)
    assert ingest_sync([path], IngestOptions(workers=1)).documents     # started again when needed
    stop_fork_server()
