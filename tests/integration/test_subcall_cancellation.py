"""Sub-calls belong to the cell that made them and end with it; every sub_call gets
exactly one reply. A REPL kept for a follow-up holds no wedged thread afterwards,
and a cell that times out frees its sub-calls' reservations and concurrency slots."""

import time

from core.engine.run import Engine
from tests.integration.engine_helpers import KEY, PRICED, Doc, code, config, of_type
from tests.support.openai_server import Delay

DOCS = [Doc("a.txt", "alpha beta gamma")]

LEAVE_A_THREAD = code(
    "import threading, time\nseen = []\n"
    "def ask():\n    try:\n        seen.append(llm_query('SLOW thread'))\n"
    "    except Exception as e:\n        seen.append(f'{type(e).__name__}: {e}')\n"
    "t = threading.Thread(target=ask, name='asker')\nt.start()\ntime.sleep(0.5)\nprint('cell ends')")
# A thread waits on a slow reply while the cell's own code spins: the cell clock counts the
# CPU the worker uses during the wait, so the cell still times out at its limit.
TIME_OUT = code("import threading\ndef wait():\n    try:\n        llm_query('SLOW main')\n    except Exception:\n"
                "        pass\nw = threading.Thread(target=wait, name='waiter')\nw.start()\n"
                "while True:\n    pass")
FAST_AFTER = code("print(llm_query('fast one'))\nFINAL('first done')")
COUNT_THREADS = code(
    "import threading\nt.join(5)\n"
    "FINAL(repr((threading.active_count(), sorted(x.name for x in threading.enumerate()), seen)))")


def _slow_or_fast(req):
    return Delay(30.0, "late") if req.prompt.startswith("SLOW") else f"ok: {req.prompt}"


async def test_a_kept_repl_has_no_wedged_thread_and_a_timed_out_cell_frees_its_slots(server):
    server.script("sub", fn=_slow_or_fast)
    server.script("root", replies=[LEAVE_A_THREAD, TIME_OUT, FAST_AFTER, COUNT_THREADS])
    events, at_timeout = [], []
    engine: Engine

    def sink(event):
        events.append(event)
        if event.type == "CellExecuted" and event.fault == "timeout":
            b = engine.budget
            at_timeout.append((b.reserved_usd, b.in_flight))

    # concurrency 1: had the timed-out cell kept its slot, the fast call after it could not run.
    cfg = config(server, cell_timeout_s=1.5, concurrency=1, max_cost_usd=1.0, prices=PRICED)
    engine = Engine(cfg, emit=sink, key_for=lambda m: KEY, keep_session=True)
    started = time.monotonic()
    first = await engine.run("q", DOCS)
    assert first.answer == "first done", first.error
    assert time.monotonic() - started < 20                     # nothing waited for the 30 s replies
    assert at_timeout == [(0.0, 0)]                            # freed before the cell was reported
    cancelled = [e for e in of_type(events, "SubCallFinished") if e.status == "cancelled"]
    assert {e.prompt for e in of_type(events, "SubCallStarted") if e.call_id in {c.call_id for c in cancelled}} \
        == {"SLOW thread", "SLOW main"}
    assert all(e.error_type == "Cancelled" for e in cancelled)
    slow = [r for r in server.requests_for("sub") if r.prompt.startswith("SLOW")]
    assert len(slow) == 2 and all(r.disconnected for r in slow)    # the HTTP requests really stopped
    assert of_type(events, "SubCallFinished")[-1].response == "ok: fast one"

    second = await Engine(cfg, emit=[].append, key_for=lambda m: KEY).run(
        "how many threads?", DOCS, session=first.session, follow_up=True)
    count, names, seen = eval(second.answer)
    assert names == sorted(["MainThread", "repl-reader"]) and count == 2, names   # no thread left waiting
    assert len(seen) == 1 and seen[0].startswith("SubCallError: Cancelled: cancelled: the cell that made it ended")


async def test_a_sub_call_made_between_cells_is_answered_at_once(server):
    server.script("sub", fn=lambda r: f"ok: {r.prompt}")
    server.script("root", replies=[
        code("import threading, time\nbox = []\n"
             "def later():\n    time.sleep(0.6)\n    try:\n        box.append(llm_query('late'))\n"
             "    except Exception as e:\n        box.append(str(e))\n"
             "th = threading.Thread(target=later)\nth.start()\nprint('started')"),
        Delay(1.5, code("print('waiting')")),         # the thread asks while this reply is on its way
        code("th.join(5)\nFINAL(repr(box))"),
    ])
    events = []
    result = await Engine(config(server, max_iterations=4), emit=events.append, key_for=lambda m: KEY).run("q", DOCS)
    # The thread asks while the engine is between cells (the root is being called): no cell owns it.
    box = eval(result.answer)
    assert len(box) == 1 and box[0].startswith("Cancelled: cancelled: made between cells"), box
    assert not any(r.prompt == "late" for r in server.requests_for("sub"))


async def test_nested_rlms_run_behind_their_own_limit_and_a_bigger_batch_queues(server):
    server.script("sub", fn=lambda r: "x")

    def root(req):
        first = next(m["content"] for m in req.messages if m["role"] == "user")
        if "NESTED" in first:
            return Delay(0.3, code("FINAL('n')"))
        if sum(m["role"] == "assistant" for m in req.messages) == 0:
            return code("r = rlm_query_batched([f'NESTED {i}' for i in range(5)])\nFINAL(','.join(r))")
        return code("FINAL('?')")

    server.script("root", fn=root)
    events = []
    result = await Engine(config(server, max_depth=2, nested_concurrency=2), emit=events.append,
                          key_for=lambda m: KEY).run("q", DOCS)
    assert result.answer == "n,n,n,n,n"
    budget = of_type(events, "BudgetChanged")
    assert max(e.nested_running for e in budget) == 2
    assert max(e.nested_waiting for e in budget) == 3
    assert result.totals["nested_peak"] == 2
    # From outside: never more than 2 nested root calls at the server at once.
    nested = sorted((r.started, r.finished) for r in server.requests_for("root")
                    if "NESTED" in next(m["content"] for m in r.messages if m["role"] == "user"))
    assert max(sum(1 for s, f in nested if s <= t < f) for t, _ in nested) <= 2
