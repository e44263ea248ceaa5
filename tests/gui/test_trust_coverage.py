"""Coverage in the real window: the bars follow a live run as it prints and sends
documents to sub-calls, a sub-call that forwards the whole context is warned
about, and a replay of the stored run shows the same coverage."""

from __future__ import annotations

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.openai_server import Delay
from tests.support.trust_gui import code, doc, setup_lab

import core.trust.coverage  # noqa: F401,E402 - a missing module must fail, not skip

NORTH = "".join(f"North region, month {i:02d}: revenue grew by {i} percent overall.\n" for i in range(12))
SOUTH = "".join(f"South region, month {i:02d}: revenue fell by {i} percent overall.\n" for i in range(12))
DOCS = [doc("north.txt", NORTH), doc("south.txt", SOUTH)]


def test_coverage_follows_the_run_and_the_replay(studio, qloop, openai_server):
    window, controller = studio
    openai_server.script("sub", fn=lambda r: "noted", latency_s=1.0)
    openai_server.script("root", replies=[
        code("print(documents[0]['text'])"),
        Delay(1.5, code("part = llm_query('Summarise: ' + documents[1]['text'][:300])\nprint(part)")),
        code("whole = llm_query(context)\nFINAL(whole)")])
    setup_lab(window, controller, openai_server, "How did revenue move?", DOCS)
    view = controller.trust.coverage_view
    seen: dict[str, list] = {"north": [], "south": []}

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        # Turn 1 printed north.txt: its bar is full while the run goes on.
        await wait_until(lambda: "north.txt" in view.bars and view.bars["north.txt"].document.fraction > 0.95,
                         timeout=60, what="north read")
        seen["north"].append((controller.running, view.percent_text("south.txt")))
        # Turn 2's sub-call carries part of south.txt: its bar fills in while the call is in flight.
        await wait_until(lambda: view.percent_text("south.txt") not in ("", "0%"), timeout=60,
                         what="south partly read")
        seen["south"].append((controller.running, view.bars["south.txt"].document.read))
        await wait_until(lambda: not controller.running, timeout=90, what="the run to end")

    run_async(qloop, body(), timeout=150)
    assert controller.last_outcome.status == "finished", window.notifier.history
    assert seen["north"] == [(True, "0%")]
    running, stretches = seen["south"][0]
    assert running and stretches[0][0] == 0 and 250 < stretches[-1][1] < len(SOUTH)   # its first 300 chars
    controller.trust.refresh()
    assert view.coverage.fraction > 0.95                 # the last sub-call got (nearly) everything
    assert view.total_label.text().endswith("of 2 documents")
    # The forwarding warning: in the Coverage tab and in the window's notifier.
    assert "forwards" in view.warnings_label.text() and view.warnings_label.isVisibleTo(window)
    assert any("forwards" in n.message and "R.s2" in n.message for n in window.notifier.history)
    live = [(d.path, d.read) for d in view.coverage.documents]

    # Replay: the same fold over the stored events gives the same bars.
    controller.history.refresh()
    window.history_pane.select(controller.last_outcome.run_id)
    window.history_pane.open_button.click()
    controller.trust.refresh()
    assert [(d.path, d.read) for d in view.coverage.documents] == live
    bar = window.run_panes.replay_bar
    bar.seek(4)                                       # early in the run: nothing read yet
    controller.trust.refresh()
    assert view.percent_text("north.txt") == "0%" and view.percent_text("south.txt") == "0%"


def test_a_big_replay_is_folded_in_the_background(studio, qloop):
    """Opening a 5,000-event replay over a large document: coverage and the sub-call
    sources are computed in a thread; the loop keeps running meanwhile."""
    import asyncio

    from core.store import RunStore
    from tests.support.event_streams import big_run
    window, controller = studio
    # generated on purpose: the test is about folding 5,000 events off the loop, a volume
    # no small recording has (tests/support/event_streams.py shapes it like a real run)
    events = big_run(5000)
    text = "".join(f"Line {i:05d} of the big document, long enough to be found again.\n" for i in range(20000))
    with RunStore.open() as store:
        writer = store.writer()
        for event in events:
            writer(event)
        writer.close()
        store.save_sources("run-big", [doc("big.txt", text)], [])
    trust = controller.trust
    trust.tabs.setCurrentWidget(trust.results_table)
    ticks = []

    async def body():
        controller.history.open_run("run-big")
        await wait_until(lambda: trust._job is not None, timeout=10, what="the background refresh")
        while trust._job is not None:
            ticks.append(1)
            await asyncio.sleep(0.005)
    run_async(qloop, body(), timeout=120)
    assert len(ticks) > 3                                     # the loop ran while it folded
    assert [d.path for d in trust.coverage_view.coverage.documents] == ["big.txt"]
    assert len(trust.results_table.model.rows()) == window.run_panes.view.figures.sub_calls > 100
