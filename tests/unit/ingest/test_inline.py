"""Small plain-text files are read in the app's own process (core/ingest/inline.py):
the same Documents and Skips the workers give, and no worker process for them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from core.ingest import IngestOptions, ingest_sync
from core.ingest.extract import extract_data
from core.ingest.inline import INLINE_MAX_BYTES
from core.ingest.run import Ingestion
from tests.unit.ingest import makers

ROOT = Path(__file__).resolve().parents[3]
FAST = IngestOptions(per_file_timeout_s=20.0, workers=2)


def text_files(folder: Path) -> None:
    folder.mkdir()
    (folder / "notes.txt").write_text("plain ASCII notes\nsecond line\n")
    (folder / "latin.txt").write_bytes("Müller zahlt 12 € für Käse und Brötchen, ça va?\n".encode("cp1252") * 40)
    (folder / "bom16.txt").write_bytes("\ufeffutf-16 with a BOM\r\nline two\r\n".encode("utf-16-le"))
    (folder / "readme.md").write_text("# Title\n\nSome *markdown*.\n")
    (folder / "script.py").write_text("def f(x):\n    return x * 2\n")
    (folder / "table.csv").write_text("name,amount,date\nann,12.5,2024-03-01\nbob,,2024-03-02\n")
    (folder / "table.tsv").write_text("a\tb\n1\t2\n")
    (folder / "blank.txt").write_text("   \n\t\n")
    (folder / "empty.txt").write_text("")
    (folder / "fake.pdf").write_text("this is not a pdf")
    (folder / "big.log").write_text("2024-03-01 INFO a log line of some length\n" * (INLINE_MAX_BYTES // 40))


def comparable(result) -> list:
    docs = [(d.path, d.format, d.text, d.chars, d.size, d.sha256, d.spans, d.tables) for d in result.documents]
    skips = [(s.path, s.reason, s.detail, s.size) for s in result.skipped]
    return [docs, skips]


def test_inline_reading_gives_what_the_workers_give(tmp_path):
    text_files(tmp_path / "t")
    inline = ingest_sync([tmp_path / "t"], FAST)
    # a supplied extractor sends every file to the workers: the same function, in a worker
    import asyncio
    workers = asyncio.run(Ingestion([tmp_path / "t"], FAST, extractor=extract_data).run())
    assert comparable(inline) == comparable(workers)
    assert {d.path for d in inline.documents} >= {"notes.txt", "latin.txt", "bom16.txt", "table.csv", "big.log"}
    assert {s.path for s in inline.skipped} == {"blank.txt", "empty.txt", "fake.pdf"}
    latin = next(d for d in inline.documents if d.path == "latin.txt")
    assert "Müller zahlt 12 €" in latin.text
    table = next(d for d in inline.documents if d.path == "table.csv")
    assert table.tables and table.tables[0].rows[1][1] is None and table.tables[0].rows[0][1] == 12.5


CHILDREN = r"""
import sys
from core.ingest import IngestOptions, ingest_sync
result = ingest_sync(sys.argv[1:], IngestOptions(per_file_timeout_s=20.0, workers=2))
import os, glob
kids = []
for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
    try:
        kids += open(path).read().split()
    except FileNotFoundError:        # a thread that ended meanwhile
        pass
print(len(result.documents), len(kids))
"""


def children_after(paths: list[Path]) -> tuple[int, int]:
    proc = subprocess.run([sys.executable, "-c", CHILDREN, *map(str, paths)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    documents, children = proc.stdout.split()
    return int(documents), int(children)


def test_text_alone_starts_no_worker_process_and_a_pdf_does(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    (tmp_path / "b.md").write_text("# two\n")
    assert children_after([tmp_path / "a.txt", tmp_path / "b.md"]) == (2, 0)
    (tmp_path / "c.pdf").write_bytes(makers.pdf_bytes(["a page of text"]))
    documents, children = children_after([tmp_path / "a.txt", tmp_path / "c.pdf"])
    assert documents == 2 and children >= 1           # the fork server, with its workers
