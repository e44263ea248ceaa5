"""Live sub-calls for an edited fork turn (core.trust.fork's `live_sub_call`).

When the user edits the code of the turn a fork starts from, that code may ask
the sub model things the record never saw. Those prompts go live, held to the
fork's dollar cap exactly like the engine's own sub-calls. Used by the run
service for the CLI and the window alike.
"""

from __future__ import annotations

from typing import Any, Callable


class LiveSubCaller:
    """For an edited turn's new prompts: plain calls to the fork's sub model, held to the
    fork's dollar cap exactly like the engine's sub-calls (worst case reserved first, a call
    that does not fit refused). What they spend is taken off the cap of the run that follows."""

    def __init__(self, config: Any, key_for: Callable[[str], str | None]) -> None:
        from core.engine.budget import Budget
        from core.llm.client import ModelClient
        from core.llm.pricing import PriceBook
        self.config = config
        self.prices = PriceBook(config.prices)
        self.budget = Budget(max_cost_usd=config.max_cost_usd, max_sub_calls=config.max_sub_calls)
        self.client = ModelClient(key_for=key_for, api_base_for=config.api_base_for,
                                  max_retries=config.max_retries, timeout_s=config.request_timeout_s)

    async def __call__(self, prompt: str, model: str | None) -> dict:
        from core.engine.budget import BudgetExceeded
        from core.llm.errors import LLMError
        from core.routing import ModelNotAllowed, sub_call_model
        try:
            model = sub_call_model(model, self.config)     # the fork's allow-list, as in a run
        except ModelNotAllowed as exc:
            return {"error": {"type": "ModelNotAllowed", "message": str(exc)}}
        messages = [{"role": "user", "content": prompt}]
        if self.budget.max_cost_usd is not None and self.prices.price(model) is None:
            return {"error": {"type": "BudgetExceeded",
                              "message": f"no price is known for {model} and a dollar cap is set"}}
        from core.engine.costs import CallMeter
        try:
            self.budget.count_sub_call()
        except BudgetExceeded as exc:
            return {"error": {"type": "BudgetExceeded", "message": str(exc)}}
        meter = CallMeter(self, model, messages, self.config.sub_max_tokens)   # reserves per attempt
        try:
            reply = await self.client.complete(model, messages, max_tokens=self.config.sub_max_tokens,
                                               meter=meter)
        except BudgetExceeded as exc:
            return {"error": {"type": "BudgetExceeded", "message": str(exc)}}
        except LLMError as exc:
            return {"error": {"type": "SubCallError", "message": str(exc)}}
        return {"ok": reply.text}

    def remaining_config(self, config: Any) -> Any:
        """`config` with its caps reduced by what these calls used."""
        if self.budget.sub_calls == 0:
            return config
        changes: dict[str, Any] = {}
        if config.max_cost_usd is not None:
            changes["max_cost_usd"] = max(config.max_cost_usd - self.budget.spent_usd, 0.0)
        if config.max_sub_calls is not None:
            changes["max_sub_calls"] = max(config.max_sub_calls - self.budget.sub_calls, 0)
        return config.replace(**changes)
