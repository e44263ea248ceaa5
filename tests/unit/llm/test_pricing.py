"""PriceBook: litellm's bundled price map, user overrides, and the worst case."""

import json
import random
import time
from pathlib import Path

import pytest

from core.config import Price
from core.llm.litellm_import import litellm
from core.llm.pricing import PriceBook, estimate_text_tokens, estimate_tokens, worst_case_input_tokens


def test_known_model_from_litellms_map():
    book = PriceBook()
    assert book.price("gpt-4o-mini") == Price(0.15, 0.6)
    assert book.price("openai/gpt-4o-mini") == Price(0.15, 0.6)     # prefix stripped
    assert book.context_window("openai/gpt-4o-mini") == 128_000
    assert book.cost_usd("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert book.cost_usd("gpt-4o-mini", 2000, 100) == pytest.approx(2000 * 0.15e-6 + 100 * 0.6e-6)


def test_override_wins_by_exact_name():
    book = PriceBook({"gpt-4o-mini": Price(1.0, 2.0), "openai/root": Price(3.0, 4.0)})
    assert book.price("gpt-4o-mini") == Price(1.0, 2.0)
    assert book.price("openai/gpt-4o-mini") == Price(0.15, 0.6)      # not the same name
    assert book.price("openai/root") == Price(3.0, 4.0)
    assert book.cost_usd("openai/root", 1_000_000, 0) == pytest.approx(3.0)


def test_unknown_model_has_no_price_and_costs_nothing():
    book = PriceBook()
    assert book.price("openai/no-such-model-xyz") is None
    assert book.context_window("openai/no-such-model-xyz") is None
    assert book.cost_usd("openai/no-such-model-xyz", 10**6, 10**6) == 0.0


def test_zero_price_in_the_map_is_free_only_when_the_user_says_so():
    entry = litellm().model_cost["ollama/llama3"]
    assert entry["input_cost_per_token"] == 0 and entry["output_cost_per_token"] == 0
    assert PriceBook().price("ollama/llama3") is None
    marked = PriceBook({"ollama/llama3": Price(0, 0)})
    assert marked.price("ollama/llama3").free
    assert marked.worst_case_usd("ollama/llama3", [{"role": "user", "content": "x"}], 1000) == 0.0


def test_worst_case_input_tokens_counts_bytes_plus_overhead():
    messages = [{"role": "system", "content": "abc"}, {"role": "user", "content": "héllo ✓"}]
    # 3 bytes + ("h" 1, "é" 2, "llo " 4, "✓" 3 = 10 bytes) + 16 per message + 16
    assert worst_case_input_tokens(messages) == 3 + 10 + 2 * 16 + 16
    parts = [{"role": "user", "content": [{"type": "text", "text": "ab"}, {"type": "text", "text": "c"}],
              "name": "bob"}]
    assert worst_case_input_tokens(parts) == 3 + 3 + 16 + 16


def _random_text(rng: random.Random, n: int) -> str:
    pools = ["abcdefghijklmnopqrstuvwxyz     \n\t.,;:!?0123456789",
             "äöüßéèêàçñøå", "日本語の文章と中文字符", "😀🎉🧪🚀👩‍🔬", "\u0000\u00ff\u2028\ufeff",
             "def f(x):\n    return {'a': [1, 2]}\n", "ΑΒΓΔαβγδ Кириллица"]
    return "".join(rng.choice(rng.choice(pools)) for _ in range(n))


def test_worst_case_is_never_below_the_real_cost():
    book = PriceBook()
    rng = random.Random(20261129)
    for _ in range(150):
        messages = [{"role": rng.choice(["system", "user", "assistant"]),
                     "content": _random_text(rng, rng.randint(0, 600))}
                    for _ in range(rng.randint(1, 4))]
        max_tokens = rng.randint(1, 4096)
        real_input = litellm().token_counter(model="gpt-4o-mini", messages=messages)
        real_output = rng.randint(0, max_tokens)
        assert worst_case_input_tokens(messages) >= real_input
        assert book.worst_case_usd("gpt-4o-mini", messages, max_tokens) >= \
            book.cost_usd("gpt-4o-mini", real_input, real_output)


def test_estimate_tokens_is_close_to_a_real_count():
    messages = [{"role": "user", "content": "The quick brown fox jumps over the lazy dog. " * 20}]
    estimate = estimate_tokens("openai/gpt-4o-mini", messages)
    assert 150 <= estimate <= 250
    assert PriceBook().estimate_tokens("openai/some-local-model", messages) > 0


ROOT = Path(__file__).resolve().parents[3]
SAMPLES = {
    "english": (ROOT / "README.md").read_text(encoding="utf-8"),
    "python": (ROOT / "core" / "llm" / "errors.py").read_text(encoding="utf-8"),
    "german": "Die Käsesorten der Schweiz sind berühmt für ihren würzigen Geschmack. " * 30,
    "chinese": "递归语言模型在长文档上回答问题，它把上下文放在一个沙箱里，然后编写代码去阅读它。" * 30,
    "russian": "Рекурсивная языковая модель отвечает на вопросы по длинным документам. " * 30,
    "digits": " ".join(str(n * 7919 % 1_000_003) for n in range(500)),
    "json": json.dumps({"values": list(range(300)), "name": "x"}),
}
# what estimate / real count may be, per sample: prose and code close, the rest a factor of 2.5
BOUNDS = {"english": (0.8, 1.3), "python": (0.8, 1.3)}


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4"])      # o200k and cl100k
def test_the_estimate_needs_no_tokenizer_and_is_near_a_real_count(name, model):
    text = SAMPLES[name]
    real = litellm().token_counter(model=model, text=text)
    estimate = estimate_text_tokens(model, text)
    low, high = BOUNDS.get(name, (0.4, 2.5))
    assert low <= estimate / real <= high, (estimate, real)
    messages = [{"role": "user", "content": text}]
    assert estimate_tokens(model, messages) <= worst_case_input_tokens(messages)   # never above


def test_the_estimate_is_cheap_enough_for_the_event_loop():
    text = SAMPLES["english"] * 100                      # about a million characters
    started = time.thread_time()          # this thread's CPU: the wall clock also counts other
    estimate_text_tokens("openai/m", text)  # processes' turns (0.2 s seen with the suite's groups at once)
    assert time.thread_time() - started < 0.05          # measured: about 5 ms
