"""A price belongs to a model on its endpoint, in the real window offscreen: a Paid endpoint
`lab` with its models priced, and a local server serving the same model names that Welcome
finds; **Use this** adds it visibly (named, Free, with an Undo) and lab's runs stay priced,
with a cap that bites; runs on the local one cost $0. Both servers are the scripted
OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import pytest

from app.settings import Endpoint, ModelSettings
from core.config import Price
from tests.gui.test_window_analyst import run_and_wait
from tests.gui.test_window_run import code
from tests.gui.test_window_sources import drop_paths
from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.openai_server import ScriptedOpenAI

FAN_OUT = code("out = llm_query_batched(['a ' * 200, 'b ' * 200, 'c ' * 200, 'd ' * 200])\n"
               "FINAL(' '.join(out))")


@pytest.fixture
def local_server(monkeypatch, studio_home):
    server = ScriptedOpenAI().start()
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_DISCOVERY_PORTS", str(port))
    try:
        yield server, port
    finally:
        server.stop()


def _script(server):
    server.script("root", fn=lambda r: FAN_OUT)
    server.script("sub", fn=lambda r: "ok")
    server.price("root", 1.0, 2.0)
    server.price("sub", 0.5, 1.5)


def _documents(window, controller, qloop, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "one.txt").write_text("apples: 3\n")

    async def read():
        drop_paths(window.sources_pane.drop_zone, [folder])
        await wait_until(lambda: controller.ingest_task and controller.ingest_task.done(), timeout=60,
                         what="reading")
    run_async(qloop, read(), timeout=90)


def _discover(glue, port, qloop):
    """Welcome's look for local servers, on the window's loop, until it lists `port`."""
    async def found():
        glue.show_welcome()
        await wait_until(lambda: glue.started and glue.discovery_task and glue.discovery_task.done(),
                         timeout=20, what="the first look")
        glue.refresh()
        await wait_until(lambda: glue.discovery_task.done()
                         and port in {row[0].port for row in glue.view.server_rows()}, timeout=30,
                         what="discovery")
    run_async(qloop, found(), timeout=60)


def _run(window, controller, qloop, root, sub, caps):
    qp = window.question_panel
    qp.set_models(root, sub)
    qp.set_caps({"max_depth": 1, "max_iterations": 3, **caps})
    qp.set_question("How many apples?")
    run_and_wait(window, controller, qloop)
    window.run_panes.flush()
    return controller.last_outcome


def test_use_this_adds_a_free_endpoint_with_undo_and_lab_stays_priced(local_server, studio, qloop, server,
                                                                      tmp_path):
    local, port = local_server
    window, controller = studio
    _script(server)
    _script(local)
    s = controller.settings
    s.endpoints = [Endpoint("lab", server.url, ["root", "sub"], runs_here=False)]
    s.models.update({"lab/root": ModelSettings(price=Price(1.0, 2.0)),
                     "lab/sub": ModelSettings(price=Price(0.5, 1.5))})
    s.caps["cell_timeout_s"] = 30
    controller.settings_glue.save()
    _documents(window, controller, qloop, tmp_path)
    glue, view = controller.first_run, controller.first_run.view
    _discover(glue, port, qloop)
    row = next(r for r in view.server_rows() if r[0].port == port)
    row[1].setCurrentText("root")
    row[2].click()                                                     # Use this
    name = f"local-{port}"
    note = window.notifier.last
    assert note.message.startswith(f"Added the endpoint “{name}” ({local.url}) to Settings > Endpoints, with its 2 models marked free.")
    assert note.action == "undo_use_server" and note.action_label == "Undo"
    assert s.endpoint("lab").runs_here is False and s.models["lab/root"].price == Price(1.0, 2.0)
    assert not s.models["lab/root"].free and f"{name}/root" not in s.models

    paid = _run(window, controller, qloop, "lab/root", "lab/sub", {"max_cost_usd": 1.0})
    billed = server.billed_usd()
    print(f"\nwindow, lab after Use this: ${paid.totals['cost_usd']:.6f} (server billed ${billed:.6f})")
    assert paid.status == "finished" and paid.totals["cost_usd"] > 0
    assert abs(paid.totals["cost_usd"] - billed) < 1e-9

    free = _run(window, controller, qloop, f"{name}/root", f"{name}/sub", {"max_cost_usd": 0.0001})
    print(f"window, {name} (Free): ${free.totals['cost_usd']:.6f}, {free.totals.get('sub_calls')} sub-calls")
    assert free.status == "finished" and free.totals["cost_usd"] == 0.0 and len(local.requests_for("sub")) == 4

    s.models["lab/root"].max_tokens, s.models["lab/sub"].max_tokens = 1000, 4000
    capped = _run(window, controller, qloop, "lab/root", "lab/sub", {"max_cost_usd": 0.01})   # the cap field's cents
    from core.limits import summary
    said = summary(capped.totals.get("limited") or {})
    print(f"window, lab under a $0.01 cap: ${capped.totals['cost_usd']:.6f} ({capped.status}): {said}")
    assert 0 < capped.totals["cost_usd"] <= 0.01 and "shortened to fit the dollar cap" in said

    window.notifier.action_requested.emit("undo_use_server")           # Undo
    assert s.endpoint(name) is None and window.notifier.last.message == f"Undone: Removed the endpoint {name}."


def test_use_this_on_a_paid_endpoints_url_keeps_it_paid_and_priced(local_server, studio, qloop):
    local, port = local_server
    window, controller = studio
    _script(local)
    s = controller.settings
    glue = controller.first_run
    # The Welcome page offers no server at one of your endpoints' URLs; here the endpoint is
    # added after the server was listed (a list shown before Settings was saved), and Use this
    # still leaves the paid endpoint as it stands.
    s.endpoints = []
    _discover(glue, port, qloop)
    s.endpoints = [Endpoint("lab", local.url, ["root"], runs_here=False)]
    s.models["lab/root"] = ModelSettings(price=Price(1.0, 2.0))
    row = next(r for r in glue.view.server_rows() if r[0].port == port)
    row[1].setCurrentText("root")
    row[2].click()
    assert [e.name for e in s.endpoints] == ["lab"] and s.endpoint("lab").runs_here is False
    assert s.models["lab/root"].price == Price(1.0, 2.0) and not s.models["lab/root"].free
    assert window.notifier.last.message.startswith("Uses your endpoint “lab” as it is (Paid)")
    assert "at lab's prices" in window.notifier.last.message
    window.notifier.action_requested.emit("undo_use_server")
    assert s.endpoint("lab").models == ["root"]


def test_a_throttling_cap_shows_waiting_calls_in_the_tree_the_sub_calls_tab_and_the_meter(studio, qloop, server,
                                                                                          tmp_path):
    from ui.call_tree_model import STATUS_ROLE
    window, controller = studio
    server.script("root", replies=[code("out = llm_query_batched(['part %d ' % i * 40 for i in range(12)])\n"
                                        "FINAL(str(len(out)))")])
    server.script("sub", fn=lambda r: "ok", latency_s=1.0)
    s = controller.settings
    s.endpoints = [Endpoint("lab", server.url, ["root", "sub"], runs_here=False)]
    s.models.update({"lab/root": ModelSettings(price=Price(0.0, 0.0)),
                     "lab/sub": ModelSettings(price=Price(0.2, 2.0), max_tokens=1000)})
    s.caps.update(cell_timeout_s=60, concurrency=12)
    _documents(window, controller, qloop, tmp_path)
    qp = window.question_panel
    qp.set_models("lab/root", "lab/sub")
    qp.set_caps({"max_depth": 1, "max_iterations": 3, "max_cost_usd": 0.01})     # room for ~4 in flight
    qp.set_question("How many parts?")
    from tests.gui.test_window_caps import _estimate
    _estimate(window, controller, qloop)            # before the run: the cap will throttle, said with fixes
    print(f"\npreview: {qp.caution!r} {[b.text() for b in qp.fix_buttons]}; Run: {qp.run_button.toolTip()!r}")
    assert qp.run_button.isEnabled() and "sub-calls in flight at once" in qp.caution
    assert qp.run_button.toolTip().startswith("Run: sub-calls will wait for budget, about ")
    labels = [b.text() for b in qp.fix_buttons]
    assert labels[0].startswith("Lower the sub reply limit to ") and labels[-1].startswith("Set the cap to $")
    panes = window.run_panes
    trust = controller.trust
    seen = {}

    def waiting_now():
        panes.flush()
        text = panes.meter.in_flight.text()
        model = panes.tree_model
        statuses = []

        def walk(parent):
            for row in range(model.rowCount(parent)):
                index = model.index(row, 0, parent)
                statuses.append(index.data(STATUS_ROLE))
                walk(index)
        walk(model.index(-1, -1).parent())
        if "wait for budget" in text and "waiting" in statuses:
            seen.update(meter=text, tree=statuses.count("waiting"))
            return True
        return False

    async def body():
        qp.run_button.click()
        await wait_until(lambda: controller.running, what="the run to start")
        await wait_until(waiting_now, timeout=60, what="waiting calls in the meter and the tree")
        tab = trust.results_table
        trust.tabs.setCurrentWidget(tab)
        trust.schedule_refresh()
        await wait_until(lambda: any(r.status == "waiting" for r in tab.model.rows()), timeout=30,
                         what="waiting rows in the Sub-calls tab")
        await wait_until(lambda: not controller.running, timeout=120, what="the run to end")
    run_async(qloop, body(), timeout=200)
    print(f"\nmeter while throttled: {seen['meter']!r}; {seen['tree']} calls waiting in the tree")
    assert seen["meter"].split(" · ")[-1].startswith(f"{seen['tree']} sub-calls wait for budget: each may cost up to $0.00") \
        or "sub-call waits for budget" in seen["meter"]
    outcome = controller.last_outcome
    assert outcome.status == "finished" and outcome.answer == "12" and outcome.totals["cost_usd"] <= 0.01
    panes.flush()
    assert "wait for budget" not in panes.meter.in_flight.text()
    # the fix sets the exact value it names, and the warning follows it
    _estimate(window, controller, qloop)
    lower = next(b for b in qp.fix_buttons if b.text().startswith("Lower the sub reply limit to "))
    tokens = int(lower.text().split(" to ")[1].split()[0].replace(",", ""))
    lower.click()
    assert s.models["lab/sub"].max_tokens == tokens
    _estimate(window, controller, qloop)
    assert qp.caution == "" or "about 8 sub-calls" in qp.caution or "about 9 sub-calls" in qp.caution, qp.caution
