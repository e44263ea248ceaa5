"""OpenAI's per-model parameter rules on the direct route (core/llm/openai_rules.py): for each
family, the body the direct route sends is the one litellm sends for the same call, at a
server of one's own and at OpenAI's own API (the scripted server posing as it through
OPENAI_BASE_URL, as litellm reads it: no internet)."""

import pytest

from core.llm import openai_rules
from core.llm.client import ModelClient, transport_for
from core.llm.litellm_route import LITELLM
from core.llm import openai_http

MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi."}]
FAMILIES = {
    "plain": ["qwen3", "o1-mini"],                      # not OpenAI chat models of the map: as given
    "chat": ["gpt-4o-mini", "gpt-4.1", "gpt-3.5-turbo", "gpt-4o-2024-08-06"],
    "o-series": ["o1", "o3-mini", "o4-mini", "o4-mini-2025-04-16"],
    "gpt-5": ["gpt-5", "gpt-5-mini", "gpt-5-nano"],
}
LITELLM_ONLY = ["gpt-5.1", "gpt-5-chat-latest", "gpt-4o-search-preview", "gpt-5-codex", "o3-pro"]
NAMES = [(family, name) for family, names in FAMILIES.items() for name in names]
CASES = [(where, family, name) for where in ("own server", "OpenAI") for family, name in NAMES
         if not (where == "OpenAI" and name == "qwen3")]          # qwen3 is no OpenAI model


def test_each_name_has_its_family():
    assert {name: openai_rules.family(name) for _, name in NAMES} == {name: f for f, name in NAMES}
    assert {name: openai_rules.family(name) for name in LITELLM_ONLY} == dict.fromkeys(LITELLM_ONLY)


@pytest.mark.parametrize("name", LITELLM_ONLY)
def test_a_model_whose_rules_only_litellm_knows_stays_on_its_route(name, monkeypatch):
    monkeypatch.delenv("RLMSTUDIO_DESKTOP_HTTP", raising=False)
    assert transport_for(f"openai/{name}", None) is LITELLM
    assert transport_for(f"openai/{name}", "http://127.0.0.1:8000/v1") is LITELLM


async def _both(server, monkeypatch, model, api_base, **kw):
    """The same call through each route; the two requests as the server saw them."""
    client = ModelClient(key_for=lambda m: "sk-test", api_base_for=lambda m: api_base, max_retries=0)
    for forced in ("", "litellm"):
        monkeypatch.setenv("RLMSTUDIO_DESKTOP_HTTP", forced)
        assert (transport_for(model, api_base) is openai_http.DIRECT) == (forced == "")
        await client.complete(model, MESSAGES, max_tokens=64, **kw)
    monkeypatch.delenv("RLMSTUDIO_DESKTOP_HTTP")
    return server.history[-2:]


@pytest.mark.parametrize("where, family, name", CASES)
@pytest.mark.parametrize("kw", [dict(temperature=0.3, reasoning_effort="low"), dict(temperature=1.0),
                                dict(stream=True, temperature=0.3, reasoning_effort="high"), {}], ids=repr)
async def test_the_body_is_the_one_litellm_sends(openai_server, monkeypatch, family, name, where, kw):
    openai_server.script(name, fn=lambda r: "ok")
    if where == "OpenAI":
        monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
        direct, via_litellm = await _both(openai_server, monkeypatch, f"openai/{name}", None, **kw)
    else:
        direct, via_litellm = await _both(openai_server, monkeypatch, f"openai/{name}", openai_server.url, **kw)
    assert direct.headers["user-agent"] == "rlm-studio" and via_litellm.headers["user-agent"] != "rlm-studio"
    assert direct.body == via_litellm.body
    if family in ("o-series", "gpt-5"):
        assert "max_completion_tokens" in direct.body and "max_tokens" not in direct.body


async def test_a_bare_openai_name_goes_to_openai_on_the_direct_route(openai_server, monkeypatch):
    openai_server.script("gpt-4o-mini", fn=lambda r: "ok")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    direct, via_litellm = await _both(openai_server, monkeypatch, "gpt-4o-mini", None, temperature=0.2)
    assert direct.body == via_litellm.body and direct.body["model"] == "gpt-4o-mini"


async def test_openais_organization_and_project_headers(openai_server, monkeypatch):
    openai_server.script("gpt-4o-mini", fn=lambda r: "ok")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    monkeypatch.setenv("OPENAI_ORGANIZATION", "org-123")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-9")
    direct, via_litellm = await _both(openai_server, monkeypatch, "openai/gpt-4o-mini", None)
    for seen in (direct, via_litellm):
        assert (seen.headers["openai-organization"], seen.headers["openai-project"]) == ("org-123", "proj-9")
    # a server of one's own is not told them on the direct route
    await ModelClient(key_for=lambda m: "k", api_base_for=lambda m: openai_server.url).complete(
        "openai/gpt-4o-mini", MESSAGES, max_tokens=8)
    assert "openai-organization" not in openai_server.history[-1].headers
