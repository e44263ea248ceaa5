"""Opt-in: the real path with a real small model (Qwen2.5-Coder-1.5B through llama.cpp).

    ../shared/tools/local-llm.sh &            # serves on 127.0.0.1:8088
    RLM_REAL_MODEL_URL=http://127.0.0.1:8088/v1 .venv/bin/pytest tests/integration/test_real_model.py -s

Skipped unless RLM_REAL_MODEL_URL names the server. The model is weak and slow; the
test proves that every real part works together, not that the answer is smart.
"""

import os

import pytest

from core.config import Price, RunConfig
from core.engine.run import Engine
from tests.integration.engine_helpers import Doc

URL = os.environ.get("RLM_REAL_MODEL_URL")
MODEL = os.environ.get("RLM_REAL_MODEL", "openai/qwen2.5-coder-1.5b")

pytestmark = [pytest.mark.realmodel,
              pytest.mark.skipif(not URL, reason="RLM_REAL_MODEL_URL is not set"),
              pytest.mark.timeout(1800)]


async def test_small_question_end_to_end_with_a_real_model():
    docs = [Doc("inventory.txt", "\n".join(
        f"item {i}: {'apples' if i % 3 == 0 else 'pears'} x{i}" for i in range(1, 61)))]
    events = []
    config = RunConfig(root_model=MODEL, sub_model=MODEL, api_base=URL, max_depth=1, max_iterations=6,
                       root_max_tokens=600, sub_max_tokens=200, cell_timeout_s=60,
                       max_cost_usd=0.0 + 1.0, prices={MODEL: Price(0, 0)}, request_timeout_s=600)
    result = await Engine(config, emit=events.append, key_for=lambda m: "sk-local").run(
        "How many lines mention apples? Answer with a number.", docs)
    cells = [e for e in events if e.type == "CellExecuted"]
    print(f"\nstatus={result.status} turns={result.totals['iterations']} cells={len(cells)} "
          f"syntax_errors={result.totals['syntax_errors']} sub_calls={result.totals['sub_calls']} "
          f"answer={result.answer!r} error={result.error!r}")
    for e in events:
        if e.type == "RootReplied":
            print("---- root reply ----\n" + e.text[:1500])
        elif e.type == "CellExecuted":
            print("---- cell output ----\n" + e.output_for_model[:800])
    assert result.status in ("finished", "capped")
    assert cells, "the model's code never ran"
    assert result.totals["cost_usd"] == 0
