"""LLMError, provider names and key hints (classification itself is exercised
over real HTTP in test_client.py)."""

import pytest

from core.llm.errors import LLMError, _parse_retry_after, key_hint, provider_of


@pytest.mark.parametrize("model, provider", [
    ("openai/gpt-4o", "openai"), ("gpt-4o-mini", "openai"), ("anthropic/claude-haiku-4-5", "anthropic"),
    ("claude-3-5-haiku-latest", "anthropic"), ("ollama/llama3", "ollama"),
    ("gemini/gemini-2.5-flash", "gemini"), ("totally-unknown-model", "openai"),
])
def test_provider_of(model, provider):
    assert provider_of(model) == provider


def test_key_hints_name_the_command_and_the_variable():
    assert key_hint("openai") == ("Set its key with `rlm-studio keys set openai` or the "
                                  "OPENAI_API_KEY environment variable.")
    assert "RLMSTUDIO_DESKTOP_LAB_API_KEY" in key_hint("lab")


def test_llmerror_fields_and_kinds():
    err = LLMError("rate_limit", "slow down", provider="openai", model="openai/m", status=429,
                   retry_after=2.0)
    assert str(err) == "slow down" and err.retryable and err.status == 429
    assert not LLMError("auth", "no").retryable and not LLMError("context_window", "big").retryable
    with pytest.raises(ValueError):
        LLMError("exploded", "?")


def test_retry_after_forms():
    assert _parse_retry_after({"retry-after": "3"}) == 3.0
    assert _parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert _parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert _parse_retry_after({"retry-after": "soon"}) is None
    assert _parse_retry_after({}) is None and _parse_retry_after(None) is None
