"""The settings file: defaults, round trip, corrupt files, unknown keys, no
secrets; and build_run_config's precedence (flags win over settings)."""

from __future__ import annotations

import json

import pytest

from app.settings import (Endpoint, ModelSettings, Settings, build_run_config, default_caps,
                          load_settings, route_model, save_settings)
from core.config import Price, RunConfig
from core.paths import settings_path


def test_missing_file_gives_defaults(home):
    s = load_settings()
    assert s == Settings()
    assert s.caps == default_caps() and s.caps["max_iterations"] == RunConfig.max_iterations
    assert s.theme == "system" and s.warnings == []
    assert not settings_path().exists()


def test_round_trip_through_the_file(home):
    s = Settings(root_model="openai/gpt-4o", sub_model="lab/qwen3",
                 endpoints=[Endpoint("lab", "http://127.0.0.1:8080/v1/", ["qwen3", "phi4"], needs_key=True)],
                 models={"lab/qwen3": ModelSettings(free=True, max_tokens=16000, reasoning_effort="high",
                                                    prompt_note="Think briefly."),
                         "openai/gpt-4o": ModelSettings(price=Price(2.5, 10.0))},
                 theme="dark", ui={"splitter": [300, 700]})
    s.caps["max_depth"] = 2
    s.remember_folder("/data/a")
    s.remember_folder("/data/b")
    s.remember_folder("/data/a")
    s.remember_question("why?")
    path = save_settings(s)
    assert path == settings_path()
    assert list(path.parent.glob("*.tmp")) == []             # the temp file was renamed away
    loaded = load_settings()
    s.endpoints[0].base_url = "http://127.0.0.1:8080/v1"      # trailing slash dropped on load
    assert loaded == s
    assert loaded.recent_folders == ["/data/a", "/data/b"]
    assert json.loads(path.read_text())["version"] == 1


def test_corrupt_file_is_kept_as_bad_and_defaults_are_used(home, caplog):
    path = settings_path()
    path.write_text('{"root_model": "openai/gpt-4o", ', encoding="utf-8")
    s = load_settings()
    assert s.root_model == "" and s.endpoints == []
    assert len(s.warnings) == 1 and "settings.json.bad" in s.warnings[0]
    assert path.with_name("settings.json.bad").read_text().startswith('{"root_model"')
    assert not path.exists()
    assert "could not be read" in caplog.text
    save_settings(s)                          # the next save writes a good file again
    assert load_settings().warnings == []


def test_top_level_not_an_object_is_corrupt(home):
    settings_path().write_text("[1, 2]", encoding="utf-8")
    assert load_settings().warnings and settings_path().with_name("settings.json.bad").exists()


def test_unknown_keys_are_preserved(home):
    settings_path().write_text(json.dumps({
        "root_model": "openai/gpt-4o-mini", "future_feature": {"a": [1, 2]}, "window": "big",
        "caps": {"max_depth": 2, "later_cap": 5}}), encoding="utf-8")
    s = load_settings()
    assert s.root_model == "openai/gpt-4o-mini"
    assert s.extra == {"future_feature": {"a": [1, 2]}, "window": "big"}
    s.theme = "light"
    save_settings(s)
    data = json.loads(settings_path().read_text())
    assert data["future_feature"] == {"a": [1, 2]} and data["window"] == "big"
    assert data["caps"]["later_cap"] == 5 and data["theme"] == "light"


def test_bad_entries_are_skipped_with_a_warning(home):
    settings_path().write_text(json.dumps({
        "endpoints": [{"name": "ok", "base_url": "http://x:1/v1", "models": ["m"]},
                      {"name": "Bad Name", "base_url": "http://x:1/v1"},
                      {"name": "noscheme", "base_url": "x:1/v1"}, "junk"],
        "models": {"a": {"price": [1, 2]}, "b": {"price": "cheap"}, "c": {"reasoning_effort": "max"}},
        "caps": {"max_depth": "2", "max_iterations": 5.0, "max_cost_usd": None, "concurrency": None},
        "theme": "purple"}), encoding="utf-8")
    s = load_settings()
    assert [e.name for e in s.endpoints] == ["ok"]
    assert list(s.models) == ["a"] and s.models["a"].price == Price(1.0, 2.0)
    assert s.theme == "system"
    assert s.caps["max_depth"] == 1 and s.caps["max_iterations"] == 5 and s.caps["max_cost_usd"] is None
    assert s.caps["concurrency"] == RunConfig.concurrency
    assert len(s.warnings) == 7
    build_run_config(s, root="openai/gpt-4o")        # what is left makes a valid config


def test_keys_are_never_stored_in_settings(home, store):
    """A key in the keychain never reaches the settings file, and fields that
    look like secrets are dropped on save and on load."""
    secret = "sk-never-in-settings-5555"
    store.set("openai", secret)
    s = Settings(root_model="openai/gpt-4o", ui={"api_key": secret, "nested": {"password": secret}})
    s.extra["apiKey"] = secret
    s.endpoints.append(Endpoint("lab", "http://127.0.0.1:1/v1", ["m"], needs_key=True))
    save_settings(s)
    text = settings_path().read_text()
    assert secret not in text
    assert "api_key" not in text and "password" not in text
    assert not any(f.name in ("api_key", "key") for f in __import__("dataclasses").fields(Settings))
    settings_path().write_text(json.dumps({"root_model": "x", "api_key": secret,
                                           "endpoints": [{"name": "e", "base_url": "http://h/v1",
                                                          "key": secret}]}))
    loaded = load_settings()
    assert secret not in repr(loaded) and any("keychain" in w for w in loaded.warnings)


# --- build_run_config ------------------------------------------------------------------
def _settings() -> Settings:
    s = Settings(root_model="openai/gpt-4o", sub_model="openai/gpt-4o-mini",
                 endpoints=[Endpoint("lab", "http://127.0.0.1:8080/v1", ["qwen3"]),
                            Endpoint("box", "http://127.0.0.1:9090/v1", ["phi4"])],
                 models={"openai/gpt-4o": ModelSettings(max_tokens=12000, prompt_note="Be terse."),
                         "openai/gpt-4o-mini": ModelSettings(price=Price(0.1, 0.2), max_tokens=3000,
                                                             reasoning_effort="low"),
                         "lab/qwen3": ModelSettings(free=True, max_tokens=20000, reasoning_effort="high")})
    s.caps.update(max_depth=2, max_iterations=7, max_cost_usd=1.5, concurrency=4)
    return s


def test_settings_alone_make_the_config():
    cfg = build_run_config(_settings())
    assert (cfg.root_model, cfg.sub_model, cfg.api_base, cfg.sub_api_base) == \
        ("openai/gpt-4o", "openai/gpt-4o-mini", None, None)
    assert (cfg.max_depth, cfg.max_iterations, cfg.max_cost_usd, cfg.concurrency) == (2, 7, 1.5, 4)
    assert cfg.max_sub_calls == RunConfig.max_sub_calls
    assert (cfg.root_max_tokens, cfg.sub_max_tokens) == (12000, 3000)
    # the prices the run uses, by the names the user picked (the run's models only: another
    # endpoint's model of the same name never prices this run's)
    assert cfg.prices == {"openai/gpt-4o-mini": Price(0.1, 0.2), "openai/gpt-4o": Price(2.5, 10.0)}
    assert [(s.name, s.price_from) for s in cfg.specs] == [("openai/gpt-4o", "price map"),
                                                          ("openai/gpt-4o-mini", "yours")]
    assert cfg.reasoning_effort == {"openai/gpt-4o-mini": "low"}
    assert cfg.prompt_notes == {"openai/gpt-4o": "Be terse."}


def test_flags_win_over_settings():
    cfg = build_run_config(_settings(), root="anthropic/claude-haiku-4-5", sub="gpt-4o-mini",
                           overrides={"max_depth": 1, "max_cost_usd": 0.25, "sub_max_tokens": 999,
                                      "prices": {"gpt-4o-mini": Price(9, 9),
                                                 "lab/qwen3": Price(1, 1)}})
    assert cfg.root_model == "anthropic/claude-haiku-4-5" and cfg.sub_model == "gpt-4o-mini"
    assert (cfg.max_depth, cfg.max_cost_usd, cfg.max_iterations) == (1, 0.25, 7)
    assert cfg.sub_max_tokens == 999 and cfg.root_max_tokens == RunConfig.root_max_tokens
    assert cfg.prices["gpt-4o-mini"] == Price(9, 9)       # the flag wins over the price map
    assert "lab/qwen3" not in cfg.prices and "openai/qwen3" not in cfg.prices   # not in this run


def test_sub_defaults_to_root_and_root_is_required():
    s = Settings(root_model="openai/gpt-4o")
    assert build_run_config(s).sub_model == "openai/gpt-4o"
    with pytest.raises(ValueError, match="no root model"):
        build_run_config(Settings())
    with pytest.raises(ValueError, match="unknown run settings"):
        build_run_config(s, overrides={"max_detph": 2})
    s.caps["max_depth"] = 9
    with pytest.raises(ValueError, match="max_depth"):
        build_run_config(s)


def test_endpoint_models_are_routed_with_their_url():
    s = _settings()
    cfg = build_run_config(s, root="openai/gpt-4o", sub="lab/qwen3")
    assert cfg.sub_model == "openai/qwen3"
    assert cfg.api_base is None and cfg.sub_api_base == "http://127.0.0.1:8080/v1"
    assert cfg.api_base_for("openai/qwen3") == "http://127.0.0.1:8080/v1"
    assert cfg.api_base_for("openai/gpt-4o") is None
    assert cfg.sub_max_tokens == 20000

    both = build_run_config(s, root="lab/qwen3", sub="qwen3")       # a bare name an endpoint lists
    assert (both.root_model, both.sub_model) == ("openai/qwen3", "openai/qwen3")
    assert both.api_base == "http://127.0.0.1:8080/v1" and both.sub_api_base is None

    two = build_run_config(s, root="box/phi4", sub="lab/qwen3")
    assert two.api_base_for("openai/phi4") == "http://127.0.0.1:9090/v1"
    assert two.api_base_for("openai/qwen3") == "http://127.0.0.1:8080/v1"

    with pytest.raises(ValueError, match="sub model"):               # would send gpt-4o-mini to the lab
        build_run_config(s, root="lab/qwen3", sub="openai/gpt-4o-mini")
    flagged = build_run_config(s, root="lab/qwen3", sub="openai/gpt-4o-mini",
                               overrides={"sub_api_base": "https://api.openai.com/v1"})
    assert flagged.api_base_for("openai/gpt-4o-mini") == "https://api.openai.com/v1"


def test_api_base_flag_serves_both_models():
    cfg = build_run_config(_settings(), root="openai/llama", sub="openai/tiny",
                           api_base="http://127.0.0.1:5000/v1")
    assert cfg.api_base == "http://127.0.0.1:5000/v1" and cfg.sub_api_base is None
    assert cfg.api_base_for("openai/tiny") == "http://127.0.0.1:5000/v1"


def test_route_model_leaves_cloud_models_alone():
    endpoints = _settings().endpoints
    assert route_model("openai/gpt-4o", endpoints) == ("openai/gpt-4o", None)
    assert route_model("gpt-4o", endpoints) == ("gpt-4o", None)
    assert route_model("box/phi4", endpoints) == ("openai/phi4", "http://127.0.0.1:9090/v1")
