"""RunConfig: every knob of a run in one frozen dataclass.

A nested RLM gets `dataclasses.replace(config, ...)`, never a second copy of
thirty parameters. Keys are never part of the config: they are looked up at
call time (see core/llm) so a config can be stored and exported as it is.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from core.models import ModelSpec, Price   # noqa: F401  (Price: imported from here by many)


MODES = ("auto", "rlm", "direct")


@dataclass(frozen=True)
class RunConfig:
    root_model: str
    sub_model: str
    api_base: str | None = None          # for both models unless sub_api_base is set
    sub_api_base: str | None = None
    # auto: one plain call when the question and documents fit well inside the root's window,
    # the RLM otherwise (core/engine/mode.py); rlm / direct: always that.
    mode: str = "auto"
    max_depth: int = 1                   # 0 REPL only, 1 llm_query, >=2 nested rlm_query
    max_iterations: int = 20             # root turns per RLM
    max_cost_usd: float | None = None    # hard cap for the whole tree
    max_sub_calls: int | None = 1000     # for the whole tree
    max_wall_seconds: float | None = None
    cell_timeout_s: float = 120.0
    concurrency: int = 32
    nested_concurrency: int | None = None  # nested RLMs running at once (None: os.cpu_count())
    max_output_chars: int = 20_000       # per cell, what the root is shown
    root_max_tokens: int = 8192
    sub_max_tokens: int = 4096
    memory_limit_mb: int | None = 4096   # RLIMIT_AS of the REPL worker (None: no limit)
    require_full_sandbox: bool = False   # refuse to run model code unless every sandbox layer holds
    # Prices by the model as the user named it on its endpoint ("lab/small-3b"), as its spec
    # resolved them (core/models.py); a stored run from before specs has them by routed name.
    prices: dict[str, Price] = field(default_factory=dict)
    # One ModelSpec per model the run may call (root, sub, sub-call models), resolved once
    # from the user's choice: what the budget, the meter, the preview and the record read.
    specs: tuple[ModelSpec, ...] = ()
    reasoning_effort: dict[str, str] = field(default_factory=dict)
    prompt_notes: dict[str, str] = field(default_factory=dict)  # model pattern -> extra text
    # Extra models `llm_query(..., model=...)` may name besides root and sub (the user enables
    # them in Settings): name as the root writes it -> (litellm model, base URL or None for the
    # provider's own). See core/routing.py.
    sub_call_models: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    context_windows: dict[str, int] = field(default_factory=dict)   # per-model input-token overrides
    api_key_from: str | None = None      # whose key goes to an ad-hoc api_base nobody owns (--api-key-from)
    # Root replies are read only as far as they are useful (core/engine/reply_reader.py):
    # after a closed block and no more code, a final answer, or repetition the stream is closed.
    cut_replies: bool = True
    # Per model (routed name): stop reading at the first closing fence (True) or not (False).
    # A model not named gets the default for its size: on for models of at most 4B, measured
    # on the real 1.5B model (core/local_defaults.py, docs/fitness.md).
    one_block_per_turn: dict[str, bool] = field(default_factory=dict)
    # Per model (routed name): the root's sampling temperature. A model not named gets the
    # default for its size: 0.2 for models of at most 4B, else the provider's own
    # (core/local_defaults.py: root_temperature).
    root_temperature: dict[str, float] = field(default_factory=dict)
    request_timeout_s: float = 600.0
    max_retries: int = 4
    # The names the user chose, by the routed name litellm is given: a model of the
    # user's own server "ollama/qwen2.5-coder:7b" is called as "openai/qwen2.5-coder:7b"
    # at that server's URL. Shown and stored beside the routed name, which stays a detail.
    model_labels: dict[str, str] = field(default_factory=dict)
    # Approval gate: a sub-call batch with more prompts than approve_batch_calls, or whose worst
    # case costs more than approve_batch_usd, waits for `approver(info) -> Awaitable[bool]`
    # (info: core.engine.subcalls.approval_info). Denied, or no approver: every slot is refused.
    approve_batch_calls: int | None = None
    approve_batch_usd: float | None = None
    approver: Callable[[dict[str, Any]], Awaitable[bool]] | None = field(default=None, compare=False,
                                                                         repr=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if not 0 <= self.max_depth <= 3:
            raise ValueError(f"max_depth must be 0..3, got {self.max_depth}")
        if self.max_iterations < 1:
            raise ValueError("max_iterations must be at least 1")
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.nested_concurrency is not None and self.nested_concurrency < 1:
            raise ValueError("nested_concurrency must be at least 1")
        if self.max_cost_usd is not None and self.max_cost_usd < 0:
            raise ValueError("max_cost_usd must not be negative")

    def nested_limit(self) -> int:
        import os
        return max(1, self.nested_concurrency or os.cpu_count() or 1)

    def replace(self, **changes: Any) -> "RunConfig":
        return dataclasses.replace(self, **changes)

    def public_dict(self) -> dict[str, Any]:
        """JSON-safe; what is stored with a run and shown in exports."""
        data = dataclasses.asdict(dataclasses.replace(self, approver=None))
        data.pop("approver")            # a callback of this process, never stored
        data["prices"] = {m: [p.input_per_m, p.output_per_m] for m, p in self.prices.items()}
        data["specs"] = [spec.to_dict() for spec in self.specs]
        return data

    @classmethod
    def from_public_dict(cls, data: dict[str, Any]) -> "RunConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in names}
        kwargs["prices"] = {m: Price(*p) for m, p in (data.get("prices") or {}).items()}
        kwargs["specs"] = tuple(ModelSpec.from_dict(s) for s in (data.get("specs") or ())
                                if isinstance(s, dict))
        kwargs["sub_call_models"] = {name: (str(pair[0]), pair[1])
                                     for name, pair in (data.get("sub_call_models") or {}).items()}
        return cls(**kwargs)

    def spec(self, model: str) -> ModelSpec | None:
        """The spec of a model of this run, by its routed name or the user's name."""
        for spec in self.specs:
            if model in (spec.routed, spec.name):
                return spec
        return None

    def label(self, model: str) -> str:
        """The name the user chose for a routed model (the model itself if none)."""
        return self.model_labels.get(model, model)

    def api_base_for(self, model: str) -> str | None:
        """The URL a call to `model` goes to: the run's api_base serves only its root and sub
        models; an extra sub-call model goes to its own URL (None: its provider's own)."""
        if model == self.sub_model and self.sub_api_base:
            return self.sub_api_base
        if model in (self.root_model, self.sub_model):
            return self.api_base
        for routed, base in self.sub_call_models.values():
            if routed == model:
                return base
        return None
