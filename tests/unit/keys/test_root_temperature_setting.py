"""A model's root temperature (issue 25) is a per-model setting in settings.json, carried into
the run; not set, the run gets the default for the model's size (core/local_defaults.py)."""

from __future__ import annotations

import pytest

from app.settings import Endpoint, ModelSettings, Settings, build_run_config, load_settings, save_settings, \
    settings_from_dict
from core.local_defaults import root_temperature

ENDPOINTS = [Endpoint("local", "http://127.0.0.1:11434/v1", ["qwen2.5:1.5b", "llama3.1:8b"], needs_key=False)]


def test_a_models_temperature_is_saved_and_reaches_the_run_config(home):
    save_settings(Settings(endpoints=ENDPOINTS, models={"local/qwen2.5:1.5b": ModelSettings(temperature=0.6),
                                                        "local/llama3.1:8b": ModelSettings(free=True)}))
    loaded = load_settings()
    assert loaded.models["local/qwen2.5:1.5b"].temperature == 0.6
    assert loaded.models["local/llama3.1:8b"].temperature is None
    cfg = build_run_config(loaded, root="local/qwen2.5:1.5b", sub="local/llama3.1:8b")
    assert cfg.root_temperature == {"openai/qwen2.5:1.5b": 0.6}
    assert root_temperature(cfg.root_model, cfg.root_temperature) == 0.6
    plain = build_run_config(Settings(endpoints=ENDPOINTS), root="local/qwen2.5:1.5b")
    assert plain.root_temperature == {}
    assert root_temperature(plain.root_model, plain.root_temperature) == 0.2      # the small default
    assert root_temperature("openai/llama3.1:8b", {}) is None                    # the provider's own


@pytest.mark.parametrize("bad", [-0.1, 2.5, "hot", True])
def test_a_bad_temperature_is_refused_with_its_reason(bad, caplog):
    settings = settings_from_dict({"models": {"m": {"temperature": bad}, "n": {"temperature": 0}}})
    assert "m" not in settings.models and settings.models["n"].temperature == 0.0   # the rest is kept
    assert "temperature must be a number from 0 to 2" in caplog.text
