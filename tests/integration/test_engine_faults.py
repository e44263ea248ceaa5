"""Model code that misbehaves, providers that fail, users who cancel: the run goes on or ends cleanly."""

import asyncio

from core.engine.run import Engine
from tests.integration.engine_helpers import KEY, Doc, code, config, of_type, root_prompts, run

DOCS = [Doc("a.txt", "some text")]


async def test_cell_timeout_is_reported_and_the_run_goes_on(server):
    server.script("root", replies=[code("x = 5\nwhile True:\n    pass"), code("FINAL(str(x))")])
    result, events = await run(server, docs=DOCS, cell_timeout_s=1.0)
    cell = of_type(events, "CellExecuted")[0]
    assert cell.fault == "timeout"
    assert "1 s limit" in root_prompts(server)[1]
    assert result.status == "finished" and result.answer == "5"   # interrupted, state kept


async def test_worker_crash_restarts_and_context_is_back(server):
    server.script("root", replies=[code("import os\nos._exit(3)"),
                                   code("FINAL(str(len(context) > 0) + ' ' + documents[0]['path'])")])
    result, events = await run(server, docs=DOCS)
    cell = of_type(events, "CellExecuted")[0]
    assert cell.fault in ("crash", "memory") and cell.restarted
    assert "restarted" in root_prompts(server)[1]
    assert result.answer == "True a.txt"


async def test_segfault_and_memory_blowup_do_not_end_the_run(server):
    server.script("root", replies=[
        code("import ctypes\nctypes.string_at(0)"),
        code("big = []\nwhile True:\n    big.append(bytearray(50_000_000))"),
        code("FINAL('survived')")])
    result, events = await run(server, docs=DOCS, memory_limit_mb=400)
    faults = [c.fault for c in of_type(events, "CellExecuted")]
    assert faults[0] == "crash" and faults[1] in ("memory", "crash", None)
    assert result.answer == "survived"


async def test_endless_recursion_and_huge_output(server):
    server.script("root", replies=[
        code("def f(n):\n    return f(n + 1)\nf(0)"),
        code("import sys\nfor _ in range(300):\n    sys.stdout.write('z' * 1_000_000)"),
        code("FINAL('fine')")])
    result, events = await run(server, docs=DOCS, max_output_chars=2000)
    cells = of_type(events, "CellExecuted")
    assert "RecursionError" in (cells[0].error or "")
    assert len(cells[1].output_for_model) < 3000 and "300,000,000" in cells[1].output_for_model
    assert result.answer == "fine"


async def test_sub_429_then_success_honours_retry_after(server):
    from tests.support.openai_server import Status
    server.script("sub", fn=lambda r: "ok")
    server.fail_next("sub", Status(429, retry_after=0.5))
    server.script("root", replies=[code("FINAL(llm_query('x'))")])
    result, _ = await run(server, docs=DOCS)
    reqs = server.requests_for("sub")
    assert result.answer == "ok" and len(reqs) == 2
    assert reqs[1].started - reqs[0].started >= 0.45


async def test_sub_500_forever_becomes_an_error_string(server):
    from tests.support.openai_server import Status
    server.script("sub", fn=lambda r: Status(500, message="boom"))
    server.script("root", replies=[code("FINAL(llm_query_batched(['x'])[0])")])
    result, _ = await run(server, docs=DOCS, max_retries=1)
    assert result.answer.startswith("[error: SubCallError")


async def test_sub_timeout_and_malformed_body(server):
    from tests.support.openai_server import Hang, Malformed
    server.script("sub", fn=lambda r: Hang(5) if "hang" in r.prompt else Malformed())
    server.script("root", replies=[code("FINAL(' | '.join(llm_query_batched(['hang', 'bad'])))")])
    result, _ = await run(server, docs=DOCS, max_retries=0, request_timeout_s=1)
    first, second = result.answer.split(" | ")
    assert first.startswith("[error:") and second.startswith("[error:")


async def test_root_stream_cut_midway_is_retried(server):
    from tests.support.openai_server import CutStream
    server.fail_next("root", CutStream(after_chars=10))
    server.script("root", replies=[code("FINAL('after the cut')")])
    result, events = await run(server, docs=DOCS)
    assert result.answer == "after the cut"
    assert any("retrying" in n.message for n in of_type(events, "Notice"))


async def test_root_401_fails_the_run_with_a_clear_message(server):
    from tests.support.openai_server import Status
    server.script("root", replies=[Status(401, message="Incorrect API key provided")])
    result, events = await run(server, docs=DOCS)
    assert result.status == "failed"
    assert "openai" in result.error.lower() and "key" in result.error.lower()
    assert events[-1].type == "RunFailed"


async def test_cancel_stops_in_flight_calls_and_keeps_the_transcript(server):
    server.script("sub", fn=lambda r: "late", latency_s=30)
    server.script("root", replies=[code("print('before')\nout = llm_query_batched(['a'] * 4)")])
    events = []
    engine = Engine(config(server), emit=events.append, key_for=lambda m: KEY)
    task = asyncio.ensure_future(engine.run("q", DOCS))
    for _ in range(200):
        await asyncio.sleep(0.05)
        if len([e for e in events if e.type == "SubCallStarted"]) == 4:
            break
    engine.cancel()
    result = await asyncio.wait_for(task, 10)
    assert result.status == "cancelled"
    assert events[-1].type == "RunFailed" and events[-1].status == "cancelled"
    finished = of_type(events, "SubCallFinished")
    assert len(finished) == 4 and all(e.status == "cancelled" for e in finished)
    assert of_type(events, "RootReplied")        # what was done is kept


async def test_wall_clock_cap(server):
    server.script("root", replies=[code("import time\ntime.sleep(5)"), code("FINAL('late')")])
    result, _ = await run(server, docs=DOCS, max_wall_seconds=1.5)
    assert result.status == "capped" and "wall-clock" in result.error


async def test_keys_never_reach_the_worker(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret-should-not-leak")
    server.script("root", replies=[code(
        "import os\nenv = dict(os.environ)\n"
        "leak = [k for k, v in env.items() if 'sk-' in v or 'KEY' in k.upper()]\n"
        "cmd = open('/proc/self/cmdline','rb').read().decode(errors='replace')\n"
        "try:\n    penv = open(f'/proc/{os.getppid()}/environ','rb').read().decode(errors='replace')\n"
        "except OSError as e:\n    penv = 'unreadable'\n"
        "FINAL(repr((leak, 'sk-' in cmd, 'sk-test' in penv)))")])
    result, _ = await run(server, docs=DOCS)
    assert result.answer == "([], False, False)"
    auth = server.requests_for("root")[0].headers.get("Authorization") or \
        server.requests_for("root")[0].headers.get("authorization")
    assert auth == f"Bearer {KEY}"


async def test_a_worker_that_cannot_start_fails_the_run_clearly(server):
    server.script("root", replies=[code("FINAL('never')")])
    events = []
    engine = Engine(config(server), emit=events.append, key_for=lambda m: KEY,
                    worker_command=["/nonexistent/python-for-the-worker"])
    result = await engine.run("q", DOCS)
    assert result.status == "failed" and "REPL worker could not run" in result.error
    assert events[-1].type == "RunFailed"
    assert server.history == []
