"""Whether an endpoint's models cost money: asked once, defaulted by address.

    endpoint_free(endpoint)          # endpoint.runs_here if the user said, else by_address(url)
    by_address(url)                  # loopback, private, link-local, *.local, localhost: True

A server on this computer or the local network (Ollama, LM Studio, llama.cpp, vLLM) is
free to call: its models are priced $0 unless the user gives one a price. A company
gateway or a proxy to a paid API is not, whatever its address says: the user marks the
endpoint "paid" (Endpoint.runs_here = False) and then gives its models prices; until
then their price is unknown, which a run with a dollar cap refuses to start on.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit


def by_address(url: str) -> bool:
    """True when `url`'s host is this computer or a private network."""
    try:
        host = (urlsplit(url).hostname or "").strip("[]").lower()
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified


def endpoint_free(endpoint: Any) -> bool:
    said = getattr(endpoint, "runs_here", None)
    return bool(said) if said is not None else by_address(str(getattr(endpoint, "base_url", "")))
