"""Caps proposed for a local model, from its size and window (issue 25, item 5).

    proposal = propose("qwen2.5-coder:1.5b", window=16_384)
    proposal.caps          # {"max_depth": 1, "max_iterations": 6, "root_max_tokens": 1024}
    proposal.sentence()    # "Proposed for a local 1.5B model: depth 1, at most 6 turns, ..."

A small model on a laptop writes about 5 tokens a second (the 1.5B model on 2 cores):
8,192 output tokens is half an hour of one reply, depth 2 doubles the failure surface
(the seeds: depth hurts weak models), and 20 turns of that is an afternoon. So:

| parameters | depth | turns | root max tokens |
|---|---|---|---|
| up to 4B | 1 | 6 | 1,024 |
| up to 16B | 1 | 10 | 2,048 |
| larger | 1 | 15 | 4,096 |

and never more than a quarter of the window for the reply. The size comes from the
name (`:1.5b`, `-7B-`, `8x7b` counts as 56); a name without one gets no proposal. These
are starting points, not measurements: the user changes them, and the real-model
measurement of issue 25 is the thing that should move them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SIZE = re.compile(r"(?<![\w.])(?:(\d+)x)?(\d+(?:\.\d+)?)\s*b(?![a-z0-9])", re.IGNORECASE)
TIERS = ((4.0, 1, 6, 1024), (16.0, 1, 10, 2048), (float("inf"), 1, 15, 4096))


def size_billions(model: str) -> float | None:
    """Parameters in billions, read from the model's name; None when the name has none."""
    name = model.rsplit("/", 1)[-1].replace("_", "-").replace(":", "-")
    found = None
    for match in _SIZE.finditer(name):
        experts, size = match.group(1), float(match.group(2))
        found = size * int(experts) if experts else size
    return found


@dataclass(frozen=True)
class Proposal:
    size_b: float
    caps: dict[str, int]         # max_depth, max_iterations, root_max_tokens
    temperature: float | None = None   # root_temperature's default for the model (None: the provider's)

    def sentence(self) -> str:
        size = f"{self.size_b:g}B"
        c = self.caps
        text = (f"Proposed for a local {size} model: depth {c['max_depth']}, at most {c['max_iterations']} "
                f"turns, {c['root_max_tokens']:,} output tokens per root reply")
        if self.temperature is not None:
            text += f", sampled at temperature {self.temperature:g}"
        return text + ". Change them if you like."


def propose(model: str, window: int | None = None) -> Proposal | None:
    size = size_billions(model)
    if size is None:
        return None
    for limit, depth, turns, tokens in TIERS:
        if size <= limit:
            break
    if window:
        tokens = max(256, min(tokens, window // 4))
    return Proposal(size, {"max_depth": depth, "max_iterations": turns, "root_max_tokens": tokens},
                    root_temperature(model))


SMALL_PROMPT_UP_TO_B = 4.0    # models of at most this size get resources/prompts/system_small.md


def small_prompt(model: str) -> bool:
    """Whether `model` gets the short system prompt (one worked example of slicing `context`,
    one block per reply) instead of the full one: a model whose name says at most 4B. The
    full prompt is 6,000 characters of method a 1.5B model reads at 50-80 tokens/s and then
    half-follows (issue 25); a name without a size gets the full prompt."""
    size = size_billions(model)
    return size is not None and size <= SMALL_PROMPT_UP_TO_B


def one_block_default(model: str) -> bool:
    """Whether `model`'s root replies are read only to their first closed code block when its
    settings do not say (core/engine/reply_reader.py): yes for the models that get the short
    prompt. Measured on the real 1.5B model (docs/fitness.md): its second and later blocks
    were output it made up (```repl\n2610\n```) or a FINAL of a value no cell had printed."""
    return small_prompt(model)


def answer_needs_output(model: str) -> bool:
    """Whether a final answer written as text before any code has run is sent back once
    (core/engine/rlm.py): yes for the models that get the short prompt. Measured on the real
    1.5B model: its first replies `FINAL("2023-Q4")` and `Final 2` were guesses."""
    return small_prompt(model)


SMALL_OUTPUT_CHARS = 4_000   # cell output shown to a small root per block


def output_chars(model: str, configured: int) -> int:
    """Characters of a cell's output the root is shown: at most 4,000 for the models that get
    the short prompt. The real 1.5B model printed a whole 149,422-character log; 20,000 shown
    characters are about 5,000 of its 16,384-token window per turn, three turns fill it, and
    it reads them at 50-80 tokens/s."""
    return min(configured, SMALL_OUTPUT_CHARS) if small_prompt(model) else configured


def is_local(model: str, api_base: str | None) -> bool:
    """A model served on this computer or the local network: an Ollama name, or a URL whose
    host is loopback or a private address."""
    if model.startswith(("ollama/", "ollama_chat/", "lm_studio/", "llamafile/")):
        return True
    if not api_base:
        return False
    from core.endpoint_cost import by_address
    return by_address(api_base if "//" in api_base else "http://" + api_base)


SMALL_ROOT_TEMPERATURE = 0.2   # a small root's sampling temperature when its settings do not say
REPEAT_TEMPERATURE = 0.8       # the one call after a reply that repeated the last one


def root_temperature(model: str, configured: dict[str, float] | None = None) -> float | None:
    """The temperature a root reply of `model` is sampled at: the model's own setting
    (RunConfig.root_temperature), else 0.2 for the models that get the short prompt, else
    None (the provider's default). llama-cpp-python samples at 0.8 by default; at 0.8 the
    real 1.5B model's runs of one question set ranged from 0 to 3 right of 6 with nearly the
    same engine (docs/fitness.md): its code was a draw. Lower, its loops are longer, which
    the engine answers by telling it and sampling the next reply hotter (repeat_temperature)."""
    own = (configured or {}).get(model)
    if own is not None:
        return float(own)
    return SMALL_ROOT_TEMPERATURE if small_prompt(model) else None


def repeat_temperature(base: float | None) -> float | None:
    """The temperature of the one root call after a reply that repeated the last one: at least
    0.8, so a loop the low temperature keeps is sampled away once. None stays None (a model at
    its provider's default is not changed)."""
    return None if base is None else max(base, REPEAT_TEMPERATURE)
