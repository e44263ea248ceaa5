"""Welcome knows the user's own servers: the endpoints of the settings come first, each
with whether it answers (a scripted server on 127.0.0.1, and a port nothing listens on);
a server found on this computer at one of their URLs is not offered again; Use this says
which endpoint it added, and Undo takes it back (endpoints, models and picks as before)."""

from __future__ import annotations

import socket

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.openai_server import ScriptedOpenAI


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def two_servers(monkeypatch, studio_home):
    """`mine` (the user's endpoint) and `other` (only found by looking), both on the discovery list."""
    mine, other = ScriptedOpenAI().start(), ScriptedOpenAI().start()
    for server in (mine, other):
        server.script("coder-7b", replies=[])
        server.script("small-3b", replies=[])
    monkeypatch.setenv("RLMSTUDIO_DESKTOP_DISCOVERY_PORTS", f"{port_of(mine.url)},{port_of(other.url)}")
    try:
        yield mine, other
    finally:
        mine.stop()
        other.stop()


def test_welcome_lists_your_servers_first_and_use_this_can_be_undone(two_servers, studio, qloop):
    from app.settings import Endpoint, ModelSettings
    mine, other = two_servers
    window, controller = studio
    glue, view = controller.first_run, controller.first_run.view
    s = controller.settings
    down = f"http://127.0.0.1:{closed_port()}/v1"
    s.endpoints = [Endpoint("lab", mine.url, ["coder-7b", "small-3b"]), Endpoint("gone", down, ["x"])]
    s.models["lab/coder-7b"] = ModelSettings(free=True)
    qp = window.question_panel
    qp.set_models("lab/coder-7b", "lab/small-3b")

    async def body():
        await wait_until(lambda: glue.started and glue.discovery_task and glue.discovery_task.done(),
                         timeout=20, what="the first look")
        glue.show_welcome()
        glue.refresh()
        await wait_until(lambda: glue.discovery_task.done() and glue.servers, timeout=20, what="looking again")
    run_async(qloop, body(), timeout=60)

    rows = view.endpoint_rows()
    assert rows[0] == "Endpoint lab: answers: 2 models", rows
    assert rows[1].startswith("Endpoint gone: not reached") and "refused" in rows[1], rows
    assert view.endpoints_label.text() == "Your model servers (Settings > Endpoints):"
    assert "No model server runs on this computer" not in view.servers_label.text()
    offered = {server.base_url for server, _combo, _button in view.server_rows()}
    assert mine.url not in offered, "the user's own endpoint is offered again"
    assert other.url in offered
    assert view.servers_label.text().startswith("Other model servers found on this computer")

    before_endpoints = [(e.name, e.base_url, list(e.models)) for e in s.endpoints]
    before_models = {k: (v.free, v.price) for k, v in s.models.items()}
    server, combo, button = next(r for r in view.server_rows() if r[0].base_url == other.url)
    assert "Settings > Endpoints" in button.toolTip() and "Undo" in button.toolTip()
    combo.setCurrentText("coder-7b")
    button.click()                                                           # Use this
    name = f"local-{port_of(other.url)}"
    said = view.selected_label.text()
    assert said.startswith(f"Added the endpoint “{name}” ({other.url}) to Settings > Endpoints, with its "
                           "2 models marked free."), said
    assert f"Root model: {name}/coder-7b" in said
    assert view.undo_button.isVisibleTo(window)
    assert s.endpoint(name) is not None and qp.root_model() == f"{name}/coder-7b"

    view.undo_button.click()                                                 # Undo
    assert [(e.name, e.base_url, list(e.models)) for e in s.endpoints] == before_endpoints
    assert {k: (v.free, v.price) for k, v in s.models.items()} == before_models
    assert (qp.root_model(), qp.sub_model()) == ("lab/coder-7b", "lab/small-3b")
    assert not view.undo_button.isVisibleTo(window) and "Undone" in view.selected_label.text()
    from app.settings import load_settings
    saved = load_settings()
    assert [e.name for e in saved.endpoints] == ["lab", "gone"]                # the saved file too
