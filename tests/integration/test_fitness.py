"""Fitness per model from runs the real engine stored into a real SQLite file, checked
against figures worked out by hand from what the scripted models did."""

import json
import subprocess
import sys

import pytest

from app.runner import QuestionRun
from core.config import Price
from core.fitness import model_fitness, render_fitness
from core.store import RunStore
from tests.integration.engine_helpers import KEY, Doc, config
from tests.integration.test_cli_ask import cli_env
from tests.support.openai_server import Reply, Status

USAGE = (100, 10)          # every root call: 100 in, 10 out -> 0.00012 USD at 1,2 per million
SUB_USAGE = (50, 5)        # every sub-call: 50 in, 5 out -> 0.00003 USD at 0.5,1 per million
PRICES = {"openai/alpha": Price(1, 2), "openai/beta": Price(1, 2), "openai/sub": Price(0.5, 1)}
DOCS = [Doc("a.log", "ok\nERROR one\n")]


async def ask(server, store, root, question, **kw):
    cfg = config(server, root_model=root, sub_model="openai/sub", prices=PRICES, max_cost_usd=1.0, **kw)
    return await QuestionRun(question, documents=DOCS, config=cfg, store=store,
                             key_for=lambda m: KEY).execute()


def reply(text):
    return Reply(text, usage=USAGE)


@pytest.fixture
async def stored(server, tmp_path):
    server.script("sub", fn=lambda r: Reply(r.prompt.upper(), usage=SUB_USAGE))
    server.script("alpha", replies=[
        # run 1: a syntax error, a runtime error with two sub-calls before it, then FINAL in code
        reply("```repl\nprint(context[:5]\n```"),
        reply("```repl\nout = llm_query_batched(['a', 'b'])\n1 / 0\n```"),
        reply("```repl\nFINAL(out[0])\n```"),
        # run 2: a final answer as text in the first reply, no cell
        reply("FINAL(two)"),
        # run 3: capped at 2 turns (one cell each) and no answer at the final request
        # (its second reply also copies a block marker of the feedback: refused, not run)
        reply("```repl\nprint(1)\n```"), reply("```repl\nprint(2)\n```\n```repl\n[block 1 of 1: ran]\n2\n```"),
        reply("I am not sure."),
    ])
    server.script("beta", replies=[Status(401, message="bad key")])
    store = RunStore.open()
    results = [await ask(server, store, "openai/alpha", "one?"),
               await ask(server, store, "openai/alpha", "two?"),
               await ask(server, store, "openai/alpha", "three?", max_iterations=2),
               await ask(server, store, "openai/beta", "four?")]
    assert [r.status for r in results] == ["finished", "finished", "capped", "failed"]
    yield store
    store.close()


async def test_root_and_sub_fitness_match_the_runs_worked_out_by_hand(stored):
    stats = model_fitness(stored.db)
    alpha, beta = stats["roots"]
    assert alpha["model"] == "openai/alpha" and beta["model"] == "openai/beta"
    assert (alpha["runs"], alpha["finished"], alpha["capped"], alpha["failed"]) == (3, 2, 1, 0)
    assert alpha["answer_rate"] == round(2 / 3, 4)
    assert (alpha["cells"], alpha["syntax_errors"], alpha["runtime_errors"]) == (5, 1, 1)
    assert alpha["syntax_error_rate"] == 0.2 and alpha["runtime_error_rate"] == 0.2
    assert alpha["refused_cells"] == 1
    assert alpha["turns_to_answer"] == 2.0                      # (3 + 1) / 2 finished runs
    assert alpha["root_calls"] == 7                             # 3 + 1 + (2 + the final request)
    assert (alpha["root_input_tokens"], alpha["root_output_tokens"]) == (700, 70)
    assert alpha["cost_usd"] == pytest.approx(7 * 0.00012 + 2 * 0.00003)
    assert alpha["cost_per_run_usd"] == pytest.approx((7 * 0.00012 + 2 * 0.00003) / 3)
    assert alpha["seconds_per_run"] is not None and alpha["seconds_per_run"] > 0
    assert alpha["thinking_tokens"] is None                     # the scripted server reports none
    assert (beta["runs"], beta["failed"], beta["answer_rate"], beta["cells"]) == (1, 1, 0.0, 0)
    assert beta["syntax_error_rate"] is None and beta["turns_to_answer"] is None
    [sub] = stats["subs"]
    assert (sub["model"], sub["calls"], sub["runs"], sub["errors"]) == ("openai/sub", 2, 1, 0)
    assert sub["cost_usd"] == pytest.approx(2 * 0.00003) and sub["output_tokens"] == 10
    text = render_fitness(stats)
    assert "openai/alpha" in text and "20% (1)" in text and "Sub models" in text


async def test_models_stats_cli_prints_the_same_figures(stored, tmp_path, monkeypatch):
    import os
    env = cli_env(tmp_path)
    env["RLMSTUDIO_DESKTOP_HOME"] = os.environ["RLMSTUDIO_DESKTOP_HOME"]
    proc = subprocess.run([sys.executable, "-m", "app.main", "models", "stats", "--json"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == model_fitness(stored.db)


async def test_the_guide_gets_the_users_own_numbers(stored):
    from core.fitness import guide_numbers
    from ui.guide import guide_text
    text = guide_numbers(stored.db)
    assert text.startswith("**Your numbers.**")
    assert "Your 4 stored runs read a median of 13 characters" in text      # "ok\nERROR one\n"
    guide = guide_text({"your_numbers": text})
    assert "An RLM or one plain call?" in guide and "median of 13 characters" in guide
    assert "{your_numbers}" not in guide_text({})
