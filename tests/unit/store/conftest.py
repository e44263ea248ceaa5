from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pytest

from core.events import Event
from core.store import RunStore


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """RLMSTUDIO_DESKTOP_HOME points into tmp_path: the default database lives there."""
    path = tmp_path / "home"
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_HOME", str(path))
    return path


@pytest.fixture
def store(home: Path):
    s = RunStore.open()
    yield s
    s.close()


def write_events(store: RunStore, events: Iterable[Event]) -> None:
    """Through a real EventWriter thread, then closed (flushed)."""
    writer = store.writer()
    try:
        for event in events:
            writer(event)
        writer.flush()
    finally:
        writer.close()
