"""Reading an unchanged folder the second time (figures printed, never asserted):

    .venv/bin/python tests/bench/bench_reuse.py [--quick]

A generated folder of PDFs, Word files and text (unique content per file) is ingested
with an empty store, its sources saved as a run saves them, then ingested again: wall
time of each ingest() from outside, the files taken back, and the ratio, in one run.
--quick: 60 files instead of 300.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.ingest import ingest  # noqa: E402
from tests.unit.ingest import makers  # noqa: E402


def build(folder: Path, files: int, rng: random.Random) -> None:
    words = "revenue budget region contract invoice supplier quarter risk decision".split()
    for i in range(files):
        text = [" ".join(rng.choice(words) for _ in range(40)) + f" file {i} page {p}" for p in range(4)]
        kind = i % 3
        if kind == 0:
            (folder / f"r{i}.pdf").write_bytes(makers.pdf_bytes(text))
        elif kind == 1:
            (folder / f"t{i}.txt").write_text("\n".join(text * 200))
        else:
            makers.write_docx(folder / f"m{i}.docx")
            os.utime(folder / f"m{i}.docx")


async def main(quick: bool) -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["RLMSTUDIO_DESKTOP_HOME"] = home
        from core.store import RunStore
        from core.store.extracts import ExtractCache
        folder = Path(home) / "docs"
        folder.mkdir()
        build(folder, 60 if quick else 300, random.Random(7))
        with RunStore.open() as store:
            t0 = time.monotonic()
            first = await ingest([folder], cache=ExtractCache(store))
            t1 = time.monotonic()
            store.save_sources("bench", first.documents, first.skipped)
            t2 = time.monotonic()
            second = await ingest([folder], cache=ExtractCache(store))
            t3 = time.monotonic()
        print(f"files {len(first.documents)}; first ingest {t1 - t0:.2f} s; sources saved {t2 - t1:.2f} s; "
              f"second ingest {t3 - t2:.2f} s ({second.unchanged} unchanged); ratio {(t1 - t0) / (t3 - t2):.1f}x; "
              f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main("--quick" in sys.argv))
