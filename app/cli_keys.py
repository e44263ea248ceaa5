"""`rlm-studio keys set|list|delete|test PROVIDER`: API keys in the OS keychain.

The key is read from stdin (when it is not a terminal) or typed without echo;
it is never an argument (argv is visible to every process) and never printed:
`list` shows where a key comes from and its last four characters at most.
"""

from __future__ import annotations

import argparse

import getpass
import json
import sys
import time
from typing import Any
from core import providers

TEST_PROMPT = "Reply with the single word: ok"
TEST_MAX_TOKENS = 5
TEST_TIMEOUT_S = 30.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("keys", help="API keys in the OS keychain (set, list, delete, test)",
                       description="Store API keys in the OS keychain (macOS Keychain, Windows "
                                   "Credential Manager, Secret Service on Linux). Keys are never "
                                   "written to files; without a keychain, set the provider's "
                                   "environment variable instead.")
    p.set_defaults(handler=lambda args: (p.print_help(), 0)[1])
    keys = p.add_subparsers(dest="keys_command", metavar="ACTION")

    s = keys.add_parser("set", help="store a key (read from stdin, or typed without echo)")
    s.add_argument("provider", metavar="PROVIDER", help=_provider_help())
    s.set_defaults(handler=run_set)

    ls = keys.add_parser("list", help="providers that have a key (never the key itself)")
    ls.add_argument("--json", action="store_true", help="print a JSON list")
    ls.set_defaults(handler=run_list)

    d = keys.add_parser("delete", help="remove a key from the keychain")
    d.add_argument("provider", metavar="PROVIDER")
    d.set_defaults(handler=run_delete)

    t = keys.add_parser("test", help="one tiny call with the key: works, rejected or unreachable")
    t.add_argument("provider", metavar="PROVIDER")
    t.add_argument("--model", help="model to call (default: a cheap model of the provider)")
    t.add_argument("--api-base", help="base URL of an OpenAI-compatible server")
    t.add_argument("--timeout", type=float, default=TEST_TIMEOUT_S, metavar="S",
                   help=f"seconds to wait for the answer (default {TEST_TIMEOUT_S:g})")
    t.set_defaults(handler=run_test)


def _provider_help() -> str:
    # lazy: free in the command (where it runs)
    from core.providers import PROVIDERS
    names = ", ".join(p.name for p in PROVIDERS.values() if p.needs_key)
    return f"{names}, or the name of a custom endpoint from the settings"


def _err(message: str) -> None:
    print(f"rlm-studio: {message}", file=sys.stderr)


def _known_name(provider: str) -> tuple[str, Any, Any]:
    """(lower-cased name, core.providers.Provider or None, settings Endpoint or None)."""
    # lazy: +22 modules in the command (where it runs)
    from app.settings import load_settings
    name = provider.strip().lower()
    settings = load_settings()
    return name, providers.get(name), settings.endpoint(name)


# --- set -------------------------------------------------------------------------
def run_set(args: argparse.Namespace) -> int:
    # lazy: free in the command (where it runs)
    from core.providers import PROVIDERS
    # lazy: +3 modules in the command (where it runs)
    from core.secrets import KeychainUnavailable, KeyStore, mask
    name, known, endpoint = _known_name(args.provider)
    if known is None and endpoint is None:
        _err(f"unknown provider {args.provider!r}. Known: {', '.join(PROVIDERS)}; "
             "or add a custom endpoint of that name in the settings first")
        return 2
    store = KeyStore()
    if not store.usable:     # say so before asking for the key
        _err(store.advice(name, store.problem))
        return 2
    key = _read_key(known.display if known else name)
    if key is None:
        return 2
    try:
        store.set(name, key)
    except KeychainUnavailable as exc:
        _err(str(exc))
        return 2
    except ValueError as exc:
        _err(str(exc))
        return 2
    print(f"{name}: key stored in the keychain ({store.backend_name}), {mask(key)}")
    return 0


def _read_key(label: str) -> str | None:
    if sys.stdin is None:
        _err("no key given (stdin is closed)")
        return None
    if sys.stdin.isatty():
        try:
            key = getpass.getpass(f"{label} API key (input hidden): ")
        except EOFError:
            key = ""
    else:
        key = sys.stdin.read()
    key = key.strip()
    if not key:
        _err("no key given: the key was empty")
        return None
    if "\n" in key or "\r" in key:
        _err("the input has several lines; give the key alone on one line")
        return None
    return key


# --- list ------------------------------------------------------------------------
def run_list(args: argparse.Namespace) -> int:
    # lazy: +22 modules in the command (where it runs)
    from app.settings import load_settings
    # lazy: +3 modules in the command (where it runs)
    from core.secrets import KeyStore
    store = KeyStore()
    settings = load_settings()
    found = store.list(extra=[e.name for e in settings.endpoints])
    if args.json:
        print(json.dumps([{"provider": k.provider, "source": k.source, "masked": k.masked}
                          for k in found]))
    else:
        if not found:
            print("no keys (rlm-studio keys set PROVIDER stores one)")
        for k in found:
            print(f"{k.provider:<14} {k.source:<28} {k.masked}")
    if not store.usable:
        _err(f"no usable keychain ({store.problem}); only environment variables are read")
    return 0


# --- delete ----------------------------------------------------------------------
def run_delete(args: argparse.Namespace) -> int:
    # lazy: +3 modules in the command (where it runs)
    from core.secrets import KeyStore
    name = args.provider.strip().lower()
    store = KeyStore()
    if not store.usable:
        _err(f"no usable keychain ({store.problem}); nothing to delete")
        return 1
    deleted = store.delete(name)
    if deleted:
        print(f"{name}: key deleted from the keychain")
    else:
        _err(f"no key for {name} in the keychain")
    still = store.resolve(name)[1]
    if still.startswith("env:"):
        _err(f"note: the environment variable {still[4:]} still provides a key for {name}")
    return 0 if deleted else 1


# --- test ------------------------------------------------------------------------
def run_test(args: argparse.Namespace) -> int:
    # lazy: +22 modules in the command (where it runs)
    from app.settings import route_model
    # lazy: +3 modules in the command (where it runs)
    from core.secrets import KeyStore
    name, known, endpoint = _known_name(args.provider)
    model, api_base = args.model, args.api_base
    if endpoint is not None:
        model = model or (f"{endpoint.name}/{endpoint.models[0]}" if endpoint.models else None)
        if model is None:
            _err(f"endpoint {name} lists no models; pass --model")
            return 2
        routed, base = route_model(model if "/" in model else f"{endpoint.name}/{model}", [endpoint])
        model, api_base = routed, api_base or base
        needs_key = endpoint.needs_key
    elif known is not None:
        model = model or known.test_model
        if model is None:
            _err(f"{known.display} has no default test model; pass --model")
            return 2
        needs_key = known.needs_key
    else:
        if not model:
            _err(f"unknown provider {args.provider!r}; pass --model to test it anyway")
            return 2
        needs_key = True
    # The key goes where core/routing.py allows: `keys test NAME --api-base URL` is the user
    # saying that NAME's key may go to URL, unless another provider or endpoint owns that URL.
    # lazy: +1 modules in the command (where it runs)
    from core.routing import route
    store = KeyStore()
    found = route(model, api_base=api_base, endpoints=[endpoint] if endpoint else [], keys=store,
                  key_from=name)
    if found.key_owner and found.key_owner != name:
        _err(f"{api_base or model} is served by {found.key_owner}: the {name} key is never sent there")
        return 2
    model, api_base = found.model, found.api_base
    key, source = found.key, (store.resolve(name)[1] if found.key else "none")
    if needs_key and not key:
        _err(f"no key for {name}: store one with `rlm-studio keys set {name}`"
             + (f" or set {' or '.join(known.env_vars)}" if known and known.env_vars else ""))
        return 1
    started = time.monotonic()
    # lazy: +55 modules in the command (where it runs)
    import asyncio
    verdict, code = asyncio.run(_tiny_call(model, key, api_base, args.timeout))
    ms = (time.monotonic() - started) * 1000
    where = f" at {api_base}" if api_base else ""
    print(f"{name}: {verdict} ({model}{where}, key from {source}, {ms:,.0f} ms)")
    return code


async def _tiny_call(model: str, key: str | None, api_base: str | None,
                     timeout_s: float) -> tuple[str, int]:
    """One call with max_tokens 5 and no retries: ("works", 0), ("rejected (...)", 1)
    or ("unreachable (...)", 1)."""
    # lazy: +89 modules in the command (where it runs)
    from core.llm.client import ModelClient
    # lazy: +31 modules in the command (where it runs)
    from core.llm.errors import LLMError
    client = ModelClient(key_for=lambda _model: key, api_base_for=lambda _model: api_base,
                         max_retries=0, timeout_s=timeout_s)
    try:
        await client.complete(model, [{"role": "user", "content": TEST_PROMPT}],
                              max_tokens=TEST_MAX_TOKENS)
    except LLMError as exc:
        return _verdict(exc, key), 1
    return "works", 0


def _verdict(exc: Any, key: str | None) -> str:
    kind = getattr(exc, "kind", "") or ""
    status = getattr(exc, "status", None) or getattr(exc, "status_code", None)
    text = _one_line(str(exc), key)
    if kind in ("unreachable", "timeout"):
        return f"unreachable ({kind}: {text})"
    label = f"{status} {kind}" if status else kind or "error"
    return f"rejected ({label}: {text})"


def _one_line(text: str, key: str | None) -> str:
    if key:
        text = text.replace(key, "…")
    text = " ".join(text.split())
    return text[:300] + ("…" if len(text) > 300 else "")
