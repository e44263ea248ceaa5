"""`rlm-studio ingest`: register() on a tiny argparse, real ingestion behind it."""

from __future__ import annotations

import argparse
import io
import json

from app import cli_ingest


def run(argv):
    parser = argparse.ArgumentParser()
    cli_ingest.register(parser.add_subparsers())
    args = parser.parse_args(["ingest", *argv])
    out, err = io.StringIO(), io.StringIO()
    code = args.handler(args, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_json_output(tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    (tmp_path / "b.bin").write_bytes(bytes(range(256)))
    code, out, err = run([str(tmp_path), "--json", "--workers", "1"])
    data = json.loads(out)
    assert code == 0 and err == ""                     # not a TTY: no progress line
    assert data["documents"] == [{
        "path": "a.txt", "format": "text", "chars": 5, "size": 5,
        "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
        "ocr_pages": [], "tables": 0, "duplicates": []}]
    assert data["skipped"] == [{"path": "b.bin", "reason": "binary",
                                "detail": "binary content (NUL or control bytes)"}]
    totals = data["totals"]
    assert (totals["documents"], totals["skipped"], totals["chars"], totals["bytes"]) == (1, 1, 5, 5)
    assert isinstance(totals["duration_ms"], int)


def test_table_output_and_size_limit(tmp_path):
    (tmp_path / "small.txt").write_text("hello")
    (tmp_path / "big.txt").write_text("x" * 300_000)
    code, out, _ = run([str(tmp_path), "--max-file-mb", "0.1", "--workers", "1"])
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["DOCUMENT", "FORMAT", "CHARS", "SIZE"]
    assert lines[1].split()[:3] == ["small.txt", "text", "5"]
    assert any(line.split()[:2] == ["big.txt", "too_large"] for line in lines)
    assert "1 documents, 5 characters" in lines[-1] and "1 skipped" in lines[-1]


def test_no_existing_path_exits_2(tmp_path):
    code, out, err = run([str(tmp_path / "nope")])
    assert code == 2 and out == "" and "no such file or folder" in err


def test_progress_line_only_on_a_terminal(tmp_path):
    import os
    (tmp_path / "a.txt").write_text("hello")
    master, slave = os.openpty()
    with open(slave, "w", closefd=True) as terminal:
        parser = argparse.ArgumentParser()
        cli_ingest.register(parser.add_subparsers())
        args = parser.parse_args(["ingest", str(tmp_path), "--workers", "1"])
        out = io.StringIO()
        assert args.handler(args, out=out, err=terminal) == 0
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:          # EIO: the terminal side is closed and drained
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    shown = b"".join(chunks).decode()
    assert shown.startswith("\rreading 0/0 files") and "\rreading 1/1 files" in shown
    assert "a.txt" in out.getvalue()


def test_ocr_and_archive_flags(tmp_path):
    from tests.unit.ingest import archive_makers as am
    from tests.unit.ingest import scans
    am.write(tmp_path / "scan.pdf", scans.scanned_pdf(scans.TEXTS[:1]))
    am.write(tmp_path / "a.zip", am.zip_bytes({"x.csv": b"k,v\n1,2\n", "y.csv": b"k,v\n1,2\n"}))
    code, out, _ = run([str(tmp_path), "--json", "--workers", "1"])
    data = json.loads(out)
    assert code == 0 and [d["path"] for d in data["documents"]] == ["a.zip/x.csv"]
    assert data["documents"][0]["tables"] == 1 and data["documents"][0]["duplicates"] == ["a.zip/y.csv"]
    assert {s["path"]: s["reason"] for s in data["skipped"]} == {"a.zip/y.csv": "duplicate",
                                                                 "scan.pdf": "no_text"}
    code, out, _ = run([str(tmp_path), "--json", "--workers", "1", "--ocr", "--no-archives"])
    data = json.loads(out)
    docs = {d["path"]: d for d in data["documents"]}
    assert list(docs) == ["scan.pdf"] and docs["scan.pdf"]["ocr_pages"] == [1]
    assert {s["path"]: s["reason"] for s in data["skipped"]} == {"a.zip": "unsupported"}
