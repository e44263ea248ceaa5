"""`rlm-studio ask --ocr` as a real process: a scan read by OCR, an archive read as a
folder, a duplicate read once, a CSV as `tables`, all seen by a ```repl cell."""

import json
import subprocess

from tests.integration.engine_helpers import code
from tests.integration.test_cli_ask import ask
from tests.unit.ingest import archive_makers as am
from tests.unit.ingest import scans


def test_ask_with_ocr_archives_duplicates_and_tables(server, tmp_path):
    folder = tmp_path / "inbox"
    am.write(folder / "scan.pdf", scans.scanned_pdf(scans.TEXTS[2:]))
    csv = b"region,amount\nNorth,10\nSouth,32\n"
    am.write(folder / "export.zip", am.zip_bytes({"2024/sales.csv": csv}))
    am.write(folder / "sales-copy.csv", csv)
    server.script("root", replies=[code(
        "total = sum(r[1] for r in tables[0]['rows'])\n"
        "depot = 'Hamburg depot' in context\n"
        "FINAL(f\"{[d['path'] for d in documents]} {tables[0]['path']} {total} {depot}\")")])
    cmd, env = ask(server, tmp_path, folder, "--ocr", "--json")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    # The copy nearest the top is read; the one inside the archive is its duplicate.
    assert data["answer"] == "['sales-copy.csv', 'scan.pdf'] sales-copy.csv 42 True"
    assert "1 duplicate file read once" in proc.stderr
    assert "skipped export.zip/2024/sales.csv" not in proc.stderr
