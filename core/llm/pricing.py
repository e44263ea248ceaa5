"""Prices, context windows and token estimates: what a call may cost.

Where a price comes from, in order:
  1. the user's override for that exact model name (RunConfig.prices, --price);
  2. litellm's price map (the copy bundled with the installed litellm release,
     read from its file without importing litellm: core/price_map.py),
     under the name as given, then without its "provider/" prefix.
A map entry whose prices are both zero (litellm lists many local models so) is
not trusted as "free": the user must mark such a model free with Price(0, 0).
Prices are USD per million tokens (core.config.Price). Nothing here imports
litellm: a run whose models all take the direct route never loads it.

The worst case of a call, reserved against the dollar cap before it is sent:

    worst_input_tokens = UTF-8 bytes of every message's text
                         + 16 per message + 16
    worst_case_usd     = worst_input_tokens * input price + max_tokens * output price

It is a true upper bound for byte-level BPE tokenizers (OpenAI's tiktoken,
Llama 3, Qwen, Mistral's tekken, and SentencePiece with byte fallback): every
token covers at least one byte of text, so a text of n bytes is at most n
tokens; the 16s cover the role and the chat template's special tokens around
each message and the reply's priming. Output can never exceed max_tokens
(thinking tokens included). Images and other non-text parts are not covered.
"""

from __future__ import annotations

import logging
import math
import string
from typing import Any, Mapping

from core.config import Price
from core.price_map import model_cost

log = logging.getLogger(__name__)

PER_MESSAGE_OVERHEAD = 16
PER_CALL_OVERHEAD = 16


class PriceBook:
    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self.overrides: dict[str, Price] = dict(overrides or {})

    @classmethod
    def for_config(cls, config: Any) -> "PriceBook":
        """The prices of one run, by the routed names its engine calls: each model's spec
        (RunConfig.specs) with the run's prices by the user's name over it. A config without
        specs (a stored run from before them, a test's) has its prices by routed name."""
        overrides: dict[str, Price] = dict(config.prices)
        for spec in getattr(config, "specs", ()) or ():
            price = config.prices.get(spec.name, spec.price)
            if price is None:
                overrides.pop(spec.routed, None)
            else:
                overrides[spec.routed] = price
        return cls(overrides)

    def price(self, model: str) -> Price | None:
        """USD per million tokens, or None when nobody knows."""
        if model in self.overrides:
            return self.overrides[model]
        entry = _entry(model)
        if entry is None:
            return None
        per_in, per_out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
        if not isinstance(per_in, (int, float)) or not isinstance(per_out, (int, float)):
            return None
        if per_in == 0 and per_out == 0:
            return None           # "free" in the map is a guess; the user has to say so
        return Price(round(per_in * 1e6, 9), round(per_out * 1e6, 9))

    def context_window(self, model: str) -> int | None:
        """Max input tokens from litellm's map, or None."""
        entry = _entry(model)
        value = entry.get("max_input_tokens") if entry else None
        return int(value) if isinstance(value, (int, float)) and value > 0 else None

    def cost_usd(self, model: str, input_tokens: int, output_tokens: int) -> float:
        """What a finished call cost; 0.0 for a model without a price (a run
        with a dollar cap never starts with such a model)."""
        price = self.price(model)
        if price is None:
            return 0.0
        return (input_tokens * price.input_per_m + output_tokens * price.output_per_m) / 1e6

    def worst_case_usd(self, model: str, messages: list[dict], max_tokens: int) -> float:
        """The most a call can cost (see the module docstring)."""
        return self.cost_usd(model, worst_case_input_tokens(messages), max_tokens)

    def estimate_tokens(self, model: str, messages: list[dict]) -> int:
        return estimate_tokens(model, messages)


def worst_case_input_tokens(messages: list[dict]) -> int:
    """An upper bound of the input tokens of `messages` for any byte-level tokenizer."""
    total = PER_CALL_OVERHEAD
    for message in messages:
        total += PER_MESSAGE_OVERHEAD
        for key, value in message.items():
            if key == "content":
                total += len(message_text(value).encode("utf-8"))
            elif key != "role" and isinstance(value, str):
                total += len(value.encode("utf-8"))
    return total


def message_text(content: Any) -> str:
    """The text of a message's content (a string or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def estimate_tokens(model: str, messages: list[dict]) -> int:
    """Input tokens of `messages`, estimated without a tokenizer (estimate_text_tokens), plus
    4 per message for its role and the chat template (litellm's counter adds 3 + 3).
    `model` is not used: the estimate is the same for every model."""
    return sum(estimate_text_tokens(model, message_text(m.get("content"))) for m in messages) \
        + ESTIMATE_PER_MESSAGE * len(messages)


def estimate_text_tokens(model: str, text: str) -> int:
    """Tokens of `text` for a byte-level BPE tokenizer (OpenAI's, Llama 3's, Qwen's...),
    estimated from its UTF-8 bytes by class, with no tokenizer and no litellm:

        ASCII letters / 4 + digits / 2 + ASCII punctuation / 1 + other bytes / 3.5
        (spaces and control bytes: free, they merge with the next word)

    A few C passes over the bytes (about 5 ms per million characters; litellm's counter
    took 107 ms). Against cl100k and o200k (tests/unit/llm/test_pricing.py): English prose
    and code 1.1-1.2x, German 0.8-1.0x, Chinese 0.75-1.2x, Russian 1.2-2.0x, digit runs
    about 1x, dense JSON arrays of numbers about 0.5x. Never above the byte bound
    (worst_case_input_tokens), which stays what the budget reserves."""
    if not text:
        return 0
    data = text.encode("utf-8", "replace")
    n = len(data)
    letters = n - len(data.translate(None, _LETTERS))
    digits = n - len(data.translate(None, _DIGITS))
    punct = n - len(data.translate(None, _PUNCT))
    other = n - len(data.translate(None, _NON_ASCII))
    return max(1, math.ceil(letters / 4 + digits / 2 + punct + other / 3.5))


ESTIMATE_PER_MESSAGE = 4
_LETTERS = bytes(string.ascii_letters, "ascii")
_DIGITS = bytes(string.digits, "ascii")
_PUNCT = bytes(string.punctuation, "ascii")
_NON_ASCII = bytes(range(128, 256))


def _entry(model: str) -> dict | None:
    cost_map = model_cost()
    for name in _candidates(model):
        entry = cost_map.get(name)
        if isinstance(entry, dict):
            return entry
    return None


def _candidates(model: str) -> list[str]:
    names = [model]
    prefix, sep, rest = model.partition("/")
    if sep and rest:
        names.append(rest)
    if model.lower() != model:
        names += [n.lower() for n in names]
    return names
