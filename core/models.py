"""One description of a model on its endpoint, resolved once per run: the ModelSpec.

    spec = resolve_spec("lab/small-3b", endpoints=settings.endpoints, models=settings.models)
    # ModelSpec(name="lab/small-3b", routed="openai/small-3b", endpoint="lab",
    #           api_base="http://10.0.0.5:8000/v1", key_owner="lab", price=Price(0.5, 1.5),
    #           price_from="yours", ...)

A price belongs to the model as the user named it on its endpoint, never to the routed name
litellm is given: `lab/small-3b` and `here/small-3b` both call `openai/small-3b`, at two URLs,
and each has its own price. Where a spec's price comes from, in order:

  1. the user's price for that name (a --price flag, then Settings > Models: a price or Free);
  2. the endpoint the user picked runs on this computer (Free): $0;
  3. litellm's price map under the routed name (a provider's model, or a paid proxy's);
  4. unknown: never $0; a run with a dollar cap refuses to start on it.

The budget, the meter, the preview, the stored run config (RunConfig.specs and RunConfig.prices,
both keyed by the user's name), exports, scorecards and `models stats` read the spec; nothing
re-derives a price from a routed name. Free or paid follows the endpoint named in the model's
name, never an endpoint found by its URL (two endpoints may share one URL).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from core.endpoint_cost import endpoint_free
from core.routing import endpoint_named, route

@dataclass(frozen=True)
class Price:
    """USD per million tokens."""
    input_per_m: float
    output_per_m: float

    @property
    def free(self) -> bool:
        return self.input_per_m == 0 and self.output_per_m == 0


PRICE_SOURCES = ("yours", "free endpoint", "price map", "unknown")


@dataclass(frozen=True)
class ModelSpec:
    name: str                        # as the user picked it: "lab/small-3b"
    routed: str                      # what litellm is given: "openai/small-3b"
    endpoint: str = ""               # the configured endpoint, or the provider ("" for an ad-hoc URL)
    api_base: str | None = None      # None: the provider's own URL
    key_owner: str = ""              # whose key the call carries ("" when none is sent)
    context_window: int | None = None
    price: Price | None = None       # None: unknown
    price_from: str = "unknown"      # one of PRICE_SOURCES
    endpoint_free: bool | None = None   # the endpoint picked is Free (True) or Paid (False); None: no endpoint
    rules: Mapping[str, Any] = field(default_factory=dict, compare=False)   # max_tokens, temperature...

    @property
    def price_text(self) -> str:
        """What a model picker says of it: "free", "$1 in · $2 out per M" or "price unknown"."""
        if self.price is None:
            return "price unknown"
        if self.price.free:
            return "free"
        return f"${self.price.input_per_m:g} in · ${self.price.output_per_m:g} out per M"

    @property
    def cost(self) -> str:
        """"free", "priced" or "unknown": what the pickers and the meter say."""
        if self.price is None:
            return "unknown"
        return "free" if self.price.free else "priced"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "routed": self.routed, "endpoint": self.endpoint,
                "api_base": self.api_base, "key_owner": self.key_owner,
                "context_window": self.context_window,
                "price": None if self.price is None else [self.price.input_per_m, self.price.output_per_m],
                "price_from": self.price_from, "endpoint_free": self.endpoint_free,
                "rules": dict(self.rules)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ModelSpec":
        price = data.get("price")
        window = data.get("context_window")
        return cls(name=str(data.get("name") or data.get("routed") or ""),
                   routed=str(data.get("routed") or data.get("name") or ""),
                   endpoint=str(data.get("endpoint") or ""), api_base=data.get("api_base") or None,
                   key_owner=str(data.get("key_owner") or ""),
                   context_window=int(window) if isinstance(window, int) and window > 0 else None,
                   price=Price(float(price[0]), float(price[1])) if isinstance(price, (list, tuple))
                   and len(price) == 2 else None,
                   price_from=str(data.get("price_from") or ("unknown" if price is None else "yours")),
                   endpoint_free=data.get("endpoint_free"),
                   rules=dict(data.get("rules") or {}))


class SameModelTwoEndpoints(ValueError):
    """Two models of one run route to one name at two URLs: the run could not tell them apart."""


def resolve_spec(name: str, *, endpoints: Iterable[Any] = (), models: Mapping[str, Any] | None = None,
                 prices: Mapping[str, Price] | None = None, api_base: str | None = None,
                 price_map: Any) -> ModelSpec:
    """The spec of `name` as the user picked it. `models`: Settings.models (name -> an object
    with price, free, context_window, max_tokens, ...); `prices`: flag overrides by name;
    `api_base`: an ad-hoc URL (--api-base) that serves the model; `price_map`: litellm's map as
    core.llm.pricing.PriceBook() gives it (price(routed), context_window(routed)). A flag's
    price given under the routed name ("--price openai/small-3b=...") prices this run's model
    when no price is given under its own name."""
    endpoints = list(endpoints or ())
    name = name.strip()
    found = route(name, api_base=api_base, endpoints=endpoints)
    named = endpoint_named(name, endpoints) if not api_base else None
    endpoint = named[0] if named else None
    ms = (models or {}).get(name)
    price, source = _price(name, found.model, ms, prices or {}, endpoint, price_map)
    window = getattr(ms, "context_window", None) or price_map.context_window(found.model)
    rules = {key: getattr(ms, key) for key in ("max_tokens", "reasoning_effort", "one_block_per_turn",
                                               "temperature", "prompt_note")
             if ms is not None and getattr(ms, key, None) not in (None, "")}
    return ModelSpec(name=name, routed=found.model,
                     endpoint=endpoint.name if endpoint is not None else (found.url_owner or ""),
                     api_base=found.api_base, key_owner=found.key_owner if endpoint is None else
                     (endpoint.name if getattr(endpoint, "needs_key", False) else ""),
                     context_window=window, price=price, price_from=source,
                     endpoint_free=None if endpoint is None else endpoint_free(endpoint), rules=rules)


def _price(name: str, routed: str, ms: Any, prices: Mapping[str, Price], endpoint: Any,
           price_map: Any) -> tuple[Price | None, str]:
    for key in (name, routed):
        if key in prices:
            return prices[key], "yours"
    if ms is not None and getattr(ms, "free", False):
        return Price(0.0, 0.0), "yours"
    if ms is not None and getattr(ms, "price", None) is not None:
        return ms.price, "yours"
    if endpoint is not None and endpoint_free(endpoint):
        return Price(0.0, 0.0), "free endpoint"
    mapped = price_map.price(routed)
    if mapped is not None:
        return mapped, "price map"
    return None, "unknown"


class NoPriceMap:
    """A price map that knows nothing: a spec resolved from the settings alone (the pickers
    before litellm's map is read)."""

    def price(self, _model: str) -> None:
        return None

    def context_window(self, _model: str) -> None:
        return None


def check_distinct(specs: Iterable[ModelSpec]) -> None:
    """Raise SameModelTwoEndpoints when two specs share a routed name but not a URL."""
    seen: dict[str, ModelSpec] = {}
    for spec in specs:
        other = seen.setdefault(spec.routed, spec)
        if other.name != spec.name and other.api_base != spec.api_base:
            raise SameModelTwoEndpoints(
                f"{spec.name} has the same name as a model of this run, {other.name} "
                f"({spec.routed.partition('/')[2] or spec.routed}), served at another URL; one run cannot "
                "tell them apart. Pick both from one endpoint, or remove one from the sub-call models.")


def specs_by_routed(config: Any) -> dict[str, ModelSpec]:
    """The run's specs by the routed name its engine calls (one per routed name: check_distinct)."""
    return {spec.routed: spec for spec in getattr(config, "specs", ()) or ()}
