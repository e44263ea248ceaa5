"""One ModelSpec per model on its endpoint (core/models.py): where its price comes from,
Free/Paid and the key from the endpoint the name picks (never another at the same URL),
settings keyed by a routed name read as their endpoint's, and a fork's config re-priced now.
Real settings objects, the real file-backed keyring."""

from __future__ import annotations

import pytest

from app.settings import (Endpoint, ModelSettings, Settings, build_run_config, priced_now,
                          settings_from_dict)
from core.config import Price
from core.routing import RunRoutes

URL = "http://127.0.0.1:8080/v1"


def two_endpoints() -> Settings:
    return Settings(endpoints=[Endpoint("here", URL, ["m"]),                       # Free (loopback)
                               Endpoint("lab", URL, ["m"], needs_key=True, runs_here=False)],
                    models={"lab/m": ModelSettings(price=Price(1.0, 2.0))})


def test_each_endpoint_resolves_its_own_price_free_and_key(store):
    store.set("lab", "lab-key-0000000001")
    s = two_endpoints()
    paid, free = build_run_config(s, root="lab/m"), build_run_config(s, root="here/m")
    assert (paid.spec("lab/m").price, paid.spec("lab/m").price_from) == (Price(1.0, 2.0), "yours")
    assert (free.spec("here/m").price, free.spec("here/m").price_from) == (Price(0.0, 0.0), "free endpoint")
    assert paid.spec("openai/m").endpoint_free is False and free.spec("openai/m").endpoint_free is True
    # the key follows the endpoint picked, though "here" comes first at that URL
    assert RunRoutes(paid, s.endpoints, store).route("openai/m").key == "lab-key-0000000001"
    assert RunRoutes(free, s.endpoints, store).route("openai/m").key is None
    # a record naming lab's model at another URL never gets lab's key there
    moved = paid.replace(api_base="http://203.0.113.9/v1")
    assert RunRoutes(moved, s.endpoints, store).route("openai/m").key is None
    s.models.pop("lab/m")
    assert build_run_config(s, root="lab/m").spec("lab/m").cost == "unknown"   # never $0


def test_one_run_cannot_use_one_name_on_two_endpoints():
    s = two_endpoints()
    s.endpoints[1].base_url = "http://127.0.0.1:9090/v1"
    with pytest.raises(ValueError, match="here/m has the same name as a model of this run, lab/m"):
        build_run_config(s, root="lab/m", sub="here/m")


def test_settings_keyed_by_a_routed_name_move_to_the_one_endpoint_that_serves_it():
    data = {"endpoints": [{"name": "lab", "base_url": URL, "models": ["m", "n"]},
                          {"name": "here", "base_url": "http://127.0.0.1:1/v1", "models": ["n"]}],
            "models": {"openai/m": {"price": [1, 2]}, "openai/n": {"price": [3, 4]},
                       "openai/gpt-4o": {"price": [5, 6]}}}
    s = settings_from_dict(data)
    assert s.models["lab/m"].price == Price(1, 2) and "openai/m" not in s.models
    assert "openai/n" in s.models and "lab/n" not in s.models and "here/n" not in s.models
    assert s.models["openai/gpt-4o"].price == Price(5, 6)               # a provider's model stays
    assert any("now those of lab/m" in w for w in s.warnings)
    assert any("could belong to lab/n or here/n" in w for w in s.warnings)


def test_a_stored_config_is_priced_at_todays_prices():
    s = two_endpoints()
    old = build_run_config(s, root="lab/m", overrides={"max_cost_usd": 1.0})
    s.models["lab/m"] = ModelSettings(price=Price(7.0, 8.0))
    now = priced_now(old, s)
    assert old.prices == {"lab/m": Price(1.0, 2.0)} and now.prices == {"lab/m": Price(7.0, 8.0)}
    assert (now.root_model, now.api_base) == (old.root_model, old.api_base)   # the route is kept
    assert priced_now(old, s, {"lab/m": Price(9.0, 9.0)}).prices == {"lab/m": Price(9.0, 9.0)}
