"""Bench: the run view with a 5,000-event run (prints figures; asserts nothing).

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.bench.bench_run_view
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> None:
    from PySide6.QtWidgets import QApplication

    from core.runview import fold
    from tests.support.event_streams import big_run
    from ui.run_panes import RunPanes

    app = QApplication.instance() or QApplication([])
    events = big_run(5000)
    t = time.perf_counter()
    fold(events)
    print(f"fold 5,000 events:                 {(time.perf_counter() - t) * 1000:7.1f} ms")

    panes = RunPanes()
    panes.resize(1400, 900)
    panes.show()
    app.processEvents()
    # live: 500 events per second, the panes flush at ~30 Hz => a flush every ~17 events
    panes.reset()
    applies: list[float] = []
    flushes: list[float] = []
    cpu = time.process_time()
    t = time.perf_counter()
    for i, event in enumerate(events):
        a = time.perf_counter()
        panes.apply(event)
        applies.append(time.perf_counter() - a)
        if i % 17 == 16:
            a = time.perf_counter()
            panes.flush()
            app.processEvents()
            flushes.append(time.perf_counter() - a)
    panes.flush()
    app.processEvents()
    total = time.perf_counter() - t
    cpu = time.process_time() - cpu
    applies.sort()
    flushes.sort()
    print(f"apply 5,000 events live to RunPanes: {total * 1000:7.1f} ms wall, {cpu * 1000:.0f} ms CPU"
          f" (flush + paint every 17 events)")
    print(f"single apply(): median {applies[len(applies) // 2] * 1e6:.0f} us,"
          f" p99 {applies[int(len(applies) * 0.99)] * 1000:.3f} ms, longest {applies[-1] * 1000:.2f} ms")
    print(f"flush + paint:  median {flushes[len(flushes) // 2] * 1000:.1f} ms,"
          f" p99 {flushes[int(len(flushes) * 0.99)] * 1000:.1f} ms, longest {flushes[-1] * 1000:.1f} ms")
    def timed(label: str, action) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        action()
        app.processEvents()
        print(f"{label:<35}{(time.perf_counter() - wall) * 1000:7.1f} ms wall,"
              f" {(time.process_time() - cpu) * 1000:.0f} ms CPU")

    def replay() -> None:
        panes.reset(live=False)
        panes.apply_many(events)

    timed("replay (reset + apply_many 5,000):", replay)
    timed("load_replay (to the end):", lambda: panes.load_replay(events))
    timed("seek back to 2,500:", lambda: panes.replay_bar.seek(2500))


if __name__ == "__main__":
    main()
