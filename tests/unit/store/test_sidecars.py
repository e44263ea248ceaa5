"""Sidecar texts (texts/<sha256>.txt beside the database) go once no stored run names them:
when a run is deleted, and when the store is opened (old ones only, a bounded number), on a
real store with sidecars written by real ingestion."""

from __future__ import annotations

import os
import time

from core.ingest import IngestOptions, ingest_sync
from core.store import RunStore, sidecars
from tests.support.big_files import write_mbox


def _mailbox(tmp_path, name: str, home) -> object:
    """A mailbox read as a big file: its text goes to a sidecar in the store's folder."""
    path = tmp_path / name
    write_mbox(path, 300_000, body=2_000 + sum(map(ord, name)))      # each its own text
    options = IngestOptions(workers=1, stream_min_bytes=100_000, spool_dir=str(home / "texts"))
    [doc] = ingest_sync([path], options).documents
    assert os.path.exists(doc.__dict__["_text_from"].path)
    return doc


def _sidecar(home, doc) -> str:
    return str(home / "texts" / (doc.text_sha256 + ".txt"))


def test_deleting_a_run_removes_the_sidecars_no_other_run_names(tmp_path, home, store: RunStore):
    a, b = _mailbox(tmp_path, "a.mbox", home), _mailbox(tmp_path, "b.mbox", home)
    store.save_sources("r1", [a, b], [])
    store.save_sources("r2", [b], [])
    store.delete_run("r1")
    assert not os.path.exists(_sidecar(home, a))
    assert os.path.exists(_sidecar(home, b))                 # r2 still reads it
    assert [d.path for d in store.documents("r2")] == ["b.mbox"]
    store.delete_run("r2")
    assert os.listdir(home / "texts") == []


def test_opening_the_store_removes_old_unnamed_sidecars_a_bounded_number_at_a_time(tmp_path, home):
    store = RunStore.open()
    named = _mailbox(tmp_path, "named.mbox", home)
    store.save_sources("r1", [named], [])
    orphans = [_mailbox(tmp_path, f"orphan{i}.mbox", home) for i in range(3)]
    fresh = _mailbox(tmp_path, "fresh.mbox", home)           # in Sources, asked about later
    partial = home / "texts" / ".partial-0123"
    partial.write_bytes(b"a read that crashed")
    day_ago = time.time() - sidecars.GRACE_S - 60
    for path in [_sidecar(home, d) for d in (named, *orphans)] + [str(partial)]:
        os.utime(path, (day_ago, day_ago))
    store.close()
    unswept = RunStore(store.path)                           # opened without its sweep
    assert sidecars.sweep(unswept.db, home / "texts", limit=2) <= 2      # bounded: two looked at
    unswept.close()
    assert len(os.listdir(home / "texts")) >= 4
    store = RunStore.open()                                  # the rest at the next start
    assert sorted(os.listdir(home / "texts")) == sorted(
        os.path.basename(_sidecar(home, d)) for d in (named, fresh))
    assert store.documents("r1")[0].text.startswith("--- message 1 ---")
    store.close()


async def test_a_document_held_in_sources_for_days_keeps_its_sidecar_for_its_run(tmp_path, home, server):
    """The run opens its store (and so sweeps) before it reads its documents back: a big
    file read two days ago and asked about now still has its text (the run marks its
    sidecars in use first), and a sidecar no document holds still goes."""
    from app.run_service import RunRequest, RunService
    from tests.support.trust_runs import code, config
    import asyncio
    held, orphan = await asyncio.to_thread(lambda: [_mailbox(tmp_path, n, home) for n in ("held.mbox", "orphan.mbox")])
    two_days_ago = time.time() - 2 * sidecars.GRACE_S
    for doc in (held, orphan):
        os.utime(_sidecar(home, doc), (two_days_ago, two_days_ago))
    server.script("root", replies=[code("FINAL(str(len(context)))")])
    outcome = await RunService().run(RunRequest.ask("How many characters are there?", [held], config(server)))
    assert outcome.status == "finished", outcome.error
    assert int(outcome.answer) >= held.chars             # the whole text was read back into context
    assert os.path.exists(_sidecar(home, held))
    assert not os.path.exists(_sidecar(home, orphan))


def test_an_offsets_index_goes_with_its_text_and_alone_once_old_and_unnamed(tmp_path, home, store: RunStore):
    from core.ingest.text_window import text_window
    options = IngestOptions(workers=1, stream_min_bytes=100_000, spool_dir=str(home / "texts"))
    for name, body in (("a.mbox", 2_000), ("b.mbox", 2_100)):
        write_mbox(tmp_path / name, 300_000, body=body, intl=True)      # not ASCII: an index is built
    a, b = ingest_sync([tmp_path / "a.mbox", tmp_path / "b.mbox"], options).documents
    assert text_window(a) is not None and text_window(b) is not None
    index = {d.path: home / "texts" / (d.text_sha256 + ".idx") for d in (a, b)}
    assert all(p.exists() for p in index.values())
    store.save_sources("r1", [a], [])
    day_ago = time.time() - sidecars.GRACE_S - 60
    for path in index.values():                      # b's text is young: held in Sources
        os.utime(path, (day_ago, day_ago))
    sidecars.sweep(store.db, home / "texts")
    assert index["a.mbox"].exists() and not index["b.mbox"].exists()
    assert os.path.exists(_sidecar(home, b))
    assert text_window(b)[:17] == "--- message 1 ---" and index["b.mbox"].exists()     # built again
    store.delete_run("r1")
    assert not os.path.exists(_sidecar(home, a)) and not index["a.mbox"].exists()
