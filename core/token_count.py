"""How many tokens documents are, estimated one way everywhere, and how it is said.

    n = documents_tokens(documents)      # core.llm.pricing.estimate_text_tokens over each text
    about_tokens(n)                      # 'about 43k tokens'   (an estimate: "about")
    counted_tokens(42960)                # '42,960 tokens (counted by the provider)'

The Sources totals, the note of "RLM beside a plain call" and the direct call's fit
message all estimate with this one function, so one question's documents have one
size; a count a provider reported (a reply's usage) is shown as that provider's count,
never mixed with the estimate.
"""

from __future__ import annotations

from typing import Any, Iterable

from core.llm.pricing import estimate_text_tokens


def text_tokens(text: str | None) -> int:
    """Tokens of one text, estimated without a tokenizer (0 for an empty text)."""
    return estimate_text_tokens("", text) if text else 0


def documents_tokens(documents: Iterable[Any]) -> int:
    """Estimated tokens of the documents' texts together (objects with `.text`, or dicts)."""
    total = 0
    for doc in documents:
        text = doc.get("text") if isinstance(doc, dict) else getattr(doc, "text", "")
        total += text_tokens(text)
    return total


def round_count(n: int) -> str:
    """43k, 1.2k, 3.4M, 512: the form a table or a note shows an estimate in."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def about_tokens(n: int) -> str:
    return f"about {round_count(n)} tokens"


def counted_tokens(n: int, who: str = "the provider") -> str:
    return f"{n:,} tokens (counted by {who})"
