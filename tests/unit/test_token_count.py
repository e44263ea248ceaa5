"""core/token_count.py: one estimate of the documents' tokens, the same in every place that
shows it (Sources, the plain-call note and fit message, the run mode's sentence), and a
bounded cost for large texts."""

from __future__ import annotations

import random
from dataclasses import dataclass

from core.engine.mode import plain_call_tokens
from core.engine.direct import direct_fit
from core.llm.pricing import PriceBook
from core.token_count import SAMPLE_CHARS, estimate, about_tokens, counted_tokens, documents_tokens, text_tokens


@dataclass
class Doc:
    path: str
    text: str


LOG = "2024-08-14 09:42:01 ERROR payments failed: certificate has expired id=12345\n"


def test_the_fit_message_and_the_mode_count_the_same_prompt():
    docs = [Doc("webshop.log", LOG * 200), Doc("notes.md", "# Q3\nRevenue grew 12% to 4.2 million.\n" * 50)]
    fit = direct_fit("openai/x", "How many ERROR lines?", docs, PriceBook({}), 512)
    assert fit.prompt_tokens == plain_call_tokens("How many ERROR lines?", docs)
    assert about_tokens(fit.prompt_tokens) in fit.message
    # the prompt is the documents plus the instructions and the question: a little more
    assert 0 < fit.prompt_tokens - documents_tokens(docs) < 400


def test_small_texts_are_estimated_whole_and_large_ones_from_a_sample():
    assert text_tokens("") == 0 and text_tokens(None) == 0
    small = LOG * 100
    assert text_tokens(small) == estimate(small)
    big = LOG * (3 * SAMPLE_CHARS // len(LOG))
    assert abs(text_tokens(big) - estimate(big)) / estimate(big) < 0.002
    rng = random.Random(7)
    mixed = "".join(rng.choice(["hello world ", "12345 ", "Grüße ", '{"a": [1,2]} ', "\n"])
                    for _ in range(400_000))
    assert len(mixed) > SAMPLE_CHARS
    whole = estimate(mixed)
    assert abs(text_tokens(mixed) - whole) / whole < 0.05             # an estimate of an estimate


def test_how_counts_are_said():
    assert about_tokens(43_120) == "about 43k tokens" and about_tokens(1234) == "about 1.2k tokens"
    assert about_tokens(512) == "about 512 tokens"
    assert counted_tokens(42_960) == "42,960 tokens (counted by the provider)"
    assert documents_tokens([{"text": "abcd efgh"}, Doc("x", "")]) == text_tokens("abcd efgh")
