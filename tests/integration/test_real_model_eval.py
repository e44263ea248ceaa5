"""Opt-in: the shipped sample question set with a real small model (Qwen2.5-Coder-1.5B
through llama.cpp, ../shared/tools/local-llm.sh), scored like `rlm-studio eval` does.

    RLM_REAL_MODEL_URL=http://127.0.0.1:8088/v1 .venv/bin/pytest tests/integration/test_real_model_eval.py -s

Skipped unless RLM_REAL_MODEL_URL names the server. It prints the scorecard (syntax-error
rate, turns, accuracy); the model is weak, so it checks that every part worked, not the score.
"""

import json
import os

import pytest

from app.runner import QuestionRun
from core.config import Price, RunConfig
from core.evaluation import QuestionSet, load_question_set
from core.evaluation.runner import Evaluation, Pair
from core.evaluation.scorecard import render_text
from core.ingest import ingest
from core.llm.client import ModelClient
from core.samples import samples_dir
from core.store import RunStore

URL = os.environ.get("RLM_REAL_MODEL_URL")
MODEL = os.environ.get("RLM_REAL_MODEL", "openai/qwen2.5-coder-1.5b")
QUESTIONS = ("error-lines", "top-product")

pytestmark = [pytest.mark.realmodel,
              pytest.mark.skipif(not URL, reason="RLM_REAL_MODEL_URL is not set"),
              pytest.mark.timeout(3600)]


async def test_sample_questions_with_a_real_small_model():
    full = load_question_set(samples_dir() / "eval_questions.jsonl")
    qset = QuestionSet(full.name, full.path, full.sha256, tuple(q for q in full.questions if q.id in QUESTIONS))
    found = await ingest([str(samples_dir() / "documents")])
    store = RunStore.open()

    def config_for(pair):
        return RunConfig(root_model=pair.root, sub_model=pair.sub, api_base=URL, max_depth=1, max_iterations=4,
                         root_max_tokens=600, sub_max_tokens=200, cell_timeout_s=60, max_cost_usd=1.0,
                         prices={MODEL: Price(0, 0)}, request_timeout_s=600)

    async def run_rlm(question, config, evaluation_id):
        return await QuestionRun(question, documents=found.documents, config=config, store=store,
                                 key_for=lambda m: "sk-local", evaluation_id=evaluation_id).execute()

    evaluation = Evaluation(qset, found.documents, [Pair(MODEL, MODEL)], config_for=config_for, run_rlm=run_rlm,
                            llm_for=lambda c: ModelClient(key_for=lambda m: "sk-local", api_base_for=lambda m: URL),
                            parallel=1, direct=True, windows={MODEL: 16384})
    evaluation_id, card = await evaluation.run(store.db)
    print("\n" + render_text(card) + "\n" + json.dumps(card["latest_answers"], indent=1)[:3000])
    store.close()
    [rlm] = [ln for ln in card["lines"] if ln["mode"] == "rlm"]
    assert rlm["answers"] == len(QUESTIONS) and rlm["cells"] > 0
    [direct] = [ln for ln in card["lines"] if ln["mode"] == "direct"]
    assert direct["cost_usd"] == 0            # 170 KB of samples do not fit a 16k window: nothing sent
