"""Model providers: names, environment variables, and which provider serves a model.

A provider is what owns an API key: one keychain entry per provider (see
core/secrets.py). Custom OpenAI-compatible endpoints (Ollama, LM Studio,
llama.cpp, vLLM, ...) are providers too, named by the user in the settings.

    provider_for_model("anthropic/claude-haiku-4-5", [])  -> "anthropic"
    provider_for_model("gpt-4o", [])                      -> "openai"
    provider_for_model("lab/qwen3", [Endpoint("lab", ...)]) -> "lab"
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class Provider:
    name: str                    # keychain entry name, lower case
    display: str
    env_vars: tuple[str, ...]    # read in this order when the keychain has no key
    test_model: str | None       # a cheap chat model for `keys test`
    needs_key: bool = True
    prefixes: tuple[str, ...] = ()   # litellm model prefixes served by this provider
    hosts: tuple[str, ...] = ()      # the provider's own API hosts (https): its key may go there


PROVIDERS: dict[str, Provider] = {p.name: p for p in (
    Provider("openai", "OpenAI", ("OPENAI_API_KEY",), "gpt-4o-mini",
             prefixes=("openai", "text-completion-openai", "chatgpt"), hosts=("api.openai.com",)),
    Provider("anthropic", "Anthropic", ("ANTHROPIC_API_KEY",), "anthropic/claude-haiku-4-5",
             prefixes=("anthropic", "anthropic_text"), hosts=("api.anthropic.com",)),
    Provider("gemini", "Google Gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
             "gemini/gemini-2.5-flash-lite", prefixes=("gemini",),
             hosts=("generativelanguage.googleapis.com",)),
    Provider("openrouter", "OpenRouter", ("OPENROUTER_API_KEY",), "openrouter/openai/gpt-4o-mini",
             prefixes=("openrouter",), hosts=("openrouter.ai",)),
    Provider("groq", "Groq", ("GROQ_API_KEY",), "groq/openai/gpt-oss-20b", prefixes=("groq",),
             hosts=("api.groq.com",)),
    Provider("mistral", "Mistral", ("MISTRAL_API_KEY",), "mistral/mistral-small-latest",
             prefixes=("mistral",), hosts=("api.mistral.ai", "codestral.mistral.ai")),
    Provider("deepseek", "DeepSeek", ("DEEPSEEK_API_KEY",), "deepseek/deepseek-chat",
             prefixes=("deepseek",), hosts=("api.deepseek.com",)),
    Provider("together", "Together AI", ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
             "together_ai/openai/gpt-oss-20b", prefixes=("together_ai", "together"),
             hosts=("api.together.xyz", "api.together.ai")),
    Provider("azure", "Azure OpenAI", ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"), None,
             prefixes=("azure", "azure_text", "azure_ai")),
    Provider("xai", "xAI", ("XAI_API_KEY",), "xai/grok-code-fast-1", prefixes=("xai",), hosts=("api.x.ai",)),
    Provider("cohere", "Cohere", ("COHERE_API_KEY", "CO_API_KEY"), "cohere_chat/command-r7b-12-2024",
             prefixes=("cohere", "cohere_chat"), hosts=("api.cohere.ai", "api.cohere.com")),
    Provider("fireworks", "Fireworks AI", ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
             "fireworks_ai/accounts/fireworks/models/gpt-oss-20b", prefixes=("fireworks_ai", "fireworks"),
             hosts=("api.fireworks.ai",)),
    Provider("perplexity", "Perplexity", ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"), "perplexity/sonar",
             prefixes=("perplexity",), hosts=("api.perplexity.ai",)),
    Provider("ollama", "Ollama (local)", (), None, needs_key=False,
             prefixes=("ollama", "ollama_chat")),
)}

_BY_PREFIX = {prefix: p.name for p in PROVIDERS.values() for prefix in p.prefixes}

# Bare model names (no "provider/" prefix) that litellm routes by their look.
_BARE_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"^(gpt-|chatgpt-|o[1-9](-|$)|text-|davinci|babbage|ft:gpt|codex-)", "openai"),
    (r"^claude", "anthropic"),
    (r"^(gemini|gemma)", "gemini"),
    (r"^(command|c4ai-aya)", "cohere"),
    (r"^(mistral|ministral|codestral|open-mistral|open-mixtral|magistral|devstral|pixtral)", "mistral"),
    (r"^deepseek", "deepseek"),
    (r"^grok", "xai"),
    (r"^sonar", "perplexity"),
)

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def is_valid_name(name: str) -> bool:
    """Provider and endpoint names: lower case letters, digits, '.', '_' and '-'."""
    return bool(_NAME_RE.match(name))


def get(name: str) -> Provider | None:
    return PROVIDERS.get(name.lower())


def env_vars(provider: str) -> tuple[str, ...]:
    """Environment variables that may hold the key of `provider`, in the order read (a custom
    endpoint `lab` reads RLMSTUDIO_DESKTOP_LAB_API_KEY, then the deprecated RLM_STUDIO_LAB_API_KEY)."""
    known = get(provider)
    if known is not None:
        return known.env_vars
    from core.identity import ENV_PREFIX, OLD_ENV_PREFIX
    tail = re.sub(r"[^A-Z0-9]", "_", provider.upper()) + "_API_KEY"
    return (ENV_PREFIX + tail, OLD_ENV_PREFIX + tail)


def endpoint_names(custom_endpoints: Iterable[Any] | None) -> list[str]:
    """Names of custom endpoints given as Endpoint objects, dicts or plain names."""
    names = []
    for endpoint in custom_endpoints or ():
        if isinstance(endpoint, str):
            names.append(endpoint)
        elif isinstance(endpoint, dict):
            names.append(str(endpoint.get("name", "")))
        else:
            names.append(str(getattr(endpoint, "name", "")))
    return [n for n in names if n]


def provider_for_host(host: str) -> str:
    """The provider whose own API host `host` is ("api.groq.com" -> "groq"), "" when none."""
    host = host.lower().rstrip(".")
    for provider in PROVIDERS.values():
        if host in provider.hosts:
            return provider.name
    return ""


def provider_for_prefix(litellm_provider: str) -> str:
    """Our name for one of litellm's provider names ("together_ai" -> "together");
    litellm's own name when we have none, "" for ""."""
    return _BY_PREFIX.get(litellm_provider, litellm_provider)


def provider_for_model(model: str, custom_endpoints: Iterable[Any] | None = ()) -> str:
    """The provider whose key a call to `model` needs; "" when nobody knows.

    A custom endpoint's name as prefix wins over litellm's provider names, so an
    endpoint called "ollama" serves "ollama/llama3.1"."""
    model = model.strip()
    prefix, sep, rest = model.partition("/")
    if sep:
        if prefix in endpoint_names(custom_endpoints):
            return prefix
        if prefix in _BY_PREFIX:
            return _BY_PREFIX[prefix]
        return prefix.lower()
    for pattern, provider in _BARE_PATTERNS:
        if re.match(pattern, model, re.IGNORECASE):
            return provider
    return _provider_from_litellm(model)


def _provider_from_litellm(model: str) -> str:
    """Bare names we do not recognise: litellm's price map knows who serves them
    (read from its file, core/price_map.py: never pay litellm's import for this)."""
    from core.price_map import model_cost
    entry = model_cost().get(model)
    owner = entry.get("litellm_provider", "") if isinstance(entry, dict) else ""
    return provider_for_prefix(owner)
