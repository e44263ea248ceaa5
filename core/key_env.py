"""Provider keys given as environment variables, and moving them out of os.environ.

    moved = take_keys_from_environment()   # names moved; os.environ no longer has them
    env_key("OPENAI_API_KEY")              # still found: from the environment or this memory

core/engine_process.py calls take_keys_from_environment() first thing, so no helper process
(multiprocessing's forkserver and resource tracker, the ingest workers, the REPL worker)
inherits a key; core/secrets.py's KeyStore.resolve reads keys back through env_key().
Light on purpose (no keyring import): the window calls it before its first paint.
"""

from __future__ import annotations

import os
import re
from typing import Any

from core import providers
from core.identity import ENV_PREFIX, OLD_ENV_PREFIX, deprecated

# Keys that came from environment variables, after take_keys_from_environment(): name -> value.
_MEMORY: dict[str, str] = {}
# An endpoint's key: RLMSTUDIO_DESKTOP_<NAME>_API_KEY, or the deprecated RLM_STUDIO_<NAME>_API_KEY.
_ENDPOINT_ENV = re.compile(rf"^({ENV_PREFIX}|{OLD_ENV_PREFIX})[A-Z0-9_]+_API_KEY$")


def key_env_names(environ: Any = None) -> list[str]:
    """Every environment variable that holds a provider's or endpoint's key and is set."""
    environ = os.environ if environ is None else environ
    names = [n for p in providers.PROVIDERS.values() for n in p.env_vars]
    names += [n for n in environ if _ENDPOINT_ENV.match(n)]
    return [n for n in dict.fromkeys(names) if n in environ]


def take_keys_from_environment() -> list[str]:
    """Move every key variable out of os.environ into this process's memory; returns the
    names moved. Child processes started afterwards inherit none of them."""
    moved = []
    for name in key_env_names():
        value = os.environ.pop(name, "")
        if value.strip():
            _MEMORY[name] = value.strip()
        moved.append(name)
    return moved


def env_key(name: str) -> str:
    """The key in environment variable `name` (set now, or moved out earlier), or ""."""
    value = os.environ.get(name, "").strip() or _MEMORY.get(name, "")
    if value and name.startswith(OLD_ENV_PREFIX):
        deprecated(name, ENV_PREFIX + name[len(OLD_ENV_PREFIX):])
    return value
