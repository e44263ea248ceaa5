"""A REPL worker started before the run (core/repl/spare.py, what `rlm-studio ask` does while
it reads the documents): the run takes it and closes it; one nobody takes is closed by
discard(), at any moment of its start and under a cancel; a spare with other limits is not
taken. Real sandboxed workers, the real store, the scripted server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

from app.run_service import RunRequest, RunService
from core.repl import spare
from core.store import RunStore
from tests.integration.test_cancel_cli import _left_by
from tests.integration.test_cli_ask import ask
from tests.support import leaks
from tests.support.trust_runs import DOCS, code, config


@pytest.fixture
async def store():
    leaks.clean_up()
    with RunStore.open() as s:
        yield s
    await spare.discard()          # a test that failed half-way leaves no spare to the next one


async def _nothing_left() -> None:
    dirs = leaks.repl_dirs()
    procs = await asyncio.to_thread(leaks.settle, 2.0)
    leaks.clean_up()
    assert not procs and not dirs, f"left behind: processes {procs}, directories {dirs}"


@pytest.mark.parametrize("wait_for_start", [True, False])
async def test_the_run_takes_the_spare_and_closes_it(openai_server, store, wait_for_start):
    cfg = config(openai_server)
    spare.warm_up(memory_limit_mb=cfg.memory_limit_mb, require_full_sandbox=cfg.require_full_sandbox)
    client = spare._spare[1]
    if wait_for_start:
        await client._starting
        started_pid = client.pid
        assert started_pid is not None
    openai_server.script("root", replies=[code("FINAL(str(len(context)))")])
    outcome = await RunService(store=store).run(RunRequest.ask("q", DOCS, cfg))
    assert outcome.status == "finished", outcome.error
    assert spare._spare is None                      # taken
    assert client.shutdown_path is not None          # and closed by the run, which used it
    assert int(outcome.answer) >= sum(len(d.text) for d in DOCS)     # the context was loaded in it
    await spare.discard()                            # nothing to discard
    await _nothing_left()


@pytest.mark.parametrize("moment", ["at-once", "during-start", "after-start"])
async def test_an_untaken_spare_is_closed_by_discard(store, moment):
    spare.warm_up(memory_limit_mb=2048)
    client = spare._spare[1]
    if moment == "during-start":
        await asyncio.sleep(0.05)
    elif moment == "after-start":
        await client._starting
    await spare.discard()
    assert spare._spare is None and client.shutdown_path is not None
    await _nothing_left()


async def test_discard_under_a_cancel_still_closes_the_spare(store):
    spare.warm_up(memory_limit_mb=2048)
    client = spare._spare[1]
    await asyncio.sleep(0.02)
    task = asyncio.ensure_future(spare.discard())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert client.shutdown_path is not None
    await _nothing_left()


async def test_a_spare_with_other_limits_is_not_taken(openai_server, store):
    cfg = config(openai_server, memory_limit_mb=1024)
    spare.warm_up(memory_limit_mb=4096)
    client = spare._spare[1]
    openai_server.script("root", replies=[code("FINAL('done')")])
    outcome = await RunService(store=store).run(RunRequest.ask("q", DOCS, cfg))
    assert outcome.status == "finished", outcome.error
    assert spare._spare is not None and client.shutdown_path is None   # still the spare's
    await spare.discard()
    await _nothing_left()


async def test_a_preloaded_spare_is_taken_with_its_load_by_a_run_over_the_same_documents(openai_server, store):
    cfg = config(openai_server)
    docs = list(DOCS)
    spare.warm_up(memory_limit_mb=cfg.memory_limit_mb)
    client = spare._spare[1]
    spare.preload(docs)
    loading = spare._preload["loading"]
    await loading                                    # written and loaded before the run starts
    events: list = []
    openai_server.script("root", replies=[code("FINAL(str(len(context)))")])
    outcome = await RunService(store=store).run(RunRequest.ask("q", docs, cfg), [events.append])
    assert outcome.status == "finished", outcome.error
    assert int(outcome.answer) >= sum(len(d.text) for d in DOCS)
    assert spare._spare is None and client.shutdown_path is not None
    assert [e.type for e in events].count("RootTurnStarted") == 1
    await _nothing_left()


async def test_a_preloaded_spare_is_not_taken_by_a_run_over_other_documents(openai_server, store):
    cfg = config(openai_server)
    spare.warm_up(memory_limit_mb=cfg.memory_limit_mb)
    client = spare._spare[1]
    spare.preload(list(DOCS))
    other = [DOCS[0]]
    openai_server.script("root", replies=[code("FINAL(str(len(context)))")])
    outcome = await RunService(store=store).run(RunRequest.ask("q", other, cfg))
    assert outcome.status == "finished", outcome.error
    assert int(outcome.answer) < sum(len(d.text) for d in DOCS)     # its own context, not the spare's
    assert spare._spare is not None and client.shutdown_path is None
    await spare.discard()                            # the loading task is cancelled and the worker closed
    assert client.shutdown_path is not None
    await _nothing_left()


@pytest.mark.parametrize("files,size", [(3, 2_000_000), (1, 1_000)])
def test_ask_over_a_big_and_a_small_folder_answers_from_the_whole_context_and_leaves_nothing(
        server, tmp_path, files, size):
    """`ask` starts a spare worker once 4 MB are counted (3 x 2 MB here) and not for 1 kB;
    either way the run reads the whole context, and no worker or directory of its is left."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for k in range(files):
        (folder / f"part-{k}.txt").write_text(f"{k}" * size)
    server.script("root", replies=[code("FINAL(str(sum(len(d['text']) for d in documents)))")])
    cmd, env = ask(server, tmp_path, folder, "--json")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert json.loads(out)["answer"] == str(files * size)
    procs, dirs = _left_by(proc.pid)
    assert not procs and not dirs


@pytest.mark.parametrize("idle", [True, False])
def test_with_a_cpu_free_ask_starts_the_worker_before_it_reads_even_a_small_context(
        server, tmp_path, monkeypatch, idle):
    """A free CPU (app/cli_ask.py: idle_cpu): the worker starts first thing, beside the reading
    and the rest of the start, and the run takes it; on a busy machine a 10 kB context's worker
    starts beside the root's first call. The real ingestion runs; it is only watched."""
    import core.ingest
    from app import cli, cli_ask
    (tmp_path / "notes.txt").write_text("apples: 3\n" * 1000)
    real_ingest, seen = core.ingest.ingest, []

    async def watched(*args, **kwargs):
        seen.append(spare._spare is not None)
        return await real_ingest(*args, **kwargs)
    monkeypatch.setattr(core.ingest, "ingest", watched)
    monkeypatch.setattr(cli_ask, "idle_cpu", lambda: idle)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cli-test")
    server.script("root", replies=[code("FINAL(str(len(context)))")])
    cmd, _env = ask(server, tmp_path, tmp_path / "notes.txt", "--json", "--quiet")
    assert cli.main(cmd[3:]) == 0
    assert seen == [idle] and spare._spare is None        # started before the reading (or not); taken


def test_a_free_cpu_is_a_whole_one_on_average():
    from app.cli_ask import idle_cpu
    assert idle_cpu(0.4, 2) and idle_cpu(1.0, 2) and idle_cpu(2.9, 4)
    assert not idle_cpu(1.3, 2) and not idle_cpu(0.0, 1) and not idle_cpu(3.5, 4)
