from core.engine import prompts


def test_system_prompt_depends_on_depth():
    none = prompts.system_prompt(can_llm=False, can_rlm=False, model="openai/gpt-4o")
    one = prompts.system_prompt(can_llm=True, can_rlm=False, model="openai/gpt-4o")
    two = prompts.system_prompt(can_llm=True, can_rlm=True, model="openai/gpt-4o")
    assert "switched off" in none and "llm_query_batched(prompts)" not in none
    assert "llm_query_batched(prompts)" in one and "nested RLM" not in one
    assert "nested RLM" in two
    for text in (none, one, two):
        assert "$" + "subcalls" not in text and "FINAL_VAR" in text and "```repl" in text


def test_model_notes_match_by_pattern_with_and_without_provider():
    assert any("batch" in n for n in prompts.model_notes("openai/qwen2.5-coder-1.5b"))
    assert prompts.model_notes("openai/gpt-4o") == []
    notes = prompts.model_notes("anthropic/claude-x", {"claude-*": "Be terse.", "gpt-*": "no"})
    assert notes == ["Be terse."]


def test_first_turn_shows_metadata_not_the_documents():
    docs = [(f"doc{i}.txt", 1000 + i) for i in range(25)]
    text = prompts.first_turn("What is the total?", docs, prefix="=== doc0.txt ===\n" + "x" * 5000)
    assert "25 documents" in text and "What is the total?" in text
    assert "doc9.txt" in text and "doc10.txt" not in text and "15 more" in text
    assert "x" * 600 not in text
