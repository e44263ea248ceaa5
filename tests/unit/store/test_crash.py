"""Crash safety with a real process killed by SIGKILL mid-stream.

The stream is generated (tests/support/store_events.py), not a recording, on purpose: the
test needs a burst of ~1,000 events written a millisecond apart so that the kill lands while
the writer is still busy; a small recording is written in full before the kill. What is kept
and how the run is marked are checked over recordings in test_recorded_runs.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core import events as ev
from core.store import RunStore
from tests.support.store_events import synthetic_run

ROOT = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from core.store import RunStore
    from tests.support.store_events import synthetic_run
    store = RunStore.open(Path(sys.argv[1]))
    writer = store.writer()
    events = synthetic_run("crash1", turns=40, finish=False, t0=1_780_000_000.0)
    half = len(events) // 2
    for e in events[:half]:
        writer(e)
    writer.flush()
    print(events[half - 1].seq, flush=True)
    for e in events[half:]:
        writer(e)
        time.sleep(0.001)
    print("all", flush=True)
    time.sleep(120)
""")


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL is POSIX")
def test_kill_9_mid_stream_keeps_every_flushed_event_and_marks_the_run_interrupted(tmp_path: Path):
    db = tmp_path / "runs.db"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db)], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        assert line.strip().isdigit(), child.stderr.read()
        flushed = int(line)
        # the writing process is alive: opening the store must leave its run alone
        store = RunStore.open(db)
        assert store.get_run("crash1")["status"] == "running"
        store.close()
        time.sleep(0.05)                                   # let it stream a little more
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    store = RunStore.open(db)
    try:
        run = store.get_run("crash1")
        assert run["status"] == "interrupted"
        assert run["finished_utc"] is not None and "stopped before" in run["error"]
        assert not any(c["status"] == "running" for c in store.calls("crash1"))
        stored = list(store.iter_events("crash1"))
        original = [e for e in synthetic_run("crash1", turns=40, finish=False, t0=1_780_000_000.0)]
        before = [e for e in original if e.seq <= flushed and not isinstance(e, ev.RootTokens)]
        kept = [e for e in stored if e.seq <= flushed and not isinstance(e, ev.RootTokens)]
        assert kept == before
        assert len(stored) >= len([e for e in stored if e.seq <= flushed])
        # a second open changes nothing more
        assert store.recover() == []
    finally:
        store.close()
    assert not list((tmp_path / "runs.db.owners").glob("*.lock"))   # the stale lock was cleaned up
