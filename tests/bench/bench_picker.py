"""Benchmark: the model picker, Test connection, and the one-time data move (issue 27).
Figures printed, never asserted:

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/bench/bench_picker.py [--quick]

1. ModelPicker.set_choices with litellm's whole catalogue (grouped, with headers), beside
   a bare QComboBox.addItems of the same ids (the bound); then one filter (typing "coder").
2. check_endpoint (Test connection): against the scripted server and a closed port; the
   wall time around the call beside the check's own duration_ms.
3. migrate_data of an old data folder with a runs.db of N MB: wall time, and the bytes this
   process read and wrote as /proc/self/io counts them (from outside the code).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.bench.report import median, row, standalone  # noqa: E402


def _io() -> dict[str, int]:
    with open("/proc/self/io") as f:
        return {k: int(v) for k, v in (line.split(": ") for line in f.read().splitlines())}


def bench_picker(repeats: int) -> list[dict]:
    from PySide6.QtWidgets import QApplication, QComboBox
    from core.catalog import litellm_models
    from ui.model_picker import ModelChoice, ModelPicker
    app = QApplication.instance() or QApplication([])
    choices = [ModelChoice("lab/coder-7b", "free", local=True)] + [ModelChoice.of_entry(e) for e in litellm_models()]
    picker, bare = ModelPicker(), QComboBox()
    fill, bound, filt = [], [], []
    for _ in range(repeats):
        t = time.perf_counter()
        picker.set_choices(choices)
        fill.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        bare.clear()
        bare.addItems([c.id for c in choices])
        bound.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        found = picker.matches("coder")
        filt.append((time.perf_counter() - t) * 1000)
    app.processEvents()
    groups = len(picker.groups())
    return [row(f"picker: set_choices, {len(choices):,} models in {groups} groups", median(fill), "ms",
                bound=f"QComboBox.addItems {median(bound):.1f} ms", ratio=median(fill) / median(bound)),
            row(f"picker: filter 'coder' ({len(found)} matches)", median(filt), "ms")]


def bench_check(repeats: int) -> list[dict]:
    from core.discovery import check_endpoint
    from tests.support.openai_server import ScriptedOpenAI
    rows = []
    with ScriptedOpenAI() as server:
        for name in ("root", "sub", "coder-7b"):
            server.script(name, replies=["x"])
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        for label, url in (("scripted server", server.url), ("closed port", closed)):
            wall, own = [], []
            for _ in range(repeats):
                t = time.perf_counter()
                check = asyncio.run(check_endpoint(url))
                wall.append((time.perf_counter() - t) * 1000)
                own.append(check.duration_ms)
            rows.append(row(f"Test connection, {label}: {check.summary()[:40]}", median(wall), "ms",
                            bound=f"its own duration_ms {median(own):.1f}"))
    return rows


def bench_move(megabytes: int) -> list[dict]:
    from core import identity_migration
    with tempfile.TemporaryDirectory() as d:
        old, new = Path(d) / "old", Path(d) / "new"
        old.mkdir()
        (old / "settings.json").write_text("{}")
        db = sqlite3.connect(old / "runs.db")
        db.execute("CREATE TABLE blobs (b BLOB)")
        chunk = os.urandom(1 << 20)
        db.executemany("INSERT INTO blobs VALUES (?)", [(chunk,)] * megabytes)
        db.commit()
        db.close()
        before, t = _io(), time.perf_counter()
        note = identity_migration.migrate_data(new, old)
        ms = (time.perf_counter() - t) * 1000
        after = _io()
    assert note, "nothing moved"
    read = (after["rchar"] - before["rchar"]) / 2**20
    wrote = (after["wchar"] - before["wchar"]) / 2**20
    return [row(f"data move, runs.db {megabytes} MB", ms, "ms",
                bound=f"/proc/self/io: read {read:.0f} MiB, wrote {wrote:.0f} MiB")]


def run(quick: bool = False) -> dict:
    rows = bench_picker(3 if quick else 7) + bench_check(3 if quick else 10) + bench_move(20 if quick else 200)
    return {"name": "picker, Test connection, data move", "rows": rows}


if __name__ == "__main__":
    standalone("picker, Test connection, data move", run)
