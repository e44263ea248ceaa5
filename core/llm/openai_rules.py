"""OpenAI's per-model parameter rules, as litellm 1.110.2 applies them, for the direct route.

litellm sends an "openai/NAME" call with the same wire format to any URL, but first
applies rules by NAME (whatever the URL). The direct route (core/llm/openai_http.py)
applies the same ones, by family, and takes only the families written here; any other
OpenAI model stays on litellm's route. Families, by NAME's row in litellm's price map
(core/price_map.py, read without importing litellm):

- "plain": not an OpenAI chat model of the map (a model of your own server, an unknown
  name): sent as given, as litellm does;
- "chat": an OpenAI chat model without reasoning (gpt-4o, gpt-4.1, gpt-4-turbo,
  gpt-3.5-turbo, dated variants): `reasoning_effort` is dropped;
- "o-series" (o1, o3, o3-mini, o4-mini...): `max_tokens` is sent as
  `max_completion_tokens`, `temperature` only when it is 1, `reasoning_effort` kept,
  and system messages become user messages when the map says the model takes none;
- "gpt-5" (gpt-5, gpt-5-mini, gpt-5-nano): as o-series, system messages kept;
- None: an OpenAI model whose rules in litellm are more than these (gpt-5.1 and later
  with their "none" effort, gpt-5-chat, codex, search, audio, realtime, models of the
  Responses API): the direct route does not take it.

tests/unit/llm/test_openai_rules.py sends each family through both routes to the
scripted server and compares the bodies.

OpenAI's own API: "openai/NAME" without a URL goes where litellm sends it,
`OPENAI_BASE_URL`, else `OPENAI_API_BASE`, else https://api.openai.com/v1; to that API
(and only there) the `OpenAI-Organization` and `OpenAI-Project` headers are sent when
OPENAI_ORGANIZATION (or OPENAI_ORG_ID) and OPENAI_PROJECT_ID are set.
"""

from __future__ import annotations

import os
import re
from typing import Any

OPENAI_API = "https://api.openai.com/v1"
OPENAI_HOSTS = ("api.openai.com",)
_MAYBE_OPENAI = re.compile(r"^(gpt-|o\d|chatgpt-|ft:|davinci|babbage|text-|computer-use|codex)")
_SPECIAL = ("audio", "realtime", "search", "codex", "transcribe", "tts", "image", "embedding", "deep-research")
_O_SERIES = re.compile(r"^o\d")
_VERSIONED_GPT5 = re.compile(r"^gpt-5\.\d")


def _row(name: str) -> dict[str, Any] | None:
    if not _MAYBE_OPENAI.match(name):
        return None                       # no OpenAI name: the map is not even read
    from core.price_map import model_cost
    row = model_cost().get(name)
    return row if isinstance(row, dict) and row.get("litellm_provider") == "openai" else None


def family(name: str) -> str | None:
    """The family of model NAME (without "openai/"), or None: only litellm's route takes it."""
    row = _row(name)
    if row is None:
        return "plain"
    if row.get("mode") != "chat" or any(word in name for word in _SPECIAL):
        return None
    if _O_SERIES.match(name):
        return "o-series"
    if name.startswith("gpt-5"):
        if name.startswith("gpt-5-chat") or _VERSIONED_GPT5.match(name) or row.get("supports_none_reasoning_effort"):
            return None
        return "gpt-5"
    return None if row.get("supports_reasoning") else "chat"


def apply(name: str, payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` (the body as given) with NAME's family's rules applied."""
    kind = family(name)
    if kind == "chat":
        payload.pop("reasoning_effort", None)
    elif kind in ("o-series", "gpt-5"):
        payload["max_completion_tokens"] = payload.pop("max_tokens")
        if payload.get("temperature") is not None and payload["temperature"] != 1:
            del payload["temperature"]
        if kind == "o-series" and not (_row(name) or {}).get("supports_system_messages"):
            payload["messages"] = [{**m, "role": "user"} if m.get("role") == "system" else m
                                   for m in payload["messages"]]
    return payload


def openai_api() -> str:
    """Where a call to OpenAI without a URL goes (litellm's order)."""
    return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or OPENAI_API


def is_openai(api_base: str | None) -> bool:
    """True for OpenAI's own API: no URL (litellm's default) or OpenAI's host."""
    return api_base is None or host_of(api_base) in OPENAI_HOSTS


def host_of(url: str) -> str:
    return url.split("//", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1].split(":", 1)[0].lower()


def openai_headers() -> dict[str, str]:
    """The organization and project headers for OpenAI's own API, when configured."""
    found = {}
    organization = os.environ.get("OPENAI_ORGANIZATION") or os.environ.get("OPENAI_ORG_ID")
    if organization:
        found["OpenAI-Organization"] = organization
    project = os.environ.get("OPENAI_PROJECT_ID")
    if project:
        found["OpenAI-Project"] = project
    return found
