"""Benchmark 5, ingestion (figures printed, never asserted):

    .venv/bin/python tests/bench/bench_ingest.py [--quick] [--json OUT]

1. throughput on 1,000 mixed files (MB/s of text out, files/s) through
   ingest(), against the bound of the same files extracted one after another
   in this process (extract_file in a plain loop: no walk, no worker pool)
2. PDF pages per second on a generated 200-page PDF (extract_file), against
   bare pypdfium2 (open, get_textpage().get_text_range() per page)
3. time to first progress report for a 10,000-file folder
--quick: 300 files, a 50-page PDF, a 2,000-file folder.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.ingest import ingest_sync  # noqa: E402
from core.ingest.extract import extract_file  # noqa: E402
from core.ingest.model import FileEntry  # noqa: E402
from tests.bench.report import load1, row, standalone  # noqa: E402
from tests.unit.ingest import makers  # noqa: E402

WORDS = ("revenue budget forecast region north south contract clause party invoice amount "
         "total quarter analysis report meeting decision risk supplier customer").split()


def prose(rng: random.Random, words: int) -> str:
    lines = []
    for _ in range(max(1, words // 12)):
        lines.append(" ".join(rng.choice(WORDS) for _ in range(12)) + ".")
    return "\n".join(lines)


def make_mixed(folder: Path, count: int = 1000) -> None:
    """`count` files in the proportions of 1,000: 300 txt, 100 md, 100 py, ... 40 eml."""
    rng = random.Random(1)
    folder.mkdir(parents=True)
    kinds = (["txt"] * 300 + ["md"] * 100 + ["py"] * 100 + ["csv"] * 100 + ["json"] * 50
             + ["html"] * 100 + ["pdf"] * 100 + ["docx"] * 50 + ["xlsx"] * 30 + ["pptx"] * 30
             + ["eml"] * 40)
    kinds = kinds[::max(1, round(len(kinds) / count))][:count] if count < len(kinds) else kinds
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


def bench_mixed(base: Path, count: int) -> dict:
    folder = base / "mixed"
    make_mixed(folder, count)
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in files)
    start = time.perf_counter()
    result = ingest_sync([folder])
    seconds = time.perf_counter() - start
    text_mb = sum(len(d.text.encode()) for d in result.documents) / 1e6
    load = load1()
    start = time.perf_counter()
    for p in files:         # the bound: the same extraction, one file after another, no pool
        try:
            extract_file(FileEntry(str(p.relative_to(folder)), str(p), p.stat().st_size), 10**9)
        except Exception as exc:  # noqa: BLE001 - a skip in the bound is a skip in ingest() too
            if type(exc).__name__ != "ExtractError":
                raise
    sequential = time.perf_counter() - start
    return {"files": len(files), "disk_mb": size / 1e6, "seconds": seconds, "documents": len(result.documents),
            "skipped": len(result.skipped), "text_mb": text_mb, "text_mb_s": text_mb / seconds,
            "files_s": len(files) / seconds, "sequential_s": sequential, "load1": load}


def bench_pdf(base: Path, pages: int) -> dict:
    import pypdfium2 as pdfium
    rng = random.Random(2)
    path = base / "long.pdf"
    path.write_bytes(makers.pdf_bytes([f"Page {n}\n" + prose(rng, 400) for n in range(pages)]))
    entry = FileEntry("long.pdf", str(path), path.stat().st_size)
    extract_file(entry, 10**9)          # warm imports
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        document = extract_file(entry, 10**9)
        runs.append(time.perf_counter() - start)
    seconds = min(runs)
    bare = []
    for _ in range(3):
        start = time.perf_counter()
        pdf = pdfium.PdfDocument(str(path))
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            textpage.get_text_range()
            textpage.close()
            page.close()
        pdf.close()
        bare.append(time.perf_counter() - start)
    start = time.perf_counter()
    ingest_sync([path])
    total = time.perf_counter() - start
    return {"pages": pages, "pdf_mb": path.stat().st_size / 1e6, "chars": document.chars,
            "extract_s": seconds, "pages_s": pages / seconds, "bare_pdfium_s": min(bare),
            "bare_pages_s": pages / min(bare), "through_ingest_s": total, "load1": load1()}


def bench_first_progress(base: Path, count: int) -> dict:
    folder = base / "many"
    for i in range(count):
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
    return {"files": count, "first_progress_s": marks["first"], "counted_s": marks.get("counted"),
            "first_done_s": marks.get("first_done"), "total_s": total,
            "files_s": len(result.documents) / total, "load1": load1()}


def run(quick: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        progress = bench_first_progress(base, 2_000 if quick else 10_000)
        pdf = bench_pdf(base, 50 if quick else 200)
        mixed = bench_mixed(base, 300 if quick else 1000)
    m, p, f = mixed, pdf, progress
    rows = [
        row(f"{m['files']:,} mixed files: text out", m["text_mb_s"], "MB/s",
            bound=f"{m['text_mb']:.1f} MB text from {m['disk_mb']:.0f} MB in {m['seconds']:.2f} s",
            load=m["load1"]),
        row(f"{m['files']:,} mixed files: ingest() wall", m["seconds"], "s",
            bound=f"one by one, no pool {m['sequential_s']:.2f} s", ratio=m["seconds"] / m["sequential_s"],
            load=m["load1"], note=f"{m['documents']} documents, {m['skipped']} skipped; "
                                   f"{m['files_s']:.0f} files/s"),
        row(f"{p['pages']}-page PDF: extraction", p["pages_s"], "pages/s",
            bound=f"bare pypdfium2 {p['bare_pages_s']:.0f} pages/s", ratio=p["bare_pages_s"] / p["pages_s"],
            load=p["load1"], note=f"{p['extract_s'] * 1000:.0f} ms; {p['through_ingest_s'] * 1000:.0f} ms "
                                  "through ingest() with its worker start"),
        row(f"{f['files']:,}-file folder: first progress report", f["first_progress_s"] * 1000, "ms",
            load=f["load1"], note=f"first count {(f['counted_s'] or 0) * 1000:.0f} ms, first file done "
                                  f"{(f['first_done_s'] or 0) * 1000:.0f} ms, all {f['total_s']:.2f} s "
                                  f"({f['files_s']:.0f} files/s)"),
    ]
    return {"name": "5. ingestion", "rows": rows, "details": {"mixed": m, "pdf": p, "first_progress": f}}


if __name__ == "__main__":
    standalone("5. ingestion", run)
