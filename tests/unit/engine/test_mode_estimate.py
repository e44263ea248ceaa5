"""Auto's token estimate errs high on numbers (core/engine/mode.py: estimate_tokens)."""

from core.engine.mode import estimate_tokens
from core.samples import samples_dir


def test_digits_count_a_token_each_and_prose_about_a_quarter():
    assert estimate_tokens("1234567890") == 10
    assert estimate_tokens("the quick brown fox jumps") == 6          # 21 letters / 4, spaces free
    assert estimate_tokens("a,b;c.\n") == 1 + 4                      # 3 letters / 4, four marks


def test_the_sample_csv_is_estimated_near_what_llama_cpp_read():
    # llama.cpp (Qwen2.5's tokenizer) read 9,356 prompt tokens for the plain call over sales.csv;
    # characters / 4 said 3,836.
    text = (samples_dir() / "documents" / "sales.csv").read_text(encoding="utf-8")
    assert len(text) / 4 < 4_000 and 9_000 < estimate_tokens(text) < 10_500
