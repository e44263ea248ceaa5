"""Reservations per attempt, what failed attempts cost, overruns and estimated usage
reported, and the cap that cannot fit even the first call explained in numbers."""

from core.config import Price
from core.engine.run import Engine
from core.llm.pricing import PriceBook
from tests.integration.engine_helpers import KEY, PRICED, Doc, code, config, of_type
from tests.support.billing import reconcile
from tests.support.openai_server import CutStream, Reply, Status

DOCS = [Doc("a.txt", "alpha beta gamma")]


def _priced(server):
    server.price("root", 1.0, 2.0)
    server.price("sub", 0.5, 1.0)


async def test_a_retry_reserves_again_and_a_cut_stream_costs_what_it_streamed(server):
    _priced(server)
    server.fail_next("root", CutStream(200))
    server.fail_next("sub", Status(429, retry_after=0.3))
    server.script("root", replies=[code("print(llm_query('hello'))\nFINAL('ok')")])
    server.script("sub", fn=lambda r: "HELLO")
    events, during_wait = [], []
    engine: Engine

    def sink(event):
        events.append(event)
        if event.type == "Notice" and "retrying" in event.message:      # sent just before the backoff
            during_wait.append((engine.budget.in_flight, engine.budget.reserved_usd))

    engine = Engine(config(server, max_cost_usd=1.0, prices=PRICED), emit=sink, key_for=lambda m: KEY)
    result = await engine.run("q", DOCS)
    assert result.answer == "ok"
    assert during_wait == [(0, 0.0)]                  # the failed attempt's reservation was released
    b = engine.budget
    assert b.attempts == len(server.history) == 4     # 2 root (cut + ok), 2 sub (429 + ok)
    rec = reconcile(server, PriceBook(PRICED))
    assert abs(b.spent_usd - rec.expected_usd) < 1e-12 and rec.slack_usd == 0
    assert b.estimated_calls == 1 and rec.estimated_attempts == 1     # the cut stream
    cut = server.requests_for("root")[0]
    assert cut.outcome == "cut" and server.request_usd(cut) > 0
    replied = of_type(events, "RootReplied")[0]
    assert replied.cost_usd > server.request_usd(server.requests_for("root")[1])   # both attempts are on the turn
    assert result.totals["estimated_usage_calls"] == 1 and result.totals["estimated_usd"] > 0
    assert of_type(events, "BudgetChanged")[-1].estimated_usage_calls == 1
    notices = [e.message for e in of_type(events, "Notice")]
    assert sum("its cost is estimated from the length of its text" in m for m in notices) == 1


async def test_a_provider_billing_above_the_worst_case_is_an_overrun_that_is_reported(server):
    # The server claims more output tokens than max_tokens allows: the reservation could not cover it.
    server.script("root", replies=[Reply(code("FINAL('x')"), usage=(50, 5000))])
    events = []
    engine = Engine(config(server, max_cost_usd=1.0, prices=PRICED, root_max_tokens=1000), emit=events.append,
                    key_for=lambda m: KEY)
    result = await engine.run("q", DOCS)
    worst = PriceBook(PRICED).worst_case_usd("openai/root", server.requests_for("root")[0].messages, 1000)
    over = (50 * 1.0 + 5000 * 2.0) / 1e6 - worst
    assert over > 0
    assert abs(result.totals["overrun_usd"] - over) < 1e-9 and result.totals["overruns"] == 1
    assert abs(of_type(events, "BudgetChanged")[-1].overrun_usd - over) < 1e-9
    assert sum("cost more than the worst case" in e.message for e in of_type(events, "Notice")) == 1


DEAR = {"openai/root": Price(2.5, 10.0), "openai/sub": Price(0.15, 0.6)}


async def _dear_run(server, cap, root_max_tokens=8192):
    """One FINAL turn by a root at $2.5/$10 per million tokens under `cap`."""
    server.script("root", replies=[code("FINAL('x')")])
    events = []
    result = await Engine(config(server, max_cost_usd=cap, prices=DEAR, root_max_tokens=root_max_tokens),
                          emit=events.append, key_for=lambda m: KEY).run("q", DOCS)
    return result, events


async def test_a_first_call_too_dear_at_full_length_runs_shortened_to_what_the_cap_affords(server):
    result, events = await _dear_run(server, 0.05)
    prices = DEAR
    assert result.status == "finished" and result.answer == "x"
    sent = server.requests_for("root")[0]
    granted = sent.body["max_tokens"]
    worst_in = PriceBook(prices).worst_case_usd("openai/root", sent.messages, 0)
    assert 1024 <= granted < 8192 and worst_in + granted * 10.0 / 1e6 <= 0.05 + 1e-12
    assert worst_in + (granted + 1) * 10.0 / 1e6 > 0.05          # the most the cap affords, not less
    replied = of_type(events, "RootReplied")[0]
    assert replied.shortened_to == granted
    assert result.totals["limited"]["shortened_calls"] == 1


async def test_a_cap_that_cannot_pay_even_the_shortest_first_call_says_why_in_numbers(server):
    result, _ = await _dear_run(server, 0.02)
    assert result.status == "capped" and server.requests_for("root") == []
    error = result.error
    assert "cannot cover the first root call" in error and "max tokens 8,192 x $10/M ($0.0819)" in error
    assert "iteration" not in error.lower()
    fit = int(error.split("a root max tokens of at most ")[1].split(" ")[0].replace(",", ""))
    assert "a dollar cap of at least $0.09" in error
    # The fix it names works: with that root max tokens the first call fits whole.
    again, _ = await _dear_run(server, 0.02, root_max_tokens=fit)
    assert again.status == "finished" and again.answer == "x"
    assert server.requests_for("root")[-1].body["max_tokens"] == fit


def test_the_cli_reports_overruns_and_estimated_usage_in_its_json(server, tmp_path):
    import json
    import subprocess

    from tests.integration.test_cli_ask import ask, make_folder
    server.fail_next("root", CutStream(120))                       # an estimated attempt
    server.script("root", replies=[Reply(code("FINAL('x')"), usage=(50, 5000))])   # billed above max_tokens
    cmd, env = ask(server, tmp_path, make_folder(tmp_path), "--json", "--max-cost", "1", "--root-max-tokens",
                   "1000", "--price", "openai/root=1,2", "--price", "openai/sub=0.5,1")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["overrun_usd"] > 0 and data["estimated_usage_calls"] == 1 and data["store_error"] is None
    assert "more than their reserved worst case" in proc.stderr and "is estimated" in proc.stderr
