"""Sources and blobs: each text stored once, compressed, and enough to run again."""

from __future__ import annotations

import hashlib
import zlib

import pytest

from core.ingest.model import Document, Skip, Span
from core.store import MissingTextsError, RunStore


def doc(path: str, text: str, fmt: str = "text", spans: tuple = ()) -> Document:
    return Document(path=path, source_path=f"/data/{path}", format=fmt, text=text, chars=len(text),
                    size=len(text.encode()), sha256=hashlib.sha256(f"file {path}".encode()).hexdigest(), spans=spans)


def docs():
    csv = "date,amount\n" + "".join(f"2023-01-{d:02d},{d * 100}\n" for d in range(1, 29))
    return [doc("sales/2023.csv", csv, "csv", spans=(Span(0, 12, "row 1"), Span(12, 29, "row 2"))),
            doc("notes.txt", "Meeting notes: <script>alert(1)</script> ünïcode ✓\n" * 50)]


def test_documents_come_back_exactly(store: RunStore):
    store.save_sources("r1", docs(), [Skip("secret.bin", "/data/secret.bin", "binary", "no text found")])
    back = store.documents("r1")
    assert [d.path for d in back] == ["sales/2023.csv", "notes.txt"]
    for original, stored in zip(docs(), back):
        assert stored.text == original.text and stored.chars == len(original.text)
        assert stored.format == original.format and stored.sha256 == original.sha256
    assert back[0].spans == ((0, 12, "row 1"), (12, 29, "row 2"))
    assert back[0].spans[1].address == "row 2" and back[0].spans[1].start == 12
    assert back[0].source_path == "/data/sales/2023.csv" and back[0].size == docs()[0].size
    assert [(s.path, s.reason, s.detail, s.source_path) for s in store.skipped("r1")] == [
        ("secret.bin", "binary", "no text found", "/data/secret.bin")]
    rows = store.sources("r1")
    assert [r["status"] for r in rows] == ["read", "read", "skipped"]
    assert [r["position"] for r in rows] == [0, 1, 2]


def test_a_text_is_stored_once_and_compressed(store: RunStore):
    store.save_sources("r1", docs(), [])
    store.save_sources("r2", docs(), [])
    store.save_sources("r2", docs(), [])          # saving again replaces, never duplicates
    assert store.db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 3    # 2 texts + 1 span table
    assert store.db.execute("SELECT count(*) FROM sources WHERE run_id = 'r2'").fetchone()[0] == 2
    size, stored = store.db.execute(
        "SELECT size, length(content) FROM blobs WHERE sha256 = ?", [store.sources("r1")[1]["text_sha256"]]).fetchone()
    assert stored < size / 5


def test_texts_are_stored_as_zstandard_and_older_zlib_blobs_still_read(store: RunStore):
    """Blobs carry their codec: new texts are zstd; a store written before keeps its zlib
    blobs, and a run that names one reads it back unchanged."""
    store.save_sources("r1", docs(), [])
    assert {row[0] for row in store.db.execute("SELECT codec FROM blobs")} == {"zstd"}
    text_sha = store.sources("r1")[1]["text_sha256"]
    # the blob as an earlier version stored it: zlib level 1, codec 'zlib'
    data = docs()[1].text.encode("utf-8")
    store.db.execute("UPDATE blobs SET codec = 'zlib', content = ? WHERE sha256 = ?", [zlib.compress(data, 1), text_sha])
    store.db.conn.commit()
    assert [d.text for d in store.documents("r1")] == [d.text for d in docs()]
    store.db.execute("UPDATE blobs SET codec = 'brotli' WHERE sha256 = ?", [text_sha])
    store.db.conn.commit()
    with pytest.raises(ValueError, match="unknown blob codec 'brotli'"):
        store.documents("r1")


def test_deleting_a_run_keeps_texts_other_runs_use(store: RunStore):
    store.save_sources("r1", docs(), [])
    store.save_sources("r2", docs()[:1], [])
    store.delete_run("r1")
    assert [d.path for d in store.documents("r2")] == ["sales/2023.csv"]
    assert store.db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 2     # csv text + its spans
    store.delete_run("r2")
    assert store.db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 0


def test_missing_texts_are_a_clear_error(store: RunStore):
    store.save_sources("r1", docs(), [])
    store.db.execute("DELETE FROM blobs")
    store.db.conn.commit()
    with pytest.raises(MissingTextsError, match="--include-texts"):
        store.documents("r1")
