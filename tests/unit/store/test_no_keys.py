"""No API key ever lands in the database file or in an export."""

from __future__ import annotations

from pathlib import Path

from core.exports import export
from core.store import RunStore
from tests.support.record_runs import recorded_run

from .conftest import write_events
from .test_sources import docs

SENTINEL = "sk-test-SENTINEL-4f9c2e7a1b"


def test_a_key_in_the_environment_is_nowhere_in_the_store(home: Path, tmp_path: Path, monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "RLMSTUDIO_DESKTOP_TEST_KEY"):
        monkeypatch.setenv(name, SENTINEL)
    store = RunStore.open()
    write_events(store, recorded_run("export", "k1"))     # a real engine run, recorded
    store.save_sources("k1", docs(), [])
    exports = []
    for fmt in ("json", "md", "html"):
        path = tmp_path / f"k1.{fmt}"
        export(store, "k1", fmt, path, include_texts=True)
        exports.append(path)
    store.close()
    files = [*home.glob("runs.db*"), *exports]
    assert any(p.name == "runs.db" for p in files)
    for path in files:
        if path.is_file():
            assert SENTINEL.encode() not in path.read_bytes(), path
