"""Set-up and errors an analyst reads: "Use this" picks a strong root and a small
sub; a stopped local server is named as that server, never as OpenAI."""

from __future__ import annotations

from core.discovery import model_size_b, root_and_sub
from core.llm.errors import classify


def test_model_size_from_the_name():
    assert model_size_b("qwen2.5-coder:7b") == 7.0 and model_size_b("llama3.2:3b") == 3.0
    assert model_size_b("qwen2.5-coder:1.5b-instruct") == 1.5 and model_size_b("gpt-4o-mini") is None


def test_use_this_pairs_a_strong_root_with_a_small_sub():
    models = ["llama3.2:3b", "qwen2.5-coder:7b", "qwen2.5:14b"]
    assert root_and_sub(models, "llama3.2:3b") == ("qwen2.5:14b", "llama3.2:3b")
    assert root_and_sub(models, "qwen2.5-coder:7b") == ("qwen2.5-coder:7b", "llama3.2:3b")
    assert root_and_sub(["llama3.2:3b"], "llama3.2:3b") == ("llama3.2:3b", "llama3.2:3b")
    assert root_and_sub(["coder", "sub"], "coder") == ("coder", "coder")


def test_a_refused_connection_to_a_local_server_names_the_server():
    try:
        raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 11434)")
    except ConnectionRefusedError as exc:
        error = classify(exc, "openai/qwen2.5-coder:7b", "http://127.0.0.1:11434/v1")
    assert error.kind == "unreachable" and error.model == "openai/qwen2.5-coder:7b"
    assert "the server at 127.0.0.1:11434" in error.message and "qwen2.5-coder:7b" in error.message
    assert "OpenAI" not in error.message and "openai/" not in error.message
    cloud = classify(ConnectionRefusedError(111, "refused"), "openai/gpt-4o-mini")
    assert "OpenAI" in cloud.message
