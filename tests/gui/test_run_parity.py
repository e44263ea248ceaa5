"""One run path: the same RunRequest sent through the CLI's path (cli_common.run_request:
asyncio.run, the transcript printer) and through the window's (Controller.launch: the
engine thread, the event bridge, the panes) gives the same events, in the same order,
in the same call tree; the keys are routed alike; the window's engine ran on its own
thread and loop, where litellm's clients were made."""

from __future__ import annotations

import argparse
import asyncio
import json
import threading

import pytest

from tests.support.gui_app import qloop, run_async, studio, studio_home, wait_until  # noqa: F401
from tests.support.trust_gui import KEY, code, setup_lab

SCRIPT = [
    code("first = llm_query('one: ' + context[:20])\nprint(first)"),
    code("many = llm_query_batched(['a', 'b', 'c'])\nprint(many)"),
    code("FINAL(first + ' / ' + ', '.join(many))"),
]


def shape(events) -> list[tuple]:
    """What must match: each event's type and place in the call tree, in order. Streamed
    token deltas are merged per turn and budget events are left out: how many of those
    arrive depends on chunking and on the loop's timing, not on the run path."""
    out: list[tuple] = []
    for e in events:
        if e.type == "BudgetChanged":
            continue
        item = (e.type, e.call_id, e.parent_id)
        if e.type == "RootTokens" and out and out[-1] == item:
            continue
        out.append(item)
    return out


def request_for(controller, server):
    from app.run_service import RunRequest
    from app.settings import build_run_config
    config = build_run_config(controller.settings, root="lab/root", sub="lab/sub",
                              overrides={"max_depth": 1, "max_iterations": 5, "concurrency": 1,
                                         "cell_timeout_s": 30})
    return RunRequest.ask("What do the documents say?", list(controller.documents.values()), config)


def test_the_cli_path_and_the_window_path_give_the_same_run(studio, qloop, openai_server, capsys):
    from app.cli_common import run_request
    from app.run_service import RunService
    window, controller = studio
    setup_lab(window, controller, openai_server, "unused")
    controller.save_state()                      # the CLI's service reads the endpoints from the file
    openai_server.script("sub", fn=lambda r: f"said {r.prompt[:6]}")
    request = request_for(controller, openai_server)

    # 1. The CLI's path, as `rlm-studio ask` takes it (its own thread: asyncio.run owns that loop).
    openai_server.script("root", replies=list(SCRIPT))
    args = argparse.Namespace(quiet=True, json=True)
    code_ = run_async(qloop, asyncio.to_thread(asyncio.run, run_request(request, args, RunService())),
                      timeout=120)
    cli = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code_ == 0 and cli["status"] == "finished", cli
    cli_requests = len(openai_server.history)

    # 2. The window's path, with the very same request.
    openai_server.script("root", replies=list(SCRIPT))
    seen: list = []
    threads: set[str] = set()
    sink = controller.runs.bridge.sink

    def watching(event) -> None:                # which thread the engine emits on
        threads.add(threading.current_thread().name)
        sink(event)
    controller.runs.bridge.sink = watching
    apply_many = window.run_panes.apply_many

    def applied(batch, deadline=None) -> int:   # what reaches the panes, in order, on the GUI thread
        assert threading.current_thread() is threading.main_thread()
        done = apply_many(batch, deadline)
        seen.extend(batch[:done])
        return done
    window.run_panes.apply_many = applied

    async def body():
        controller.launch(request)
        await wait_until(lambda: not controller.running, timeout=90, what="the window's run to end")
    run_async(qloop, body(), timeout=120)
    outcome = controller.last_outcome
    assert outcome.status == "finished" and outcome.answer == cli["answer"], window.notifier.history
    assert threads == {"rlm-engine"}

    # The same events in the same order and tree: stored by both, and as the panes saw them.
    store = controller.history.store()
    cli_events = list(store.iter_events(cli["run_id"]))
    window_events = list(store.iter_events(outcome.run_id))
    assert shape(cli_events) == shape(window_events) == shape(seen)
    assert [e.type for e in seen].count("SubCallFinished") == 4
    seqs = [e.seq for e in seen]
    assert seqs == sorted(set(seqs)) and {e.seq for e in window_events} <= set(seqs)   # none lost, doubled or late
    # Keys routed alike: the endpoint's key on every request of both runs, to that endpoint only.
    assert len(openai_server.history) == 2 * cli_requests
    assert {r.headers.get("Authorization") for r in openai_server.history} == {f"Bearer {KEY}"}


@pytest.mark.parametrize("route", ["direct", "litellm"])
def test_http_clients_live_on_the_engine_loop_and_stop_crosses(studio, qloop, openai_server, monkeypatch,
                                                               route):
    """The window's loop never calls a model: the connection pools (ours on the direct route,
    core/llm/openai_http.py; litellm's per-loop client cache with RLMSTUDIO_DESKTOP_HTTP=litellm)
    belong to the engine's loop, none to the window's; Stop reaches the run on the engine loop."""
    from core.llm import openai_http
    if route == "litellm":
        monkeypatch.setenv("RLMSTUDIO_DESKTOP_HTTP", "litellm")
    else:
        monkeypatch.delenv("RLMSTUDIO_DESKTOP_HTTP", raising=False)
    window, controller = studio
    setup_lab(window, controller, openai_server, "Stop me")
    openai_server.script("sub", fn=lambda r: "slow", latency_s=5.0)
    openai_server.script("root", replies=[code("print(llm_query_batched(['x', 'y']))")])

    async def body():
        window.question_panel.run_button.click()
        await wait_until(lambda: len(openai_server.requests_for("sub")) == 2, timeout=60,
                         what="the sub-calls to be in flight")
        window.question_panel.stop_button.click()
        await wait_until(lambda: not controller.running, timeout=30, what="the run to stop")
        await wait_until(lambda: all(r.disconnected for r in openai_server.requests_for("sub")),
                         timeout=10, what="the server to see both sub-calls hang up")   # really stopped
    run_async(qloop, body(), timeout=120)
    assert controller.last_outcome.status == "cancelled"
    agents = {r.headers.get("user-agent", "")[:10] for r in openai_server.history}   # rlm-studio, AsyncOpenAI/...
    assert agents == ({"rlm-studio"} if route == "direct" else {"AsyncOpenA"})
    engine_loop = controller.runs.engine.loop
    assert qloop not in openai_http._sessions
    if route == "direct":
        assert openai_http._sessions.get(engine_loop)
        return
    from litellm.caching.evicted_client_closer import _LOOP_TOKENS
    from core.llm.litellm_import import litellm
    engine_token = _LOOP_TOKENS.get(engine_loop)
    assert engine_token is not None and _LOOP_TOKENS.get(qloop) is None
    keys = list(litellm().in_memory_llm_clients_cache.cache_dict)
    assert any(k.endswith(f"-{engine_token}") for k in keys), keys
