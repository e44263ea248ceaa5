"""Caps proposed for local models from the size in their names (core/local_defaults.py)."""

from core.local_defaults import is_local, propose, size_billions


def test_sizes_read_from_names():
    assert size_billions("ollama/qwen2.5-coder:1.5b") == 1.5
    assert size_billions("openai/Qwen2.5-Coder-1.5B-Instruct-q4_k_m") == 1.5
    assert size_billions("local/llama3.1:8b") == 8
    assert size_billions("mixtral-8x7b-instruct") == 56
    assert size_billions("openai/gpt-4o-mini") is None and size_billions("qwen2.5-coder") is None


def test_proposals_by_size_and_window():
    tiny = propose("ollama/qwen2.5-coder:1.5b")
    assert tiny.caps == {"max_depth": 1, "max_iterations": 6, "root_max_tokens": 1024}
    assert tiny.sentence() == ("Proposed for a local 1.5B model: depth 1, at most 6 turns, 1,024 output tokens "
                               "per root reply, sampled at temperature 0.2. Change them if you like.")
    assert propose("llama3.1:8b").temperature is None          # a larger model: the provider's default
    assert propose("llama3.1:8b").caps["max_iterations"] == 10
    assert propose("qwen2.5:72b").caps["root_max_tokens"] == 4096
    assert propose("qwen2.5-coder:1.5b", window=2048).caps["root_max_tokens"] == 512   # a quarter
    assert propose("gpt-4o") is None


def test_what_counts_as_local():
    assert is_local("openai/qwen", "http://127.0.0.1:8088/v1") and is_local("ollama/llama3", None)
    assert is_local("openai/qwen", "http://192.168.1.20:11434/v1") and is_local("openai/x", "http://localhost:1234")
    assert not is_local("openai/gpt-4o", None) and not is_local("openai/qwen", "https://api.together.xyz/v1")


def test_short_prompt_and_one_block_per_turn_go_with_size():
    from core.local_defaults import one_block_default, small_prompt
    assert small_prompt("openai/qwen2.5-coder-1.5b") and small_prompt("ollama/llama3.2:3b")
    assert not small_prompt("openai/qwen2.5-coder-7b") and not small_prompt("openai/gpt-4o-mini")
    assert one_block_default("ollama/qwen2.5-coder:1.5b") and not one_block_default("mixtral-8x7b")
