"""The routing table: which key goes to which URL (core/routing.py), with a real
file-backed keyring and real environment variables."""

from __future__ import annotations

import pytest

from app.settings import Endpoint, Settings, build_run_config, load_settings, save_settings, ModelSettings
from core.config import RunConfig
from core.routing import ModelNotAllowed, Route, RunRoutes, route, sub_call_model

KEYS = {"openai": "sk-openai-000000000001", "groq": "gsk-groq-00000000002", "lab": "lab-key-0000000003",
        "anthropic": "sk-ant-0000000000004"}
ENDPOINTS = [Endpoint("lab", "http://10.0.0.5:8000/v1", ["qwen3"], needs_key=True),
             Endpoint("local", "http://127.0.0.1:11434/v1", ["llama3.1:8b"], needs_key=False)]
LAB, LOCAL, ADHOC = "http://10.0.0.5:8000/v1", "http://127.0.0.1:11434/v1", "http://127.0.0.1:9/v1"


@pytest.fixture
def keys(store, monkeypatch):
    for name, key in KEYS.items():
        store.set(name, key)
    monkeypatch.setenv("MISTRAL_API_KEY", "mistral-env-00000005")
    return store


TABLE = [
    # (model, api_base, key_from) -> (model sent, URL, whose key)
    (("gpt-4o-mini", None, None), ("gpt-4o-mini", None, "openai")),
    (("openai/gpt-4o", None, None), ("openai/gpt-4o", None, "openai")),
    (("groq/llama-3.3-70b-versatile", None, None), ("groq/llama-3.3-70b-versatile", None, "groq")),
    (("mistral/mistral-small-latest", None, None), ("mistral/mistral-small-latest", None, "mistral")),
    (("anthropic/claude-haiku-4-5", None, None), ("anthropic/claude-haiku-4-5", None, "anthropic")),
    (("lab/qwen3", None, None), ("openai/qwen3", LAB, "lab")),               # an endpoint's model
    (("qwen3", None, None), ("openai/qwen3", LAB, "lab")),                   # a bare name it lists
    (("local/llama3.1:8b", None, None), ("openai/llama3.1:8b", LOCAL, "")),  # needs no key: none
    (("openai/qwen3", LAB, None), ("openai/qwen3", LAB, "lab")),             # routed: the URL decides
    (("anthropic/claude-haiku-4-5", LAB + "/", None), ("anthropic/claude-haiku-4-5", LAB + "/", "lab")),
    (("openai/anything", LOCAL, None), ("openai/anything", LOCAL, "")),
    (("openai/x", ADHOC, None), ("openai/x", ADHOC, "")),                    # ad-hoc URL: no key
    (("groq/llama-3", ADHOC, None), ("groq/llama-3", ADHOC, "")),            # never Groq's key there
    (("openai/x", ADHOC, "openai"), ("openai/x", ADHOC, "openai")),          # unless the user says so
    (("openai/x", LAB, "openai"), ("openai/x", LAB, "lab")),                 # an owned URL: its owner's
    (("openai/llama", "https://api.groq.com/openai/v1", None),
     ("openai/llama", "https://api.groq.com/openai/v1", "groq")),            # Groq's own host
    (("openai/x", "HTTPS://API.OPENAI.COM/v1/", None), ("openai/x", "HTTPS://API.OPENAI.COM/v1/", "openai")),
    (("openai/x", "http://api.openai.com/v1", None), ("openai/x", "http://api.openai.com/v1", "")),
    (("openai/x", "https://api.openai.com.evil.example/v1", None),
     ("openai/x", "https://api.openai.com.evil.example/v1", "")),
    (("openai/x", "https://api.openai.com:8443/v1", None), ("openai/x", "https://api.openai.com:8443/v1", "")),
    (("ollama/llama3", None, None), ("ollama/llama3", None, "")),            # litellm's Ollama: no key
    (("no-such-provider-model", None, None), ("no-such-provider-model", None, "")),
]


@pytest.mark.parametrize("given,expected", TABLE, ids=[f"{g[0]}@{g[1]}+{g[2]}" for g, _ in TABLE])
def test_the_url_decides_the_key(keys, given, expected):
    model, api_base, key_from = given
    found = route(model, api_base=api_base, endpoints=ENDPOINTS, keys=keys, key_from=key_from)
    owner = expected[2]
    want_key = KEYS.get(owner) or ("mistral-env-00000005" if owner == "mistral" else None)
    assert (found.model, found.api_base, found.key_owner, found.key) == (*expected, want_key)


def test_a_route_never_prints_its_key(keys):
    found = route("openai/gpt-4o", keys=keys)
    assert KEYS["openai"] not in repr(found) and KEYS["openai"] not in str(found) and "<key>" in repr(found)
    assert isinstance(found, Route)


def test_keys_from_the_environment_follow_the_same_rule(store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-env-0000006")
    assert route("openai/gpt-4o", keys=store).key == "sk-openai-env-0000006"
    assert route("openai/gpt-4o", api_base=ADHOC, keys=store).key is None


def run_config(**kw) -> RunConfig:
    base = dict(root_model="openai/root", sub_model="openai/sub", api_base=ADHOC)
    base.update(kw)
    return RunConfig(**base)


def test_sub_calls_may_name_only_the_runs_models_and_the_enabled_ones():
    cfg = run_config(sub_call_models={"lab/qwen3": ("openai/qwen3", LAB), "groq/llama-3": ("groq/llama-3", None)})
    assert sub_call_model(None, cfg) == "openai/sub"
    assert sub_call_model("openai/root", cfg) == "openai/root"
    assert sub_call_model("lab/qwen3", cfg) == "openai/qwen3"
    assert sub_call_model("groq/llama-3", cfg) == "groq/llama-3"
    with pytest.raises(ModelNotAllowed) as refused:
        sub_call_model("mistral/mistral-large", cfg)
    assert "allowed: openai/sub, openai/root, lab/qwen3, groq/llama-3" in str(refused.value)


def test_the_runs_api_base_serves_only_its_root_and_sub(keys):
    cfg = run_config(sub_call_models={"lab/qwen3": ("openai/qwen3", LAB), "groq/llama-3": ("groq/llama-3", None)},
                     api_key_from="openai")
    routes = RunRoutes(cfg, ENDPOINTS, keys)
    assert (routes.api_base_for("openai/root"), routes.key_for("openai/root")) == (ADHOC, KEYS["openai"])
    assert (routes.api_base_for("openai/qwen3"), routes.key_for("openai/qwen3")) == (LAB, KEYS["lab"])
    assert (routes.api_base_for("groq/llama-3"), routes.key_for("groq/llama-3")) == (None, KEYS["groq"])
    # a model the run does not know goes nowhere near the run's URL
    assert routes.api_base_for("openai/gpt-4o") is None
    assert RunConfig.from_public_dict(cfg.public_dict()) == cfg


def test_settings_carry_the_sub_call_models_into_the_run(home):
    settings = Settings(endpoints=ENDPOINTS, sub_call_models=["lab/qwen3", "groq/llama-3", "lab/qwen3"],
                        models={"lab/qwen3": ModelSettings(context_window=32_000)})
    save_settings(settings)
    loaded = load_settings()
    assert loaded.sub_call_models == ["lab/qwen3", "groq/llama-3"]
    assert loaded.models["lab/qwen3"].context_window == 32_000
    cfg = build_run_config(loaded, root="local/llama3.1:8b")
    assert cfg.sub_call_models == {"local/llama3.1:8b": ("openai/llama3.1:8b", LOCAL),
                                   "lab/qwen3": ("openai/qwen3", LAB), "groq/llama-3": ("groq/llama-3", None)}
    assert cfg.context_windows == {"openai/qwen3": 32_000}
    assert sub_call_model("local/llama3.1:8b", cfg) == cfg.sub_model == "openai/llama3.1:8b"


def test_an_enabled_model_that_collides_with_the_runs_own_is_refused_at_start():
    settings = Settings(endpoints=ENDPOINTS, sub_call_models=["openai/qwen3"])
    with pytest.raises(ValueError, match="same name as a model of this run"):
        build_run_config(settings, root="lab/qwen3")


def test_a_bad_context_window_in_the_settings_is_skipped_with_a_warning(home):
    from app.settings import settings_from_dict
    s = settings_from_dict({"models": {"m": {"context_window": -5}, "n": {"context_window": 8000}}})
    assert "m" not in s.models and s.models["n"].context_window == 8000
    assert any("context_window" in w for w in s.warnings)


def test_keys_test_never_sends_a_key_to_a_url_another_provider_owns(cli_here):
    from core.secrets import KeyStore
    KeyStore().set("openai", KEYS["openai"])
    code, out, err = cli_here("keys", "test", "openai", "--model", "openai/x",
                              "--api-base", "https://api.groq.com/openai/v1")
    assert code == 2 and out == ""
    assert "https://api.groq.com/openai/v1 is served by groq: the openai key is never sent there" in err


def test_one_block_per_turn_is_a_per_model_setting_carried_into_the_run(home):
    settings = Settings(endpoints=ENDPOINTS, models={"local/llama3.1:8b": ModelSettings(one_block_per_turn=True)})
    save_settings(settings)
    loaded = load_settings()
    assert loaded.models["local/llama3.1:8b"].one_block_per_turn is True
    cfg = build_run_config(loaded, root="local/llama3.1:8b", sub="lab/qwen3")
    assert cfg.one_block_per_turn == {"openai/llama3.1:8b": True}      # off for every other model
    assert build_run_config(Settings(endpoints=ENDPOINTS), root="local/llama3.1:8b").one_block_per_turn == {}
    # Off said in so many words is kept (a small model's default is on); not set stays not set.
    save_settings(Settings(endpoints=ENDPOINTS, models={"local/qwen2.5:1.5b": ModelSettings(one_block_per_turn=False),
                                                        "local/qwen2.5:3b": ModelSettings(free=True)}))
    loaded = load_settings()
    assert loaded.models["local/qwen2.5:1.5b"].one_block_per_turn is False
    assert loaded.models["local/qwen2.5:3b"].one_block_per_turn is None
    assert build_run_config(loaded, root="local/qwen2.5:1.5b", sub="local/qwen2.5:3b").one_block_per_turn == \
        {"openai/qwen2.5:1.5b": False}
