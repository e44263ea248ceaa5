"""Benchmark 8, documents beyond plain text (figures printed, never asserted):

    .venv/bin/python tests/bench/bench_documents.py [--quick] [--json OUT]

1. archives: the mixed files of bench_ingest as a folder, a .zip and a .tar.gz,
   each through ingest() (MB/s of text out, files/s)
2. OCR: scanned PDF pages rendered from known text (tests/unit/ingest/scans.py),
   clean and degraded (tilted, blurred, speckled, JPEG), through ingest(ocr=True): pages/s with the default
   workers and with one, character accuracy (1 - CER) per page
3. duplicates: a folder plus two copies of it (one zipped): characters that
   reach the context with and without reading duplicates once
4. tables: a 100,000-row CSV and a 20,000-row XLSX through ingest() with tables
   on and off, and writing + reading the tables file the REPL worker loads
--quick: 300 mixed files, 4 OCR pages, 20,000 CSV rows, 4,000 XLSX rows.
"""

from __future__ import annotations

import shutil
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.ingest import IngestOptions, ingest_sync  # noqa: E402
from core.ingest.model import Document  # noqa: E402
from core.repl.context_file import TABLES_NAME, read_context, write_context  # noqa: E402
from tests.bench.bench_ingest import make_mixed  # noqa: E402
from tests.bench.report import load1, row, standalone  # noqa: E402
from tests.unit.ingest import scans, table_makers  # noqa: E402


def _text_mb(result) -> float:
    return sum(len(d.text.encode()) for d in result.documents) / 1e6


def bench_archives(base: Path, count: int) -> dict:
    folder = base / "mixed"
    make_mixed(folder, count)
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    zipped, tarred = base / "mixed.zip", base / "mixed.tar.gz"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        for p in files:
            archive.write(p, str(p.relative_to(folder)))
    with tarfile.open(tarred, "w:gz") as archive:
        for p in files:
            archive.add(p, str(p.relative_to(folder)))
    out = {"files": len(files), "disk_mb": sum(p.stat().st_size for p in files) / 1e6}
    for name, path in (("folder", folder), ("zip", zipped), ("tar_gz", tarred)):
        start = time.perf_counter()
        result = ingest_sync([path])
        seconds = time.perf_counter() - start
        out[name] = {"seconds": seconds, "documents": len(result.documents),
                     "skipped": len(result.skipped), "text_mb": _text_mb(result),
                     "text_mb_s": _text_mb(result) / seconds,
                     "files_s": (len(result.documents) + len(result.skipped)) / seconds,
                     "archive_mb": path.stat().st_size / 1e6 if path.is_file() else None}
    out["load1"] = load1()
    return out


def bench_ocr(base: Path, pages: int) -> dict:
    texts = [scans.TEXTS[i % len(scans.TEXTS)] for i in range(pages)]
    out: dict = {"pages": pages}
    for label, degrade in (("clean", False), ("degraded", True)):
        path = base / f"scan-{label}.pdf"
        path.write_bytes(scans.scanned_pdf(texts, dpi=200, degrade=degrade))
        figures = {}
        for lanes in (0, 1):
            start = time.perf_counter()
            result = ingest_sync([path], IngestOptions(ocr=True, workers=lanes))
            figures[f"workers_{lanes or 'default'}_s"] = time.perf_counter() - start
        doc = result.documents[0]
        scores = []
        for number, truth in enumerate(texts, 1):
            span = next(s for s in doc.spans if s.address == f"page {number}")
            scores.append(scans.accuracy(truth, doc.text[span.start:span.end].split("\n", 1)[1]))
        figures.update(ocr_pages=len(doc.ocr_pages), accuracy_mean=sum(scores) / len(scores),
                       accuracy_min=min(scores),
                       pages_s_default=pages / figures["workers_default_s"],
                       pages_s_one=pages / figures["workers_1_s"])
        out[label] = figures
    # One PDF is read by one worker: with one file per core the cores are all busy.
    split = base / "split"
    split.mkdir()
    for i in range(pages):
        (split / f"p{i:03d}.pdf").write_bytes(scans.scanned_pdf([texts[i]], dpi=200))
    start = time.perf_counter()
    ingest_sync([split], IngestOptions(ocr=True))
    out["one_file_per_page_s"] = time.perf_counter() - start
    out["one_file_per_page_pages_s"] = pages / out["one_file_per_page_s"]
    out["load1"] = load1()
    return out


def bench_duplicates(base: Path, count: int) -> dict:
    tree = base / "dups"
    make_mixed(tree / "2024", count)
    shutil.copytree(tree / "2024", tree / "backup")
    with zipfile.ZipFile(tree / "export.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for p in sorted((tree / "2024").rglob("*")):
            if p.is_file():
                archive.write(p, str(p.relative_to(tree)))
    start = time.perf_counter()
    result = ingest_sync([tree])
    seconds = time.perf_counter() - start
    duplicates = [s for s in result.skipped if s.reason == "duplicate"]
    by_path = {d.path: d for d in result.documents}
    chars_without = result.total_chars + sum(
        by_path[s.detail[len("duplicate of "):]].chars for s in duplicates)
    return {"files": len(result.documents) + len(result.skipped),
            "documents": len(result.documents), "duplicates": len(duplicates),
            "chars": result.total_chars, "chars_without_dedup": chars_without,
            "saved": 1 - result.total_chars / chars_without, "seconds": seconds, "load1": load1()}


def bench_tables(base: Path, csv_rows: int, xlsx_rows: int) -> dict:
    import openpyxl
    folder = base / "tables"
    folder.mkdir()
    table_makers.write_big_csv(folder / "big.csv", csv_rows)
    workbook = openpyxl.Workbook(write_only=True)
    for name in ("Orders", "Returns"):
        sheet = workbook.create_sheet(name)
        sheet.append(["id", "date", "region", "amount", "note"])
        for i in range(xlsx_rows // 2):
            sheet.append([i, f"2024-03-{i % 28 + 1:02d}", ("N", "S")[i % 2], i * 0.25,
                          None if i % 5 else "check"])
    workbook.save(folder / "big.xlsx")
    out: dict = {"csv_rows": csv_rows, "xlsx_rows": xlsx_rows}
    for label, tables in (("on", True), ("off", False)):
        start = time.perf_counter()
        result = ingest_sync([folder], IngestOptions(tables=tables, workers=1))
        out[f"ingest_{label}_s"] = time.perf_counter() - start
    docs: list[Document] = ingest_sync([folder], IngestOptions(workers=1)).documents
    out["cells"] = sum(len(t.header) * (len(t.rows) + 1) for d in docs for t in d.tables)
    work = base / "ctx"
    work.mkdir()
    start = time.perf_counter()
    files = write_context(docs, work)
    out["write_with_tables_s"] = time.perf_counter() - start
    out["tables_file_mb"] = (work / TABLES_NAME).stat().st_size / 1e6
    start = time.perf_counter()
    read_context(files.path, files.index_path)
    out["read_with_tables_s"] = time.perf_counter() - start
    plain = [replace(d, tables=()) for d in docs]
    start = time.perf_counter()
    files = write_context(plain, work)
    out["write_without_s"] = time.perf_counter() - start
    start = time.perf_counter()
    read_context(files.path, files.index_path)
    out["read_without_s"] = time.perf_counter() - start
    out["load1"] = load1()
    return out


def run(quick: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        archives = bench_archives(base / "a", 300 if quick else 1000)
        for sub in ("o", "t"):
            (base / sub).mkdir()
        ocr = bench_ocr(base / "o", 4 if quick else 12)
        dups = bench_duplicates(base / "d", 100 if quick else 300)
        tables = bench_tables(base / "t", 20_000 if quick else 100_000, 4_000 if quick else 20_000)
    a, o, d, t = archives, ocr, dups, tables
    rows = []
    for name in ("folder", "zip", "tar_gz"):
        x = a[name]
        rows.append(row(f"{a['files']:,} mixed files as {name.replace('_', '.')}: text out",
                        x["text_mb_s"], "MB/s", load=a["load1"],
                        bound=f"{x['text_mb']:.1f} MB text in {x['seconds']:.2f} s",
                        ratio=x["seconds"] / a["folder"]["seconds"],
                        note=f"{x['files_s']:.0f} files/s; {x['documents']} documents, "
                             f"{x['skipped']} skipped"))
    for label in ("clean", "degraded"):
        x = o[label]
        rows.append(row(f"OCR, {o['pages']} {label} scanned pages (rendered at scan dpi)",
                        x["pages_s_default"], "pages/s", load=o["load1"],
                        bound=f"one worker {x['pages_s_one']:.2f} pages/s",
                        note=f"accuracy 1-CER mean {x['accuracy_mean']:.4f}, "
                             f"min {x['accuracy_min']:.4f}"))
    rows.append(row(f"OCR, {o['pages']} one-page scans (a file per page)",
                    o["one_file_per_page_pages_s"], "pages/s", load=o["load1"],
                    note="files spread over the workers; one PDF is read by one worker"))
    rows.append(row(f"duplicate tree ({d['files']:,} files, folder twice + a zip)",
                    d["saved"] * 100, "% of chars saved", load=d["load1"],
                    bound=f"{d['chars']:,} chars instead of {d['chars_without_dedup']:,}",
                    note=f"{d['documents']} documents, {d['duplicates']} duplicates, "
                         f"{d['seconds']:.2f} s"))
    rows.append(row(f"tables: {t['csv_rows']:,}-row CSV + {t['xlsx_rows']:,}-row XLSX ingest",
                    t["ingest_on_s"], "s", load=t["load1"],
                    bound=f"tables off {t['ingest_off_s']:.2f} s",
                    ratio=t["ingest_on_s"] / t["ingest_off_s"], note=f"{t['cells']:,} cells"))
    rows.append(row("tables file: write + read in the REPL worker's format",
                    (t["write_with_tables_s"] + t["read_with_tables_s"]) * 1000, "ms",
                    load=t["load1"],
                    bound=f"without tables {(t['write_without_s'] + t['read_without_s']) * 1000:.0f} ms",
                    note=f"{t['tables_file_mb']:.1f} MB tables file"))
    return {"name": "8. documents", "rows": rows,
            "details": {"archives": a, "ocr": o, "duplicates": d, "tables": t}}


if __name__ == "__main__":
    standalone("8. documents", run)
