"""Ingestion figures (printed, never asserted):

    .venv/bin/python tests/bench/bench_ingest.py

1. throughput on 1,000 mixed files (MB/s of text out, files/s)
2. PDF pages per second on a generated 200-page PDF
3. time to first progress report for a 10,000-file folder
"""

from __future__ import annotations

import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.ingest import ingest_sync  # noqa: E402
from core.ingest.extract import extract_file  # noqa: E402
from core.ingest.model import FileEntry  # noqa: E402
from tests.unit.ingest import makers  # noqa: E402

WORDS = ("revenue budget forecast region north south contract clause party invoice amount "
         "total quarter analysis report meeting decision risk supplier customer").split()


def prose(rng: random.Random, words: int) -> str:
    lines = []
    for _ in range(max(1, words // 12)):
        lines.append(" ".join(rng.choice(WORDS) for _ in range(12)) + ".")
    return "\n".join(lines)


def make_mixed(folder: Path, count: int = 1000) -> None:
    rng = random.Random(1)
    folder.mkdir(parents=True)
    kinds = (["txt"] * 300 + ["md"] * 100 + ["py"] * 100 + ["csv"] * 100 + ["json"] * 50
             + ["html"] * 100 + ["pdf"] * 100 + ["docx"] * 50 + ["xlsx"] * 30 + ["pptx"] * 30
             + ["eml"] * 40)[:count]
    templates = {
        "docx": makers.write_docx(folder / "t.docx").read_bytes(),
        "xlsx": makers.write_xlsx(folder / "t.xlsx").read_bytes(),
        "pptx": makers.write_pptx(folder / "t.pptx").read_bytes(),
    }
    for name in ("t.docx", "t.xlsx", "t.pptx"):
        (folder / name).unlink()
    for i, kind in enumerate(kinds):
        sub = folder / f"dir{i % 20:02d}"
        sub.mkdir(exist_ok=True)
        words = rng.randint(200, 4000)
        if kind in ("txt", "md", "py"):
            data = prose(rng, words).encode()
        elif kind == "csv":
            data = "\n".join(f"{i},{rng.choice(WORDS)},{rng.random():.4f}"
                             for i in range(words // 3)).encode()
        elif kind == "json":
            data = ("[" + ",".join(f'{{"id": {n}, "w": "{rng.choice(WORDS)}"}}'
                                   for n in range(words // 4)) + "]").encode()
        elif kind == "html":
            data = (f"<html><head><style>p{{}}</style></head><body><p>"
                    f"{prose(rng, words)}</p></body></html>").encode()
        elif kind == "pdf":
            data = makers.pdf_bytes([prose(rng, 300) for _ in range(5)])
        elif kind == "eml":
            data = makers.email_message(f"Mail {i}", prose(rng, words)).as_bytes()
        else:
            data = templates[kind]
        (sub / f"f{i:04d}.{kind}").write_bytes(data)


def bench_mixed(base: Path) -> None:
    folder = base / "mixed"
    make_mixed(folder)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    start = time.perf_counter()
    result = ingest_sync([folder])
    seconds = time.perf_counter() - start
    text_mb = sum(len(d.text.encode()) for d in result.documents) / 1e6
    print(f"1,000 mixed files ({size / 1e6:.1f} MB on disk): {seconds:.2f} s, "
          f"{len(result.documents)} documents, {len(result.skipped)} skipped; "
          f"{text_mb:.1f} MB of text -> {text_mb / seconds:.1f} MB/s text out, "
          f"{1000 / seconds:.0f} files/s")


def bench_pdf(base: Path) -> None:
    rng = random.Random(2)
    path = base / "long.pdf"
    path.write_bytes(makers.pdf_bytes([f"Page {n}\n" + prose(rng, 400) for n in range(200)]))
    entry = FileEntry("long.pdf", str(path), path.stat().st_size)
    extract_file(entry, 10**9)          # warm imports
    start = time.perf_counter()
    document = extract_file(entry, 10**9)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    ingest_sync([path])
    total = time.perf_counter() - start
    print(f"200-page PDF ({path.stat().st_size / 1e6:.2f} MB, {document.chars:,} chars): "
          f"{200 / seconds:.0f} pages/s extraction ({seconds * 1000:.0f} ms); "
          f"{total * 1000:.0f} ms through ingest() incl. worker start")


def bench_first_progress(base: Path) -> None:
    folder = base / "many"
    for i in range(10_000):
        sub = folder / f"d{i // 500:02d}"
        if i % 500 == 0:
            sub.mkdir(parents=True)
        (sub / f"{i:05d}.txt").write_bytes(b"tiny file\n")
    marks: dict[str, float] = {}
    start = time.perf_counter()

    def on_progress(p) -> None:
        now = time.perf_counter() - start
        marks.setdefault("first", now)
        if p.files_total:
            marks.setdefault("counted", now)
        if p.files_done:
            marks.setdefault("first_done", now)

    result = ingest_sync([folder], on_progress=on_progress)
    total = time.perf_counter() - start
    print(f"10,000-file folder: first progress report {marks['first'] * 1000:.1f} ms, "
          f"first with files_total > 0 {marks['counted'] * 1000:.1f} ms, first file done "
          f"{marks['first_done'] * 1000:.0f} ms, all done {total:.2f} s "
          f"({len(result.documents) / total:.0f} files/s)")


def main() -> None:
    print(f"{platform.platform()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} cores (shared with other jobs)")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        bench_first_progress(base)
        bench_pdf(base)
        bench_mixed(base)


if __name__ == "__main__":
    main()
