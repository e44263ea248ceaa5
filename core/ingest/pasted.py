"""Text pasted into the question box, kept as a source document.

    path = save_pasted(text, data_dir() / "pasted")    # pasted-20261201-231005.txt, written atomically

A long paste is the user's material, not the question: it is written as a UTF-8 text file
in the data directory and read like any dropped file (a small one by core/ingest/inline.py
in the app's own process), so it is listed in Sources, stored with the run, and replayable.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path


def save_pasted(text: str, folder: Path, *, now: float | None = None) -> Path:
    """Write `text` to a new file in `folder` and return its path (never overwrites)."""
    if not text.strip():
        raise ValueError("the pasted text is empty")
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    path = folder / f"pasted-{stamp}.txt"
    number = 2
    while path.exists():
        path = folder / f"pasted-{stamp}-{number}.txt"
        number += 1
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".pasted-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.link(tmp, path)                # fails rather than replace a file made meanwhile
    finally:
        os.unlink(tmp)
    return path
