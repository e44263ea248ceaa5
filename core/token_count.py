"""How many tokens documents are, estimated one way everywhere, and how it is said.

    n = documents_tokens(documents)      # estimate() over each text
    prompt_tokens(messages)              # a chat prompt: its texts + 4 per message
    about_tokens(n)                      # 'about 43k tokens'   (an estimate: "about")
    counted_tokens(42960)                # '42,960 tokens (counted by the provider)'

The Sources totals, the note of "RLM beside a plain call", the direct call's fit message
and the run mode's choice (core/engine/mode.py) all estimate with these, so one question's
documents have one size; a count a provider reported (a reply's usage) is shown as that
provider's count, never mixed with the estimate.

The estimate errs high on numbers: letters / 4, a digit a token, a punctuation mark or line
break a token, spaces free. Qwen's and Llama's tokenizers give digits a token each; on the
sample CSV characters / 4 said 3.9k tokens where llama.cpp (Qwen2.5's tokenizer) read 9,356,
and this says 9.6k; the eight sample reports 2.6k where it read 2,223. OpenAI's tokenizers
group up to three digits, so for them a digit-heavy text is over-counted: the plain call
(Auto, core/engine/mode.py) then errs toward the RLM, never toward a prompt too large. The
budget does not use it (it reserves the byte bound, core/llm/pricing.py).

The cost is bounded, as Sources estimates every document on the window's thread: a text
over SAMPLE_CHARS is estimated from SAMPLE_PIECES evenly spaced pieces of it, scaled to its
length (the estimate is a sum over character classes, so a spread sample estimates it
closely). Measured here, at load 8 on 2 vCPUs, against the whole text: a 41 MB log 0.2 ms
(whole: 473-537 ms), 0.03% off; a 28 MB random mix of prose, digits, JSON and umlauts
0.5 ms, 0.9-2.1% off; the samples (171k characters) 0.2% off; 1,000 documents of 115k
characters 460 ms together.
"""

from __future__ import annotations

from typing import Any, Iterable

import math

_PUNCT = str.maketrans("", "", "".join(chr(c) for c in range(33, 127) if not chr(c).isalnum()) + "\n\t")


def estimate(text: str) -> int:
    """Tokens of `text`, erring high on numbers (see the module docstring)."""
    digits = sum(text.count(d) for d in "0123456789")
    spaces = text.count(" ")
    marks = len(text) - len(text.translate(_PUNCT))
    letters = max(len(text) - digits - spaces - marks, 0)
    return math.ceil(letters / 4) + digits + marks


SAMPLE_CHARS = 32_768
SAMPLE_PIECES = 64


def text_tokens(text: str | None) -> int:
    """Tokens of one text, estimated without a tokenizer (0 for an empty text)."""
    if not text:
        return 0
    n = len(text)
    if n <= SAMPLE_CHARS:
        return estimate(text)
    piece = SAMPLE_CHARS // SAMPLE_PIECES
    step = (n - piece) / (SAMPLE_PIECES - 1)
    sample = "".join(text[int(i * step):int(i * step) + piece] for i in range(SAMPLE_PIECES))
    return round(estimate(sample) * n / len(sample))


def prompt_tokens(messages: Iterable[dict]) -> int:
    """A chat prompt's input tokens: its texts' estimate plus 4 per message (role and template)."""
    from core.llm.pricing import ESTIMATE_PER_MESSAGE, message_text
    messages = list(messages)
    return sum(text_tokens(message_text(m.get("content"))) for m in messages) + ESTIMATE_PER_MESSAGE * len(messages)


def documents_tokens(documents: Iterable[Any]) -> int:
    """Estimated tokens of the documents' texts together (objects with `.text`, or dicts)."""
    total = 0
    for doc in documents:
        kept = None if isinstance(doc, dict) else getattr(doc, "tokens", None)
        if kept is not None:              # kept by ingestion: a read-back Document is not read
            total += int(kept)
            continue
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
