"""Caps that let the work happen, and runs that say when a cap or limit changed them
(issue 22): through the real engine, real REPL worker and real HTTP to the scripted server,
stored in a real SQLite file."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time

import pytest

from app.runner import QuestionRun
from core.config import Price
from core.exports import export
from core.fitness import model_fitness
from core.store import RunStore
from tests.integration.engine_helpers import KEY, Doc, code, config, of_type
from tests.integration.test_cli_ask import ask as cli_ask, make_folder
from tests.support.openai_server import Delay, Reply

ROOT, SUB = "openai/root", "openai/sub"
# The issue's case: root $1/$2, sub $0.5/$1.5 per million tokens, a $0.05 cap.
ISSUE_PRICES = {ROOT: Price(1.0, 2.0), SUB: Price(0.5, 1.5)}
CHUNK = "word " * 200                     # ~1,000 characters per sub-call
FAN_OUT = code("chunks = [f'{i}: ' + CHUNK for i in range(8)]\n"
               "out = llm_query_batched(chunks)\nprint(sum(o.startswith('summary') for o in out))")


@pytest.fixture
def store():
    with RunStore.open() as s:
        yield s


async def _issue_case(server, store, **kw):
    server.script("sub", fn=lambda r: Reply("summary of " + r.prompt[:10], usage=(260, 40)))
    server.script("root", replies=[
        Reply(code(f"CHUNK = {CHUNK!r}"), usage=(3000, 60)),
        Reply(FAN_OUT, usage=(3400, 80)),
        Reply(code("FINAL('eight summaries')"), usage=(3800, 20))])
    events: list = []
    peak = [0.0]
    run = QuestionRun("Summarise every chunk", documents=[Doc("a.txt", "alpha " * 50)],
                      config=config(server, max_cost_usd=0.05, prices=ISSUE_PRICES, root_max_tokens=8192,
                                    sub_max_tokens=4096, **kw),
                      store=store, key_for=lambda m: KEY, sinks=[events.append])
    return run, events, peak


async def test_the_issue_cap_of_five_cents_runs_all_eight_sub_calls_within_the_cap(server, store):
    run, events, _ = await _issue_case(server, store)
    seen = []
    run.sinks.append(lambda e: seen.append(e) if e.type == "BudgetChanged" else None)
    result = await run.execute()
    assert result.status == "finished" and result.answer == "eight summaries"
    finished = of_type(events, "SubCallFinished")
    assert [f.status for f in finished] == ["ok"] * 8            # before: all 8 refused
    assert len(server.requests_for("sub")) == 8
    assert all(b.spent_usd + b.reserved_usd <= 0.05 + 1e-12 for b in seen)
    assert result.totals["cost_usd"] <= 0.05
    # The root was told what came back: 8 replies starting "summary".
    assert "8" in server.requests_for("root")[2].messages[-1]["content"]
    limited = result.totals["limited"]
    assert limited["refused_sub_calls"] == 0
    # Whatever was shortened is counted and recorded on its call.
    shortened = [f for f in finished if f.shortened_to is not None]
    assert limited["shortened_calls"] == len(shortened) + sum(
        r.shortened_to is not None for r in of_type(events, "RootReplied"))
    sent = sorted(r.body["max_tokens"] for r in server.requests_for("sub"))
    print(f"\n$0.05 cap: {len(finished)} sub-calls ran, {len(shortened)} shortened (max_tokens sent {sent}), "
          f"spent ${result.totals['cost_usd']:.4f}, peak spent+reserved "
          f"${max(b.spent_usd + b.reserved_usd for b in seen):.4f}")
    assert sent[-1] <= 4096 and sent[0] >= 256
    assert sorted(f.shortened_to for f in shortened) == [m for m in sent if m < 4096]


async def test_a_run_whose_calls_were_refused_carries_the_flag_in_the_record_and_exports(server, store, tmp_path):
    server.script("sub", fn=lambda r: Reply("ok", usage=(20, 5)))
    server.script("root", replies=[
        code("out = llm_query_batched(['a', 'b', 'c'])\nprint(out)"), code("FINAL('partial')")])
    result = await QuestionRun("q", documents=[Doc("a.txt", "x")], config=config(server, max_sub_calls=1),
                               store=store, key_for=lambda m: KEY).execute()
    assert result.status == "finished"
    limited = result.totals["limited"]
    assert limited["refused_sub_calls"] == 2 and limited["refused_by"] == {"the sub-call cap": 2}
    run = store.get_run(result.run_id)
    assert run["limited"] == ("2 of 3 sub-calls were refused by the sub-call cap: this answer may be "
                              "incomplete.")
    assert run["totals"]["limited"] == limited
    [row] = [r for r in store.list_runs() if r["id"] == result.run_id]
    assert row["limited"] == run["limited"]
    for fmt in ("md", "html", "json"):
        path = tmp_path / f"run.{fmt}"
        export(store, result.run_id, fmt, path)
        text = path.read_text(encoding="utf-8")
        assert "2 of 3 sub-calls were refused by the sub-call cap" in text, fmt


async def test_a_run_nothing_limited_carries_no_flag(server, store):
    server.script("sub", fn=lambda r: "ok")
    server.script("root", replies=[code("print(llm_query('a'))\nFINAL('done')")])
    result = await QuestionRun("q", documents=[Doc("a.txt", "x")], config=config(server),
                               store=store, key_for=lambda m: KEY).execute()
    assert result.totals["limited"]["refused_sub_calls"] == 0
    assert store.get_run(result.run_id)["limited"] is None


def test_the_cli_says_limited_in_json_and_exits_4(server, tmp_path):
    server.script("sub", fn=lambda r: "ok")
    server.script("root", replies=[code("print(llm_query_batched(['a', 'b']))"), code("FINAL('half')")])
    cmd, env = cli_ask(server, tmp_path, make_folder(tmp_path), "--json", "--max-sub-calls", "1")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "finished" and data["answer"] == "half"
    assert data["limited"]["refused_sub_calls"] == 1 and data["limited"]["sub_calls"] == 2
    assert data["limited_summary"].startswith("1 of 2 sub-calls was refused by the sub-call cap")
    assert "warning: 1 of 2 sub-calls was refused" in proc.stderr


async def test_six_sequential_sub_calls_of_0_6_s_under_a_2_s_cell_limit_finish(server, store):
    server.script("sub", fn=lambda r: Delay(0.6, r.prompt.upper()))
    server.script("root", replies=[code("out = [llm_query(f'q{i}') for i in range(6)]\nFINAL(','.join(out))")])
    started = time.monotonic()
    result = await QuestionRun("q", documents=[Doc("a.txt", "x")], config=config(server, cell_timeout_s=2.0),
                               store=store, key_for=lambda m: KEY).execute()
    assert time.monotonic() - started >= 3.6
    assert result.status == "finished" and result.answer == "Q0,Q1,Q2,Q3,Q4,Q5"
    assert result.totals["limited"]["cut_cells"] == 0


async def test_a_cell_cut_at_its_time_limit_is_counted(server, store):
    server.script("root", replies=[code("while True:\n    pass"), code("FINAL('gave up')")])
    result = await QuestionRun("q", documents=[Doc("a.txt", "x")], config=config(server, cell_timeout_s=0.5),
                               store=store, key_for=lambda m: KEY).execute()
    assert result.status == "finished"
    assert result.totals["limited"]["cut_cells"] == 1
    assert "1 cell stopped at the time limit" in store.get_run(result.run_id)["limited"]


async def test_a_users_stop_changes_no_models_error_rate_or_failures(server, store):
    server.script("sub", fn=lambda r: Delay(5.0, "late"))
    server.script("root", replies=[code("print(llm_query_batched([f'p{i}' for i in range(6)]))")])
    run = QuestionRun("q", documents=[Doc("a.txt", "x")], config=config(server), store=store,
                      key_for=lambda m: KEY)
    task = asyncio.ensure_future(run.execute())
    while len(server.requests_for("sub")) < 6:
        await asyncio.sleep(0.02)
    run.cancel()
    result = await task
    assert result.status == "cancelled"
    stats = model_fitness(store.db)
    [root] = stats["roots"]
    assert (root["runs"], root["failed"], root["stopped"], root["answer_rate"]) == (1, 0, 1, None)
    [sub] = stats["subs"]
    assert (sub["calls"], sub["errors"], sub["cancelled"], sub["error_rate"]) == (6, 0, 6, None)


async def test_an_unpriced_model_without_a_cap_has_an_unknown_cost_not_zero(server, store, tmp_path):
    server.script("root", replies=[code("FINAL('x')")])
    result = await QuestionRun("q", documents=[Doc("a.txt", "x")], config=config(server, max_depth=0),
                               store=store, key_for=lambda m: KEY).execute()
    assert result.totals["unpriced_models"] == [ROOT]
    started = store.iter_events(result.run_id).__next__()
    assert started.type == "RunStarted" and started.unpriced_models == [ROOT]
    assert store.get_run(result.run_id)["unpriced"] == ROOT
    path = tmp_path / "run.md"
    export(store, result.run_id, "md", path)
    assert "| Cost | unknown |" in path.read_text(encoding="utf-8")


async def test_a_small_cap_whose_worst_root_reserve_exceeds_it_still_runs_small_sub_calls(server, store):
    # root $2.5/$10: the next turn's worst case (20,000 characters of feedback counted a token
    # a byte) alone is $0.07, more than the $0.03 cap; before, every sub-call was refused.
    server.script("sub", fn=lambda r: Reply(r.prompt.upper(), usage=(20, 5)))
    server.script("root", replies=[Reply(code("print(llm_query_batched(['a', 'b', 'c']))"), usage=(1300, 20)),
                                   Reply(code("FINAL('done')"), usage=(1600, 15))])
    prices = {ROOT: Price(2.5, 10.0), SUB: Price(0.15, 0.6)}
    events: list = []
    result = await QuestionRun("q", documents=[Doc("a.txt", "x")],
                               config=config(server, max_cost_usd=0.03, prices=prices),
                               store=store, key_for=lambda m: KEY, sinks=[events.append]).execute()
    assert result.status == "finished"
    assert [f.status for f in of_type(events, "SubCallFinished")] == ["ok"] * 3
    assert result.totals["limited"]["refused_sub_calls"] == 0 and result.totals["cost_usd"] <= 0.03


async def test_a_model_call_at_no_known_price_makes_the_cost_unknown(server, store):
    from app.settings import Endpoint, Settings, build_run_config
    server.script("helper", fn=lambda r: "helped")
    server.script("root", replies=[code("print(llm_query('x', model='lab/helper'))\nFINAL('done')")])
    settings = Settings(endpoints=[Endpoint("lab", server.url, ["root", "sub", "helper"], runs_here=False)],
                        sub_call_models=["lab/helper"])
    cfg = build_run_config(settings, root="lab/root", sub="lab/sub", overrides={
        "prices": {"lab/root": Price(1, 2), "lab/sub": Price(1, 2)}, "mode": "rlm"})
    result = await QuestionRun("q", documents=[Doc("a.txt", "x")], config=cfg, store=store,
                               key_for=lambda m: KEY).execute()
    assert result.status == "finished"
    assert result.totals["unpriced_models"] == ["openai/helper"]
    assert store.get_run(result.run_id)["unpriced"] == "openai/helper"


async def test_a_reply_that_states_a_final_answer_without_final_is_told_how_to_finish(server, store):
    # Measured on the real 1.5B model: "Final answer:" then the value in a bare fence, seven
    # turns running, the run capped with no answer.
    server.script("root", replies=["Counted.\nFinal answer:\n```\n2610\n```", "FINAL('2610')"])
    result = await QuestionRun("q", documents=[Doc("a.txt", "x")], config=config(server), store=store,
                               key_for=lambda m: KEY).execute()
    assert result.status == "finished" and result.answer == "2610"
    told = server.requests_for("root")[1].messages[-1]["content"]
    assert "calls 2610 its final answer" in told and "FINAL('2610')" in told
    assert result.totals["stated_finals"] == 1
