"""`rlm-studio ingest PATH... [--json]`: what would be read, and what not, and why."""

from __future__ import annotations

import argparse

import json
import os
import sys
from typing import Any, TextIO

from core.control_chars import carriage_return



def register(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "ingest", help="show which documents would be read from files and folders",
        description="Read files and folders as RLM Studio would and list the documents "
                    "(format, characters) and the skipped files (reason).")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--max-file-mb", type=float, metavar="N",
                        help="skip files on disk larger than N MB (default: the settings, else any size)")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="S",
                        help="per-file parser timeout in seconds (default 60)")
    parser.add_argument("--workers", type=int, default=0, metavar="N",
                        help="worker processes (default: one per CPU core)")
    parser.add_argument("--include-hidden", action="store_true", help="read hidden files too")
    parser.add_argument("--ocr", action="store_true",
                        help="read scanned PDF pages and images with tesseract (slow)")
    parser.add_argument("--no-archives", action="store_true",
                        help="do not open .zip/.tar/.gz/.bz2/.xz archives")
    parser.set_defaults(handler=run_ingest)
    return parser


def run_ingest(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None
               ) -> int:
    # lazy: +113 modules in the command (where it runs)
    from core.ingest import IngestOptions, ingest

    out = out or sys.stdout
    err = err or sys.stderr
    if not any(os.path.lexists(p) for p in args.paths):
        print("rlm-studio ingest: no such file or folder: " + ", ".join(args.paths), file=err)
        return 2
    # lazy: +8 modules in the command (where it runs)
    from dataclasses import replace

    # lazy: +31 modules in the command (where it runs)
    from app.settings import ingest_options, load_settings
    options = replace(ingest_options(load_settings(), ocr=True if args.ocr else None,
                                     max_file_mb=args.max_file_mb),
                      per_file_timeout_s=args.timeout, workers=args.workers,
                      include_hidden=args.include_hidden)
    if args.no_archives:
        options = replace(options, archives=False)
    progress = _ProgressLine(err) if err.isatty() else None
    # lazy: +61 modules in the command (where it runs)
    import asyncio
    read = []

    async def read_all() -> None:
        # The result is kept here, not returned: asyncio.run (3.11) formats its main task's repr,
        # result included, when it restores the SIGINT handler: 3.5 s for 40 MB of texts.
        read.append(await ingest(args.paths, options, on_progress=progress))
    asyncio.run(read_all())
    result = read[0]
    if progress:
        progress.close()
    if args.json:
        json.dump(as_json(result), out, ensure_ascii=False)
        out.write("\n")
    else:
        print_table(result, out)
    return 0


def as_json(result: Any) -> dict:
    return {
        "documents": [{"path": d.path, "format": d.format, "chars": d.chars,
                       "sha256": d.sha256, "size": d.size, "ocr_pages": list(d.ocr_pages),
                       "tables": len(d.tables), "duplicates": list(d.duplicates)}
                      for d in result.documents],
        "skipped": [{"path": s.path, "reason": s.reason, "detail": s.detail}
                    for s in result.skipped],
        "totals": {"documents": len(result.documents), "skipped": len(result.skipped),
                   "chars": result.total_chars, "bytes": result.total_bytes,
                   "duration_ms": result.duration_ms},
    }


def print_table(result: Any, out: TextIO) -> None:
    if result.documents:
        width = min(60, max(len(d.path) for d in result.documents))
        print(f"{'DOCUMENT':<{width}}  {'FORMAT':<8}  {'CHARS':>12}  {'SIZE':>10}", file=out)
        for d in result.documents:
            print(f"{_fit(d.path, width):<{width}}  {d.format:<8}  {d.chars:>12,}  "
                  f"{_size(d.size):>10}", file=out)
    if result.skipped:
        if result.documents:
            print(file=out)
        width = min(60, max(len(s.path) for s in result.skipped))
        print(f"{'SKIPPED':<{width}}  {'REASON':<12}  DETAIL", file=out)
        for s in result.skipped:
            print(f"{_fit(s.path, width):<{width}}  {s.reason:<12}  {s.detail}", file=out)
    print(f"\n{len(result.documents)} documents, {result.total_chars:,} characters from "
          f"{_size(result.total_bytes)}; {len(result.skipped)} skipped; "
          f"{result.duration_ms / 1000:.1f} s", file=out)


class _ProgressLine:
    """A single \\r-updated line on a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = False

    def __call__(self, p: Any) -> None:
        counting = "" if p.files_done or p.files_total == 0 else " (counting)"
        step = f"  {p.step}" if p.step else ""
        carriage_return(self.stream)
        line = (f"reading {p.files_done:,}/{p.files_total:,} files, "
                f"{_size(p.bytes_done)}/{_size(p.bytes_total)}{counting}{step}")
        self.stream.write(line[:119].ljust(59))
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else "..." + text[-(width - 3):]


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"
