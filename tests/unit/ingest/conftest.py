from __future__ import annotations

import pytest

from core.ingest.model import FileEntry


@pytest.fixture
def read_file():
    """Run the real per-file extractor in-process (fast); raises ExtractError."""
    from core.ingest.extract import extract_file

    def read(path, name: str | None = None, max_bytes: int = 200 * 1024 * 1024):
        return extract_file(FileEntry(name or path.name, str(path), path.stat().st_size),
                            max_bytes)
    return read
