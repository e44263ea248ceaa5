"""The frozen bundle reads archives, scans (with the system's tesseract) and tables:
Pillow, the archive readers and the OCR subprocess all work from the bundle.
Skipped unless RLM_BUNDLE points at the bundle folder (as tests/packaging/test_bundle.py)."""

from __future__ import annotations

import json

import pytest

from tests.packaging.test_bundle import BUNDLE, bundle, run  # noqa: F401
from tests.unit.ingest import archive_makers as am
from tests.unit.ingest import scans

pytestmark = pytest.mark.skipif(not BUNDLE, reason="RLM_BUNDLE is not set (no built bundle)")


def test_frozen_ingest_reads_archives_scans_and_tables(bundle, tmp_path):  # noqa: F811
    docs = tmp_path / "docs"
    am.write(docs / "scan.pdf", scans.scanned_pdf(scans.TEXTS[:2]))
    am.write(docs / "photo.tiff", scans.image_bytes(scans.TEXTS[2:], "TIFF"))
    am.write(docs / "pack.tar.xz", am.tar_bytes({"a/b.csv": b"x,y\n1,2\n",
                                                 "c.txt.gz": am.compressed(b"hello\n", "gz")},
                                                "w:xz"))
    done = run(bundle, tmp_path, "ingest", str(docs), "--ocr", "--json")
    assert done.returncode == 0, done.stderr
    found = {d["path"]: d for d in json.loads(done.stdout)["documents"]}
    assert {p: (d["format"], d["ocr_pages"], d["tables"]) for p, d in found.items()} == {
        "pack.tar.xz/a/b.csv": ("csv", [], 1), "pack.tar.xz/c.txt.gz": ("text", [], 0),
        "photo.tiff": ("image", [1], 0), "scan.pdf": ("pdf", [1, 2], 0)}
