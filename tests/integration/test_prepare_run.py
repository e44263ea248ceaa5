"""The engine's preparation of a run (core/engine/prepare.py), on its own: a real stored
run in a real store file, real REPL workers, the engine run on what was prepared against
the scripted server. The run path (app/run_service.py) only hands it the request and the
store: tests/integration/test_trust_fork.py and the window's tests drive that."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from core.engine.prepare import ConfigError, PreparedRun, prepare_run
from core.engine.rebuild import ForkError, load_record
from core.engine.request import RunRequest
from core.engine.run import Engine
from core.run_names import title_of
from core.store import RunStore
from tests.support.leaks import worker_processes
from tests.support.trust_runs import DOCS, KEY, code, config, stored_run, three_turn_run as _parent

@pytest.fixture
def store():
    with RunStore.open() as s:
        yield s


class StoreReads:
    """The real store, with the names of what preparing read from it (in order)."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.reads: list[str] = []

    def __getattr__(self, name: str):
        self.reads.append(name)
        return getattr(self.store, name)


async def test_a_fork_is_prepared_from_its_parents_record_and_the_engine_runs_it(openai_server, store):
    parent = await _parent(openai_server, store)
    prepared = await prepare_run(RunRequest.fork(parent, 3), runs=store)
    try:
        assert isinstance(prepared, PreparedRun) and prepared.kind == "fork" and not prepared.follow_up
        with pytest.raises(dataclasses.FrozenInstanceError):
            prepared.question = "changed"                           # type: ignore[misc]
        assert prepared.question == "What was Q3 revenue?"
        assert [d.path for d in prepared.documents] == [d.path for d in DOCS]
        parents_config = load_record(store, parent).meta.config
        assert prepared.config.public_dict() == parents_config     # resolved once, from the parent's record
        assert prepared.forked_from == {"run_id": parent, "turn": 3, "title": title_of(store, parent)}
        assert (prepared.turn, prepared.replayed_cells, prepared.unmatched) == (3, 2, ())
        assert [m["role"] for m in prepared.session.messages] == ["system", "user", "assistant", "user",
                                                                  "assistant", "user"]
        assert prepared.session.repl.alive and not prepared.edited
        # The engine starts from what was prepared: turn 3 asked again, the variables of 1-2 there.
        openai_server.script("root", replies=[code("FINAL(f'fork says {answers[0]} from {len(lines)} lines')")])
        events: list = []
        result = await Engine(prepared.config, emit=events.append, key_for=lambda m: KEY,
                              parent_run_id=parent, forked_from=prepared.forked_from).run(
            prepared.question, prepared.documents, session=prepared.session, follow_up=prepared.follow_up)
        assert result.answer == "fork says 42 from 15 lines"
        assert events[0].type == "RunStarted" and events[0].forked_from == prepared.forked_from
    finally:
        await prepared.close()
    assert not prepared.session.repl.alive


async def test_a_fork_without_a_config_is_refused_before_anything_is_re_executed(openai_server, store):
    """The parent's config with the request's changes, checked at once: an unpriced model
    under a dollar cap is refused having read the parent's events only (no documents read,
    no worker started)."""
    parent = await _parent(openai_server, store)
    reads = StoreReads(store)
    before = set(worker_processes())
    with pytest.raises(ConfigError, match="No price is known for model"):
        await prepare_run(RunRequest.fork(parent, 2, fork_overrides={"max_cost_usd": 1.0}), runs=reads)
    assert reads.reads == ["iter_events"]
    assert set(worker_processes()) <= before


async def test_a_fork_of_a_turn_that_does_not_exist_says_which_turns_there_are(openai_server, store):
    parent = await _parent(openai_server, store)
    with pytest.raises(ForkError, match="has turns 1..3; there is no turn 9"):
        await prepare_run(RunRequest.fork(parent, 9), runs=store)


async def test_a_rebuild_holds_every_cell_and_the_whole_conversation(openai_server, store):
    parent = await _parent(openai_server, store)
    record = load_record(store, parent)
    request = RunRequest.rebuild(parent, "And the costs?", config(openai_server))
    prepared = await prepare_run(request, runs=store)
    try:
        assert prepared.kind == "rebuild" and prepared.follow_up and prepared.question == "And the costs?"
        assert prepared.config is request.config and prepared.forked_from is None
        assert prepared.replayed_cells == sum(c.done for t in record.top_turns() for c in t.cells) == 3
        assert prepared.session.messages == record.conversation()
        # A follow-up in that live session is prepared as it is: the session stays the caller's.
        follow_up = await prepare_run(RunRequest.follow_up(parent, prepared.session, "And the margin?",
                                                           prepared.documents, request.config))
        assert follow_up.follow_up and follow_up.session is prepared.session and not follow_up.rebuilt
        await follow_up.close()
        assert prepared.session.repl.alive                         # not closed by the follow-up's
        ok, value, _error = await prepared.session.repl.get_var("answers")
        assert ok and "42" in value                                # the rebuilt state is there
    finally:
        await prepared.close()
    assert not prepared.session.repl.alive


async def test_an_ask_is_prepared_as_the_request_says_and_needs_no_store(openai_server):
    request = RunRequest.ask("What was Q3 revenue?", DOCS, config(openai_server), skipped=("b.bin",))
    prepared = await prepare_run(request)
    assert (prepared.kind, prepared.question, prepared.documents, prepared.skipped, prepared.config) == \
        ("ask", request.question, request.documents, request.skipped, request.config)
    assert prepared.session is None and not prepared.follow_up and not prepared.rebuilt


async def test_a_fork_or_a_rebuild_without_the_stored_runs_says_so(openai_server):
    for request in (RunRequest.fork("r1", 2), RunRequest.rebuild("r1", "q", config(openai_server))):
        with pytest.raises(ValueError, match=f"a {request.kind} reads the stored run it comes from"):
            await prepare_run(request)


async def test_cancelling_a_rebuild_while_it_re_executes_closes_its_worker(openai_server, store):
    openai_server.script("root", replies=[code("import time\ntime.sleep(4)\nx = 1"), code("FINAL('slow')")])
    parent = (await stored_run(openai_server, store)).run_id
    before = set(worker_processes())
    task = asyncio.ensure_future(prepare_run(RunRequest.rebuild(parent, "q", config(openai_server)), runs=store))
    for _ in range(200):                                    # until its worker is up (re-executing the sleep)
        if set(worker_processes()) - before:
            break
        await asyncio.sleep(0.05)
    assert set(worker_processes()) - before, "the rebuild started no worker"
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if not set(worker_processes()) - before:
            break
        await asyncio.sleep(0.05)
    assert set(worker_processes()) - before == set()
